"""Domain errors: each has a machine-readable code, an HTTP status and a sentence a person understands.
The messages are constants so tests and clients can rely on them."""

from __future__ import annotations


class DomainError(Exception):
    code = "domain_error"
    status = 400
    message = "The request could not be applied."

    def __init__(self, message: str | None = None, **extra):
        self.message = message or self.message
        self.extra = extra
        super().__init__(self.message)

    def as_dict(self) -> dict:
        return {"error": self.code, "message": self.message, **self.extra}


class InvalidInput(DomainError):
    code = "invalid_input"
    status = 400


class PermissionDenied(DomainError):
    code = "permission_denied"
    status = 403
    message = "You do not have a grant that allows this here."


class NotFound(DomainError):
    code = "not_found"
    status = 404
    message = "No such object in the scopes you can see."


class Conflict(DomainError):
    code = "conflict"
    status = 409


class KeyRevisionConflict(Conflict):
    code = "key_revision_conflict"
    message = "This key already has a different text at this revision; write a new revision or supersede."


class ActiveKeyExists(Conflict):
    code = "active_key_exists"
    message = (
        "This key already has an active memory in this scope; supersede it instead of writing a second one."
    )


class TurnAlreadyStored(Conflict):
    code = "turn_already_stored"
    message = (
        "This turn (the same scope, session and ref) is already stored with another text; send a new ref "
        "for a new turn."
    )


class InvalidTransition(Conflict):
    code = "invalid_transition"
    message = "This memory cannot move to that status from its current one."


class StaleRevision(Conflict):
    code = "stale_revision"
    message = "A later revision of this key exists; an older revision can never become active again."


class FourEyesRequired(Conflict):
    code = "four_eyes_required"
    message = "This scope needs a second, different reviewer to confirm long-term commitments."


class PinnedOverBudget(DomainError):
    code = "pinned_over_budget"
    status = 422
    message = "The pinned blocks (constraints in force, the current task, pending tool calls) do not fit the budget."


class LastOwner(Conflict):
    """A revoke or a membership removal that would leave a scope without an owner (permissions.owners)."""

    code = "last_owner"


class ScopeArchived(Conflict):
    """A write (memory, event, child scope) in an archived scope or below one (permissions.scopes)."""

    code = "scope_archived"
    message = (
        "This scope is archived: it takes no new memories, events or child scopes. Its memories stay "
        "readable; an owner may restore it."
    )


class InvitationInvalid(DomainError):
    """An invitation link that is unknown, used, revoked or expired: one answer for all four."""

    code = "invitation_invalid"
    status = 410
    message = "This invitation link is unknown, already used, revoked or expired; ask for a new one."


class AgentRoleCap(InvalidInput):
    """A role, a token or a team membership that would let an agent principal confirm, curate or govern:
    agents propose, people decide (permissions.roles.AGENT_MAX_ROLE)."""

    code = "agent_role_cap"
    message = (
        "An agent can hold at most the agent role (or viewer): confirming, curating and granting "
        "belong to people."
    )
