"""Four-eyes on every path that puts something in force: which long-term commitments a memory would
replace, override, contradict or narrow once in force, and so how many people must agree first.

The decision itself is `permissions.confirm_approvals_needed` (the rulebook); this module gathers what it
decides on, for every path that can put a memory in force: a direct `active` write (`memory_record`, the
batch), a confirmation (`memory_confirm`), a supersede, an import (`services/portability/import_.py`).
A proposal's count is fixed when it is proposed (`meta.approvals_needed`), and a confirmation never
needs fewer than that: deleting the system's `contradicts` link, retiring a neighbour or turning four-eyes
off later does not let one person through."""

from __future__ import annotations

from django.db.models import Q

from governance.models import Kind, Memory, Relation, RelationKind, Scope, Status, Tier
from governance.permissions import confirm_approvals_needed, ending_needs_two_people, requires_four_eyes
from governance.services.conflict import (
    CHECKED_KINDS,
    MAX_CANDIDATES,
    contradicts,
    keyed_statements,
    nearest_statements,
    opposes,
)

# How many people a proposal needs, fixed at proposal time (the review queue shows "1 of 2").
NEEDED = "approvals_needed"


def _contradicted_by_text(memory: Memory, scope_ids: list[int]) -> list[Memory]:
    """Active statements of these scopes, keyed or not, that `memory` says the opposite of or gives another
    value of (conflict detection's one test, `opposes`, over the scope and every scope above it: a rule in a
    sub-scope is pinned beside its parent's). A keyed statement is compared by its text too: an unkeyed
    "Client files are never kept for seven years." sets aside the keyed commitment as surely as a new
    revision under its key."""
    if memory.kind not in CHECKED_KINDS or not memory.text:
        return []
    rows = Memory.objects.filter(
        scope_id__in=scope_ids, status=Status.ACTIVE, kind__in=CHECKED_KINDS
    ).exclude(pk=memory.pk)
    if memory.key:
        rows = rows.exclude(key=memory.key)  # the same key is compared by key (commitments_at_stake)
    others = list(keyed_statements(rows).select_related("scope"))
    if memory.lexical:
        unkeyed = rows.filter(key__isnull=True)
        others += list(nearest_statements(unkeyed, memory.lexical).select_related("scope")[:MAX_CANDIDATES])
    return [other for other in others if opposes(other.text, memory.text)]


def replaced_rule_id(memory: Memory) -> int | None:
    """The unkeyed rule of its own scope that putting `memory` in force ends: the one a user's correction
    replaces (meta.requirement.replaces, a rule), or the one a merged revision revises (meta.revises: the rule
    as the correction leaves it, services/review.proposal_confirm). A keyed one is ended by its key."""
    meta = memory.meta or {}
    revises = meta.get("revises")
    if isinstance(revises, dict):
        return revises.get("memory_id")
    replaces = (
        (meta.get("requirement") or {}).get("replaces") if isinstance(meta.get("requirement"), dict) else None
    )
    if isinstance(replaces, dict) and replaces.get("origin") == "rule" and not replaces.get("key"):
        return replaces.get("memory_id")
    return None


def commitments_at_stake(memory: Memory, *, exclude: tuple[int, ...] = ()) -> list[Memory]:
    """The active memories that putting `memory` in force would end or set aside: the same key in its scope
    (superseded) or above it (overridden there), any it `contradicts` (a link either way, or by its text),
    in its scope or above. `memory` need not be saved yet."""
    scope_ids = list(Scope.objects.ancestors_of(memory.scope).values_list("pk", flat=True))
    at_stake: dict[int, Memory] = {}
    if memory.pk is not None:
        linked = (
            Relation.objects.filter(kind=RelationKind.CONTRADICTS)
            .filter(Q(source_id=memory.pk) | Q(target_id=memory.pk))
            .values_list("source_id", "target_id")
        )
        others = {i for pair in linked for i in pair} - {memory.pk}
        if (replaced := replaced_rule_id(memory)) is not None:
            others.add(replaced)
        for other in Memory.objects.filter(pk__in=others, status=Status.ACTIVE).select_related("scope"):
            at_stake[other.pk] = other
    if memory.key:
        same_key = Memory.objects.filter(scope_id__in=scope_ids, key=memory.key, status=Status.ACTIVE)
        # Writing again exactly what is in force there changes nothing (memory_record answers with that row).
        same_key = same_key.exclude(scope_id=memory.scope_id, content_hash=memory.content_hash)
        for other in same_key.select_related("scope"):
            at_stake[other.pk] = other
    for other in _contradicted_by_text(memory, scope_ids):
        at_stake[other.pk] = other
    return [m for pk, m in at_stake.items() if pk != memory.pk and pk not in exclude]


def approvals_to_put_in_force(memory: Memory, *, exclude: tuple[int, ...] = ()) -> int:
    """How many different people must confirm `memory` before it is in force: 2 when it is a long-term
    commitment of a four-eyes scope, or when it would end or set aside one (`commitments_at_stake`), or
    when that was so when it was proposed (meta.approvals_needed); else 1. One query when the scope and
    every scope above it have no four-eyes rule."""
    fixed = int((memory.meta or {}).get(NEEDED) or 1)
    if fixed >= 2 or not requires_four_eyes(memory.scope):
        return fixed
    if memory.tier == Tier.LONG:
        return 2
    at_stake = [m for m in commitments_at_stake(memory, exclude=exclude) if ending_needs_two_people(m)]
    return confirm_approvals_needed(memory, at_stake)


def fix_at_proposal(memory: Memory) -> None:
    """Record on a new candidate or proposal how many people will have to confirm it (saved on the row):
    the count cannot drop later because a link was removed or a setting changed. Call in the transaction
    that wrote it, after conflict detection."""
    if (
        memory.status not in (Status.CANDIDATE, Status.PROPOSED)
        or memory.key is None
        and memory.kind in (Kind.EPISODIC, Kind.WORKING)
    ):
        return
    needed = approvals_to_put_in_force(memory)
    if needed >= 2 and int(memory.meta.get(NEEDED) or 1) < needed:
        memory.meta = {**memory.meta, NEEDED: needed}
        Memory.objects.filter(pk=memory.pk).update(meta=memory.meta)


def import_needs_two(memory: Memory, four_eyes_by_scope: dict[int, bool]) -> bool:
    """Whether a row an import would bring in force needs two people here (it would override or contradict
    a long-term commitment of the scope or above, e.g. an import into a sub-scope of a four-eyes scope).
    `four_eyes_by_scope` caches requires_four_eyes per scope: one query per scope when no rule applies."""
    if memory.scope.pk not in four_eyes_by_scope:
        four_eyes_by_scope[memory.scope.pk] = requires_four_eyes(memory.scope)
    if not four_eyes_by_scope[memory.scope.pk] or (
        memory.key is None and memory.kind in (Kind.EPISODIC, Kind.WORKING)
    ):
        return False
    return approvals_to_put_in_force(memory) >= 2


MOVE_WOULD_OVERRIDE = (
    "This scope holds rules in force that would override or contradict a long-term commitment of its new "
    "place, which asks for two reviewers: there they would set it aside on one person's word. Propose them "
    "again under the new parent (two reviewers confirm), or retire them before the move."
)


def move_would_override(scope: Scope, new_parent: Scope) -> bool:
    """Whether moving `scope` under `new_parent` would set aside a long-term commitment of a four-eyes scope
    there that it did not set aside before (one above the new place and not above the old one): an active
    keyed memory of the moved subtree with that commitment's key, or an active unkeyed one that contradicts
    it (by a `contradicts` link, or by its text: the test every active write gets, `_contradicted_by_text`,
    asked the other way round, from each such commitment into the subtree)."""
    if not requires_four_eyes(new_parent):
        return False
    before = set(Scope.objects.ancestors_of(scope.parent).values_list("pk", flat=True))
    gained = Scope.objects.ancestors_of(new_parent).exclude(pk__in=before)
    commitments = [
        m
        for m in Memory.objects.filter(scope__in=gained, status=Status.ACTIVE, tier=Tier.LONG).select_related(
            "scope"
        )
        if ending_needs_two_people(m)
    ]
    if not commitments:
        return False
    moved = Memory.objects.filter(scope__tree__descendant_of=scope.tree, status=Status.ACTIVE)
    keys = {m.key for m in commitments if m.key}
    if keys and moved.filter(key__in=keys).exists():
        return True
    unkeyed = [m for m in commitments if not m.key and m.kind in CHECKED_KINDS]
    if not unkeyed:
        return False
    ids = [m.pk for m in unkeyed]
    if (
        Relation.objects.filter(kind=RelationKind.CONTRADICTS)
        .filter(Q(source_id__in=ids, target__in=moved) | Q(target_id__in=ids, source__in=moved))
        .exists()
    ):
        return True
    moved_rules = moved.filter(kind__in=CHECKED_KINDS, key__isnull=True)
    for commitment in unkeyed:
        if not commitment.lexical or not commitment.text:
            continue
        near = nearest_statements(moved_rules, commitment.lexical).only("text")[:MAX_CANDIDATES]
        if any(contradicts(other.text, commitment.text) for other in near):
            return True
    return False
