"""Invitations: a one-time link for someone without an account. Whoever may grant `role` on `scope`
(permissions.require_grant) may invite to it; the link's token is shown once and only its SHA-256 is
kept. Opening the link before it expires creates the user, its principal and the grant, in one
transaction; the inviter must still be able to grant that role then (a link does not outlive its
sender's rights)."""

from __future__ import annotations

from datetime import timedelta

from django.contrib.auth import get_user_model
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from governance.errors import Conflict, InvalidInput, InvitationInvalid, NotFound
from governance.models import Grant, Invitation, Principal, PrincipalKind, Role, Scope
from governance.permissions import can_grant, require_grant, require_writable
from governance.services.audit import AuditEntry, audit_record
from governance.services.outbox import outbox_emit

MAX_DAYS = 30
BAD_DAYS = f"expires_in_days is a whole number from 1 to {MAX_DAYS}."
USERNAME_TAKEN = "This user name is taken; choose another."
BAD_USERNAME = "A user name is 1 to 150 letters, digits and @ . + - _ characters."
NOTE_TOO_LONG = "A note is at most 200 characters."


def invitation_create(
    *, scope: Scope, role: str, actor: Principal | None, note: str = "", expires_in_days: int = 7
) -> tuple[Invitation, str]:
    """An invitation to `role` on `scope`'s subtree; returns it and the raw token (shown once)."""
    if role not in Role.values:
        raise InvalidInput(f"role must be one of: {', '.join(Role.values)}.", field="role")
    if not isinstance(expires_in_days, int) or not 1 <= expires_in_days <= MAX_DAYS:
        raise InvalidInput(BAD_DAYS, field="expires_in_days")
    if len(note or "") > 200:
        raise InvalidInput(NOTE_TOO_LONG, field="note")
    raw = Invitation.generate()
    with transaction.atomic():
        require_grant(actor, scope, role)
        require_writable(None, scope, episodes_only=True)  # no invitations into an archived scope
        invitation = Invitation.objects.create(
            scope=scope,
            role=role,
            note=(note or "").strip(),
            token_hash=Invitation.hash(raw),
            prefix=raw[:8],
            created_by=actor,
            expires_at=timezone.now() + timedelta(days=expires_in_days),
        )
        audit_record(
            actor=actor,
            entry=AuditEntry(
                "invitation.create",
                "invitation",
                str(invitation.pk),
                scope.path,
                "",
                "open",
                "",
                {
                    "role": role,
                    "note": invitation.note,
                    "prefix": invitation.prefix,
                    "expires_at": invitation.expires_at.isoformat(),
                },
            ),
        )
        return invitation, raw


def invitation_for_token(raw: str) -> Invitation:
    """The open invitation behind a link; InvitationInvalid (one answer) for unknown, used, revoked or expired."""
    invitation = (
        Invitation.objects.select_related("scope", "created_by")
        .filter(token_hash=Invitation.hash(raw or ""))
        .first()
    )
    if (
        invitation is None
        or invitation.accepted_at
        or invitation.revoked_at
        or invitation.expires_at <= timezone.now()
    ):
        raise InvitationInvalid()
    return invitation


def invitation_accept(*, token: str, username: str, password: str) -> Principal:
    """Use an invitation: create the user and its principal, and give it the invited role. The new
    principal is the actor of the audit event; the grant is recorded as given by the inviter."""
    username = (username or "").strip()
    User = get_user_model()
    try:
        User.username_validator(username)
        if not 1 <= len(username) <= 150:
            raise ValidationError(BAD_USERNAME)
    except ValidationError as exc:
        raise InvalidInput(BAD_USERNAME, field="username") from exc
    try:
        validate_password(password or "", User(username=username))
    except ValidationError as exc:
        raise InvalidInput(" ".join(exc.messages), field="password") from exc
    try:
        with transaction.atomic():
            invitation = invitation_for_token(token)
            invitation = (
                Invitation.objects.select_for_update(of=("self",))
                .select_related("scope", "created_by")
                .get(pk=invitation.pk)
            )
            if invitation.accepted_at or invitation.revoked_at:
                raise InvitationInvalid()
            inviter = invitation.created_by
            if inviter is not None and not can_grant(inviter, invitation.scope, invitation.role):
                raise InvitationInvalid()
            # A person's name is the installation's (users, agents); a team's is its workspace's, so only a
            # team of the workspace joined takes it (there, a name means its team first: permissions.resolve).
            if (
                User.objects.filter(username=username).exists()
                or Principal.objects.filter(name=username)
                .filter(Q(workspace__isnull=True) | Q(workspace=invitation.scope.workspace_id))
                .exists()
            ):
                raise Conflict(USERNAME_TAKEN, field="username")
            user = User.objects.create_user(username=username, password=password)
            principal = Principal.objects.create(kind=PrincipalKind.USER, name=username, user=user)
            grant = Grant.objects.create(
                principal=principal, scope=invitation.scope, role=invitation.role, granted_by=inviter
            )
            invitation.accepted_at = timezone.now()
            invitation.accepted_by = principal
            invitation.save(update_fields=["accepted_at", "accepted_by"])
            audit_record(
                actor=principal,
                entry=AuditEntry(
                    "invitation.accept",
                    "invitation",
                    str(invitation.pk),
                    invitation.scope.path,
                    "open",
                    "accepted",
                    "",
                    {
                        "principal": username,
                        "role": invitation.role,
                        "grant": grant.pk,
                        "invited_by": inviter.name if inviter else "system",
                    },
                ),
            )
            outbox_emit(
                topic="grant.changed", payload={"scope_id": invitation.scope_id, "principal_id": principal.pk}
            )
            return principal
    except IntegrityError as exc:  # the same name taken by a concurrent request
        raise Conflict(USERNAME_TAKEN, field="username") from exc


def invitation_revoke(*, invitation_id: int, actor: Principal | None) -> Invitation:
    """Withdraw an open invitation: whoever could have sent it (the grant rule on its scope and role)."""
    with transaction.atomic():
        invitation = (
            Invitation.objects.select_for_update(of=("self",))
            .select_related("scope")
            .filter(pk=invitation_id, accepted_at__isnull=True, revoked_at__isnull=True)
            .first()
        )
        if invitation is None:
            raise NotFound()
        require_grant(actor, invitation.scope, invitation.role)
        invitation.revoked_at = timezone.now()
        invitation.save(update_fields=["revoked_at"])
        audit_record(
            actor=actor,
            entry=AuditEntry(
                "invitation.revoke",
                "invitation",
                str(invitation.pk),
                invitation.scope.path,
                "open",
                "revoked",
                "",
                {"role": invitation.role, "prefix": invitation.prefix},
            ),
        )
        return invitation
