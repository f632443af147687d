from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from django.db import connection, transaction
from django.utils import timezone

from governance.models import AuditEvent, Principal, Scope
from governance.models.audit import GENESIS_HASH
from governance.services.bulk import copy_insert

# One advisory-lock key serialises appends to the chain (held to the end of the writing transaction).
CHAIN_LOCK = 0x6D656D_0001


@dataclass
class AuditEntry:
    action: str
    target_type: str
    target_id: str
    scope_path: str = ""
    before_status: str = ""
    after_status: str = ""
    reason: str = ""
    data: dict = field(default_factory=dict)
    # For an event about a workspace with no scope path of its own (its scope's is found by path).
    workspace_id: int | None = None


def actor_name(actor: Principal | None) -> str:
    return actor.name if actor is not None else "system"


def audit_record(*, actor: Principal | None, entry: AuditEntry) -> AuditEvent:
    """Append one event to the hash chain; call inside the transaction of the change it records."""
    return audit_record_many(actor=actor, entries=[entry])[0]


def audit_record_many(*, actor: Principal | None, entries: Iterable[AuditEntry]) -> list[AuditEvent]:
    assert transaction.get_connection().in_atomic_block, "audit events belong to the change's transaction"
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s)", [CHAIN_LOCK])
    last = AuditEvent.objects.order_by("-id").values_list("hash", flat=True).first()
    prev = last or GENESIS_HASH
    now = timezone.now()
    events = []
    entries = list(entries)
    # The scope by identity, read in the change's own transaction (where the path is the scope's now): a
    # path freed later and taken by another scope never carries this event with it. One query per batch.
    paths = {e.scope_path for e in entries if e.scope_path}
    ids = {
        p: (i, w)
        for p, i, w in Scope.objects.filter(path__in=paths).values_list("path", "pk", "workspace_id")
    }
    for entry in entries:
        scope_id, workspace_id = ids.get(entry.scope_path, (None, entry.workspace_id))
        event = AuditEvent(
            at=now,
            actor=actor,
            actor_name=actor_name(actor),
            action=entry.action,
            target_type=entry.target_type,
            target_id=str(entry.target_id),
            scope_path=entry.scope_path,
            scope_id=scope_id,
            workspace_id=workspace_id or entry.workspace_id,
            before_status=entry.before_status,
            after_status=entry.after_status,
            reason=entry.reason,
            data=entry.data,
            prev_hash=prev,
        )
        event.hash = event.compute_hash()
        prev = event.hash
        events.append(event)
    return copy_insert(AuditEvent, events)


@dataclass
class ChainReport:
    ok: bool
    checked: int
    first_bad_id: int | None = None
    problem: str = ""


def audit_verify_chain(*, batch: int = 5000) -> ChainReport:
    """Walk the chain in id order; name the first row whose hash or link does not hold."""
    prev = GENESIS_HASH
    checked = 0
    last_id = 0
    while True:
        rows = list(AuditEvent.objects.filter(id__gt=last_id).order_by("id")[:batch])
        if not rows:
            return ChainReport(ok=True, checked=checked)
        for event in rows:
            if event.prev_hash != prev:
                return ChainReport(
                    False, checked, event.id, "prev_hash does not match the previous row's hash"
                )
            if event.compute_hash() != event.hash:
                return ChainReport(False, checked, event.id, "the row's content does not match its hash")
            prev = event.hash
            checked += 1
            last_id = event.id
