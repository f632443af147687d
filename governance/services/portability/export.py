"""Export a scope subtree as JSON lines, streamed: every table is walked with iterator(), so a scope of
100 000 memories is written with the memory of one chunk. Forgotten memories leave only a tombstone (id,
content hash, when, who): never their text, their embedding, or a summary line or meta entry citing them."""

from __future__ import annotations

import socket
from collections import Counter
from collections.abc import Iterator

from django.db import connection, transaction
from django.utils import timezone

from governance.models import Memory, Principal, Scope, Status
from governance.permissions import Action, require
from governance.redaction.masking import masker, memory_states, withheld
from governance.selectors.portability import (
    exported_audit_events,
    forget_records,
    referenced_principals,
    subtree_grants,
    subtree_memories,
    subtree_relations,
    subtree_scopes,
    subtree_summaries,
)
from governance.services.audit import AuditEntry, audit_record
from governance.services.portability.format import FORMAT_NAME, FORMAT_VERSION, dumps, iso

CHUNK = 1000  # rows per fetch of a server-side cursor (and the memory an export holds at once)
MEMORY_FIELDS = (
    "kind",
    "key",
    "revision",
    "text",
    "source_kind",
    "source_ref",
    "session",
    "speaker",
    "call_id",
    "task_type",
    "status",
    "confidence",
    "importance",
    "tier",
    "content_hash",
    "activation_a0",
    "decay_rate",
    "activation_log_k",
    "reinforcement_count",
)
MEMORY_TIMES = (
    "occurred_at",
    "valid_from",
    "valid_until",
    "confirmed_at",
    "last_reinforced_at",
    "created_at",
)


def installation_id() -> str:
    """This installation: the PostgreSQL cluster's system identifier (unique per initdb), or its name."""
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT system_identifier::text FROM pg_control_system()")
            return f"pg:{cursor.fetchone()[0]}"
    except Exception:  # no right to read it (a managed database): the host name still tells files apart
        return f"host:{socket.gethostname()}"


def _relative(root: Scope, path: str) -> str:
    return "" if path == root.path else path[len(root.path) + 1 :]


def scope_export(*, root: Scope, actor: Principal | None) -> Iterator[str]:
    """Check the caller may export `root` (curator or owner), record the export in the audit log, and return
    the lines of the file (a generator: nothing more is read until it is iterated)."""
    require(actor, root, Action.EXPORT)
    with transaction.atomic():
        audit_record(
            actor=actor,
            entry=AuditEntry(
                "scope.export", "scope", str(root.pk), root.path, data={"format_version": FORMAT_VERSION}
            ),
        )
    return scope_export_lines(root)


def _counts(root: Scope) -> dict[str, int]:
    memories = subtree_memories(root)
    return {
        "scopes": subtree_scopes(root).count(),
        "principals": referenced_principals(root).count(),
        "grants": subtree_grants(root).count(),
        "memories": memories.exclude(status=Status.FORGOTTEN).count(),
        "tombstones": memories.filter(status=Status.FORGOTTEN).count(),
        "relations": subtree_relations(root).count(),
        "summaries": subtree_summaries(root).count(),
        "audit": exported_audit_events(root).count(),
    }


def scope_export_lines(root: Scope) -> Iterator[str]:
    """The file's lines (see format.py). Counts in the header are taken first; the end line holds what
    was written, and it is the one an import checks."""
    written: Counter[str] = Counter()
    yield dumps(
        {
            "type": "header",
            "format": FORMAT_NAME,
            "version": FORMAT_VERSION,
            "source": {"installation": installation_id(), "host": socket.gethostname()},
            "workspace": root.workspace.slug,
            "root": root.path,
            "exported_at": iso(timezone.now()),
            "counts": _counts(root),
        }
    )
    for scope in subtree_scopes(root).iterator(chunk_size=CHUNK):
        written["scopes"] += 1
        yield dumps(
            {
                "type": "scope",
                "id": scope.pk,
                "path": _relative(root, scope.path),
                "parent": scope.parent_id if scope.pk != root.pk else None,
                "require_two_reviewers": scope.require_two_reviewers,
            }
        )
    for principal in referenced_principals(root).iterator(chunk_size=CHUNK):
        written["principals"] += 1
        yield dumps({"type": "principal", "id": principal.pk, "name": principal.name, "kind": principal.kind})
    for grant in subtree_grants(root).iterator(chunk_size=CHUNK):
        written["grants"] += 1
        yield dumps(
            {
                "type": "grant",
                "principal": grant.principal_id,
                "scope": grant.scope_id,
                "role": grant.role,
                "granted_by": grant.granted_by_id,
            }
        )
    yield from _memory_lines(root, written)
    for relation in subtree_relations(root).iterator(chunk_size=CHUNK):
        written["relations"] += 1
        yield dumps(
            {
                "type": "relation",
                "source": relation.source_id,
                "target": relation.target_id,
                "kind": relation.kind,
                "reason": relation.reason,
                "actor": relation.actor_id,
                "created_at": iso(relation.created_at),
            }
        )
    for summary in subtree_summaries(root).iterator(chunk_size=CHUNK):
        written["summaries"] += 1
        yield dumps(_summary_record(summary))
    for event in exported_audit_events(root).iterator(chunk_size=CHUNK):
        written["audit"] += 1
        yield dumps(
            {
                "type": "audit",
                "id": event.pk,
                "at": iso(event.at),
                "actor": event.actor_name,
                "action": event.action,
                "target_type": event.target_type,
                "target_id": event.target_id,
                "scope_path": event.scope_path,
                "before": event.before_status,
                "after": event.after_status,
                "reason": event.reason,
                "data": event.data,
                "prev_hash": event.prev_hash,
                "hash": event.hash,
            }
        )
    yield dumps({"type": "end", "counts": dict(written)})


def _memory_lines(root: Scope, written: Counter) -> Iterator[str]:
    chunk: list[Memory] = []
    for memory in subtree_memories(root).iterator(chunk_size=CHUNK):
        chunk.append(memory)
        if len(chunk) >= CHUNK:
            yield from _memory_chunk(root, chunk, written)
            chunk = []
    yield from _memory_chunk(root, chunk, written)


def _memory_chunk(root: Scope, chunk: list[Memory], written: Counter) -> Iterator[str]:
    gone = [m.pk for m in chunk if m.status == Status.FORGOTTEN]
    forgotten = forget_records(root, gone) if gone else {}
    for memory in chunk:
        if memory.status == Status.FORGOTTEN:
            written["tombstones"] += 1
            at, by = forgotten.get(str(memory.pk), (memory.purged_at or memory.updated_at, ""))
            yield dumps(
                {
                    "type": "tombstone",
                    "id": memory.pk,
                    "scope": memory.scope_id,
                    "kind": memory.kind,
                    "key": memory.key,
                    "revision": memory.revision,
                    "tier": memory.tier,
                    "content_hash": memory.content_hash,
                    "forgotten_at": iso(at),
                    "forgotten_by": by,
                    "created_at": iso(memory.created_at),
                }
            )
            continue
        written["memories"] += 1
        record = {
            "type": "memory",
            "id": memory.pk,
            "scope": memory.scope_id,
            "created_by": memory.created_by_id,
            "confirmed_by": memory.confirmed_by_id,
            "meta": _masked_meta(memory.meta),
        }
        record.update({name: getattr(memory, name) for name in MEMORY_FIELDS})
        record.update({name: iso(getattr(memory, name)) for name in MEMORY_TIMES})
        yield dumps(record)


def _masked_meta(meta: dict) -> dict:
    """The memory's meta, with whatever it says about a forgotten memory (a correction's candidates, say)
    masked the way every read masks it."""
    from governance.redaction.masking import cited_ids

    ids = cited_ids(meta or {})
    if not ids:
        return meta or {}
    import copy

    value, _ = masker(memory_states(ids), ids).redact(copy.deepcopy(meta))
    return value


def _summary_record(summary) -> dict:
    """A summary's lines, without any line citing a memory that is forgotten (or deleted) now; the rendered
    text is not exported (it may quote such a line): the importer rebuilds it."""
    cited = {i for line in summary.lines for i in line.get("memory_ids", [])}
    states = memory_states(cited) if cited else {}
    lines = [
        line
        for line in summary.lines
        if not any(
            withheld((states.get(i) or {}).get("status", "deleted")) for i in line.get("memory_ids", [])
        )
    ]
    return {
        "type": "summary",
        "scope": summary.scope_id,
        "lines": lines,
        "writer": summary.writer,
        "built_at": iso(summary.built_at),
        "built_by": summary.built_by_id,
        "dropped_lines": len(summary.lines) - len(lines),
    }
