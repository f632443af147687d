"""Relations between memories: the system's links (conflicts, promotions, imports: `relation_add`) and a
person's links made by hand (`relation_link`, `relation_unlink`), each audited with an outbox row so the
derived stores (caches, summaries, stored packets) see the change."""

from __future__ import annotations

from django.db import IntegrityError, transaction

from governance.errors import Conflict, InvalidInput, NotFound, PermissionDenied
from governance.models import Memory, Principal, Relation, RelationKind, Status
from governance.permissions import DENIAL_REASONS, Action, can, can_read_memory, require
from governance.services.audit import AuditEntry, audit_record
from governance.services.outbox import outbox_emit

RELATION_EXISTS = "These two memories already have this relation."
RELATION_SELF = "A memory cannot relate to itself."
RELATION_CROSS_WORKSPACE = "Relations stay inside one workspace."
RELATION_FORGOTTEN = "A forgotten memory cannot be linked: it is out of every read."
RELATION_REASON_REQUIRED = "Say why these memories are linked: the reason is kept in the audit log."
UNLINK_REASON_REQUIRED = "Say why this link is removed: the reason is kept in the audit log."
HAND_KINDS = (RelationKind.SUPPORTS, RelationKind.CONTRADICTS, RelationKind.DERIVED_FROM)
HAND_KIND_INVALID = (
    "A link made by hand is one of: supports, contradicts, derived_from (a supersedes link is "
    "made by superseding the memory, which also changes its status)."
)
SUPERSEDES_FIXED = (
    "A supersedes link records a revision's history; it is not removed by hand (supersede or "
    "retire the memory instead)."
)
REASON_MAX = 500


class RelationExists(Conflict):
    code = "relation_exists"
    message = RELATION_EXISTS


class RelationSelf(InvalidInput):
    code = "relation_self"
    message = RELATION_SELF


class RelationCrossWorkspace(InvalidInput):
    code = "relation_cross_workspace"
    message = RELATION_CROSS_WORKSPACE


class RelationForgotten(Conflict):
    code = "relation_forgotten"
    message = RELATION_FORGOTTEN


class RelationFixed(Conflict):
    code = "relation_fixed"
    message = SUPERSEDES_FIXED


def _pair(
    source_id: int, target_id: int, actor: Principal | None = None, readable: bool = False
) -> tuple[Memory, Memory]:
    """Both memories, in one workspace. With `readable`, a memory the actor may not read is NotFound,
    checked before the workspace rule, so the answer never tells whether another workspace's id exists."""
    if source_id == target_id:
        raise RelationSelf(field="target")
    pair = {m.pk: m for m in Memory.objects.select_related("scope").filter(pk__in=[source_id, target_id])}
    if len(pair) != 2 or (readable and not all(can_read_memory(actor, m) for m in pair.values())):
        raise NotFound()
    source, target = pair[source_id], pair[target_id]
    if source.scope.workspace_id != target.scope.workspace_id:
        raise RelationCrossWorkspace(field="target")
    return source, target


def _record(
    source: Memory,
    target: Memory,
    kind: str,
    reason: str,
    actor: Principal | None,
    action: str,
    by_hand: bool = False,
) -> Relation:
    try:
        with transaction.atomic():
            relation = Relation.objects.create(
                source=source, target=target, kind=kind, reason=reason, actor=actor, by_hand=by_hand
            )
    except IntegrityError as exc:
        raise RelationExists() from exc
    audit_record(
        actor=actor,
        entry=AuditEntry(
            action,
            "relation",
            str(relation.pk),
            source.scope.path,
            "",
            "",
            reason,
            {"source": source.pk, "target": target.pk, "kind": kind},
        ),
    )
    # Both ends' caches, summaries and stored packets are re-derived (governance/propagation).
    outbox_emit(topic="memory.status", memory=source, payload={"memory_ids": [source.pk, target.pk]})
    return relation


def _require_link(actor: Principal | None, source: Memory) -> None:
    """The caller already reads the memory (a 404 otherwise): a missing right is a 403 with its reason,
    also on a memory of a scope above its grants."""
    if not can(actor, source.scope, Action.LINK):
        raise PermissionDenied(DENIAL_REASONS[Action.LINK], action=str(Action.LINK))


def relation_add(
    *, source_id: int, target_id: int, kind: str, reason: str = "", actor: Principal | None
) -> Relation:
    """Link two memories of one workspace. `supersedes` is made by memory_supersede, which also changes
    statuses; adding it here only records the link (for imports of an existing history)."""
    if kind not in RelationKind.values:
        raise InvalidInput(f"kind must be one of: {', '.join(RelationKind.values)}.", field="kind")
    with transaction.atomic():
        source, target = _pair(source_id, target_id)
        # Linking is a curation step when it changes what is in force; evidence links are candidate writes.
        needed = (
            Action.SUPERSEDE
            if kind in (RelationKind.SUPERSEDES, RelationKind.CONTRADICTS)
            else Action.WRITE_CANDIDATE
        )
        require(actor, source.scope, needed)
        require(actor, target.scope, Action.READ)
        return _record(source, target, kind, reason, actor, "relation.add")


def relation_link(
    *, source_id: int, target_id: int, kind: str, reason: str, actor: Principal | None
) -> Relation:
    """A person links two memories by hand: `source` supports / contradicts / is derived from `target`,
    with a required reason. Needs the link right on the source's scope and a read of the target; never
    across workspaces, to a forgotten memory, to itself, or twice (a contradiction either way is one)."""
    reason = (reason or "").strip()
    if kind not in HAND_KINDS:
        raise InvalidInput(HAND_KIND_INVALID, field="kind")
    if not reason:
        raise InvalidInput(RELATION_REASON_REQUIRED, field="reason")
    if len(reason) > REASON_MAX:
        raise InvalidInput(f"The reason is at most {REASON_MAX} characters.", field="reason")
    with transaction.atomic():
        source, target = _pair(source_id, target_id, actor, readable=True)
        _require_link(actor, source)
        if Status.FORGOTTEN in (source.status, target.status):
            raise RelationForgotten(field="target" if target.status == Status.FORGOTTEN else "source")
        if (
            kind == RelationKind.CONTRADICTS
            and Relation.objects.filter(kind=kind, source_id=target.pk, target_id=source.pk).exists()
        ):
            raise RelationExists()
        return _record(source, target, kind, reason, actor, "relation.link", by_hand=True)


def relation_unlink(*, relation_id: int, reason: str, actor: Principal | None) -> Relation:
    """A person removes a link, with a required reason. Needs the link right on the source's scope; a
    `supersedes` link (a revision's history) is never removed. Returns the removed relation (unsaved)."""
    reason = (reason or "").strip()
    if not reason:
        raise InvalidInput(UNLINK_REASON_REQUIRED, field="reason")
    if len(reason) > REASON_MAX:
        raise InvalidInput(f"The reason is at most {REASON_MAX} characters.", field="reason")
    with transaction.atomic():
        relation = (
            Relation.objects.select_for_update(of=("self",))
            .select_related("source__scope", "target__scope")
            .filter(pk=relation_id)
            .first()
        )
        if (
            relation is None
            or not can_read_memory(actor, relation.source)
            or not can_read_memory(actor, relation.target)
        ):
            raise NotFound()
        _require_link(actor, relation.source)
        if relation.kind == RelationKind.SUPERSEDES:
            raise RelationFixed()
        source, target, pk = relation.source, relation.target, relation.pk
        relation.delete()
        relation.pk = pk
        audit_record(
            actor=actor,
            entry=AuditEntry(
                "relation.unlink",
                "relation",
                str(pk),
                source.scope.path,
                "",
                "",
                reason,
                {"source": source.pk, "target": target.pk, "kind": relation.kind},
            ),
        )
        outbox_emit(topic="memory.status", memory=source, payload={"memory_ids": [source.pk, target.pk]})
        return relation
