"""Four-eyes: which scopes ask for two reviewers, and how many approvals a memory needs and has."""

from __future__ import annotations

from governance.models import Memory, Scope, Tier
from governance.permissions.bounds import under


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
