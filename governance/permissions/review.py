"""Four-eyes: which scopes ask for two reviewers, and how many approvals a memory needs and has."""

from __future__ import annotations

from django.db.models import Q, QuerySet

from governance.models import Memory, Principal, Scope, Status, Tier
from governance.permissions.bounds import under
from governance.permissions.roles import Action


def requires_four_eyes(scope: Scope) -> bool:
    """A scope asks for two different reviewers when it, or any scope above it, says so: a workspace-wide
    rule cannot be side-stepped by writing in a sub-scope."""
    return Scope.objects.ancestors_of(scope).filter(require_two_reviewers=True).exists()


def four_eyes_trees(trees: set[str]) -> set[str]:
    """`requires_four_eyes` for many scopes at once (one query): those of `trees` under a four-eyes scope."""
    if not trees:
        return set()
    rule_trees = list(Scope.objects.filter(require_two_reviewers=True).values_list("tree", flat=True))
    return {t for t in trees if any(under(t, r) for r in rule_trees)}


def approvals_needed(memory: Memory, four_eyes: bool | None = None) -> int:
    """How many distinct reviewers must confirm this memory before it becomes active (`four_eyes`:
    requires_four_eyes(memory.scope) when already known)."""
    if four_eyes is None:
        four_eyes = requires_four_eyes(memory.scope)
    return 2 if memory.tier == Tier.LONG and four_eyes else 1


def approvers(memory: Memory) -> list[int]:
    """Ids of the reviewers whose approval of this memory is recorded (the system actor is not counted)."""
    return [a for a in memory.meta.get("approvals", []) if a is not None]


# --- In force, and ending a commitment (agents propose, people decide) ---------------------------------


def puts_in_force(principal: Principal | None, scope: Scope) -> bool:
    """May this principal's confirmation (or active write) put a rule in force in `scope`? Only a person
    with the confirm right there; the system actor (None) is the demo's and the migrations'."""
    from governance.permissions.access import can

    return can(principal, scope, Action.CONFIRM)


def ending_needs_two_people(memory: Memory, four_eyes: bool | None = None) -> bool:
    """Ending an active long-term commitment in a four-eyes scope (retire, forget, supersede, or replacing
    or overriding it by confirming another revision of its key) takes two different people (`four_eyes`:
    requires_four_eyes(memory.scope) when already known)."""
    if memory.status != Status.ACTIVE or memory.tier != Tier.LONG:
        return False
    return requires_four_eyes(memory.scope) if four_eyes is None else four_eyes


def confirmations_needed(memory: Memory, four_eyes: bool | None = None) -> int:
    """How many reviewers must confirm this memory now: approvals_needed, or the higher count fixed on the
    row when it was proposed (it would replace a long-term rule: services/four_eyes.py)."""
    return max(approvals_needed(memory, four_eyes), int((memory.meta or {}).get("approvals_needed") or 1))


def confirm_approvals_needed(memory: Memory, replaces=()) -> int:
    """approvals_needed, raised to two when confirming `memory` would replace or override (in a narrower
    scope) a long-term commitment of a four-eyes scope, whatever the tier `memory` was given."""
    if approvals_needed(memory) >= 2 or any(ending_needs_two_people(old) for old in replaces):
        return 2
    return 1


def four_eyes_scopes() -> QuerySet[Scope]:
    """Every scope where requires_four_eyes holds (it, or a scope above it, asks for two reviewers)."""
    roots = list(Scope.objects.filter(require_two_reviewers=True).values_list("tree", flat=True))
    if not roots:
        return Scope.objects.none()
    q = Q()
    for tree in roots:
        q |= Q(tree__descendant_of=tree)
    return Scope.objects.filter(q)


def who_decides(memory: Memory) -> dict:
    """Who decides on this memory, for every place a person acts on it (its page, the supersede and forget
    forms, the answer after them): `ending` and `confirming` are 1 (one person's word is enough) or 2 (a
    second, different curator or owner / reviewer must do the same); `rule_scope` is the scope whose
    four-eyes setting says so (the memory's or one above it), None when no scope asks for two."""
    rules = Scope.objects.ancestors_of(memory.scope).filter(require_two_reviewers=True).only("pk", "path")
    rule_scope = max(rules, key=lambda scope: scope.depth, default=None)  # the nearest
    four_eyes = rule_scope is not None
    return {
        "ending": 2 if ending_needs_two_people(memory, four_eyes) else 1,
        "confirming": confirmations_needed(memory, four_eyes),
        "rule_scope": rule_scope,
    }
