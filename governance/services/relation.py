from __future__ import annotations

from django.db import IntegrityError, transaction

from governance.errors import Conflict, InvalidInput, NotFound
from governance.models import Memory, Principal, Relation, RelationKind
from governance.permissions import Action, require
from governance.services.audit import AuditEntry, audit_record
from governance.services.outbox import outbox_emit

RELATION_EXISTS = "These two memories already have this relation."


def relation_add(
    *, source_id: int, target_id: int, kind: str, reason: str = "", actor: Principal | None
) -> Relation:
    """Link two memories of one workspace. `supersedes` is made by memory_supersede, which also changes
    statuses; adding it here only records the link (for imports of an existing history)."""
    if kind not in RelationKind.values:
        raise InvalidInput(f"kind must be one of: {', '.join(RelationKind.values)}.", field="kind")
    if source_id == target_id:
        raise InvalidInput("A memory cannot relate to itself.", field="target")
    with transaction.atomic():
        pair = {m.pk: m for m in Memory.objects.select_related("scope").filter(pk__in=[source_id, target_id])}
        if len(pair) != 2:
            raise NotFound()
        source, target = pair[source_id], pair[target_id]
        if source.scope.workspace_id != target.scope.workspace_id:
            raise InvalidInput("Relations stay inside one workspace.", field="target")
        # Linking is a curation step when it changes what is in force; evidence links are candidate writes.
        needed = Action.SUPERSEDE if kind in (RelationKind.SUPERSEDES, RelationKind.CONTRADICTS) else Action.WRITE_CANDIDATE
        require(actor, source.scope, needed)
        require(actor, target.scope, Action.READ)
        try:
            with transaction.atomic():
                relation = Relation.objects.create(source=source, target=target, kind=kind, reason=reason, actor=actor)
        except IntegrityError as exc:
            raise Conflict(RELATION_EXISTS) from exc
        audit_record(actor=actor, entry=AuditEntry(
            "relation.add", "relation", str(relation.pk), source.scope.path, "", "", reason,
            {"source": source.pk, "target": target.pk, "kind": kind},
        ))
        outbox_emit(topic="memory.status", memory=source, payload={"memory_ids": [source.pk, target.pk]})
        return relation
