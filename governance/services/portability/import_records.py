"""Steps of the import (docs/portability.md): the key rules of the memories read (one active revision per
key, its latest; no key taken here already), then the last records: relations, summaries and the source's
audit events, each checked against the memories the file carried. A step of `import_._Importer`, which holds the state
(`memories`, `scopes`, `line`, the batches) and the helpers this uses (`_choice`, `_scope_ref`, `_principal_ref`)."""

from __future__ import annotations

from governance.models import (
    AuditEvent,
    ImportedAuditEvent,
    Memory,
    Relation,
    RelationKind,
    Scope,
    Status,
    Summary,
)
from governance.services.bulk import copy_insert
from governance.services.portability.format import (
    AUDIT_HASH,
    BAD_VALUE,
    DUPLICATE_ID,
    KEY_TAKEN,
    TWO_ACTIVE,
    UNKNOWN_REF,
    ImportFileError,
    parse_time,
)
from governance.services.portability.format import field as get

BATCH = 1000


class RecordsStep:
    # --- keys ----------------------------------------------------------------------------------------

    def _key_seen(self, scope: Scope, key: str | None, revision: int, status: str, line: int) -> None:
        if key is None:
            return
        if scope.pk not in self.existing_keys:
            self.existing_keys[scope.pk] = set(
                Memory.objects.filter(scope=scope, key__isnull=False).values_list("key", flat=True).distinct()
            )
        if key in self.existing_keys[scope.pk]:
            raise ImportFileError(line, KEY_TAKEN.format(scope=scope.path, key=key))
        seen = self.keys.setdefault((scope.pk, key), {"revisions": set(), "active": None, "max": 0})
        if revision in seen["revisions"]:
            raise ImportFileError(line, DUPLICATE_ID.format(type="memory", id=f"{key} r{revision}"))
        seen["revisions"].add(revision)
        seen["max"] = max(seen["max"], revision)
        if status == Status.ACTIVE:
            if seen["active"] is not None:
                raise ImportFileError(line, TWO_ACTIVE.format(key=key, scope=scope.path))
            seen["active"] = (revision, line)

    def _check_keys(self) -> None:
        """An active revision must be its key's latest: an older one can never be in force again."""
        for seen in self.keys.values():
            if seen["active"] is not None and seen["active"][0] < seen["max"]:
                revision, line = seen["active"]
                raise ImportFileError(
                    line,
                    BAD_VALUE.format(
                        type="memory",
                        field="status",
                        value=f"active at revision {revision} below {seen['max']}",
                    ),
                )
        self.keys = {}

    # --- relations, summaries, audit ------------------------------------------------------------------

    def _memory_ref(self, r: dict, name: str) -> int:
        fid = get(r, name, int, self.line)
        if fid not in self.memories:
            raise ImportFileError(
                self.line, UNKNOWN_REF.format(type=r["type"], field=name, what="memory", id=fid)
            )
        return self.memories[fid]

    def _relation(self, r: dict) -> None:
        source, target = self._memory_ref(r, "source"), self._memory_ref(r, "target")
        kind = self._choice(r, "kind", RelationKind.values)
        if source == target or (source, target, kind) in self.relation_seen:
            raise ImportFileError(
                self.line, BAD_VALUE.format(type="relation", field="target", value=r["target"])
            )
        self.relation_seen.add((source, target, kind))
        self.relations.append(
            Relation(
                source_id=source,
                target_id=target,
                kind=kind,
                reason=str(r.get("reason") or ""),
                actor=self._principal_ref(r, "actor"),
            )
        )
        if len(self.relations) >= BATCH:
            self._flush_relations()

    def _flush_relations(self) -> None:
        copy_insert(Relation, self.relations)
        self.relations = []

    def _summary(self, r: dict) -> None:
        self._flush_relations()
        scope = self._scope_ref(r)
        lines = get(r, "lines", list, self.line)
        kept = []
        for item in lines:
            if not isinstance(item, dict) or not isinstance(item.get("text"), str):
                raise ImportFileError(self.line, BAD_VALUE.format(type="summary", field="lines", value=item))
            ids = item.get("memory_ids") or []
            if not isinstance(ids, list) or not all(isinstance(i, int) and i in self.memories for i in ids):
                continue  # a line citing a memory the file does not carry is left out
            kept.append({**item, "memory_ids": [self.memories[i] for i in ids]})
        # Stale: the summary is derived data; the rebuild job makes it again from the memories now here.
        Summary.objects.update_or_create(
            scope=scope,
            defaults={
                "lines": kept,
                "text": "\n".join(line["text"] for line in kept),
                "cited_ids": sorted({i for line in kept for i in line["memory_ids"]}),
                "writer": str(r.get("writer") or "deterministic")[:50],
                "stale": True,
                "stale_reason": "imported: rebuilt from the memories of this installation",
                "built_at": parse_time(r, "built_at", self.line) or self.now,
                "built_by": self._principal_ref(r, "built_by"),
            },
        )

    def _audit(self, r: dict) -> None:
        self._flush_relations()
        event = AuditEvent(
            at=parse_time(r, "at", self.line, required=True),
            actor_name=get(r, "actor", str, self.line),
            action=get(r, "action", str, self.line),
            target_type=get(r, "target_type", str, self.line),
            target_id=get(r, "target_id", str, self.line),
            scope_path=get(r, "scope_path", str, self.line),
            before_status=get(r, "before", str, self.line),
            after_status=get(r, "after", str, self.line),
            reason=get(r, "reason", str, self.line),
            data=get(r, "data", dict, self.line),
            prev_hash=get(r, "prev_hash", str, self.line),
        )
        if event.compute_hash() != r.get("hash"):
            raise ImportFileError(self.line, AUDIT_HASH)
        local = None
        if event.target_type == "memory" and event.target_id.isdigit():
            local = self.memories.get(int(event.target_id))
        elif (
            event.target_type == "scope" and event.target_id.isdigit() and int(event.target_id) in self.scopes
        ):
            local = self.scopes[int(event.target_id)].pk
        self.audit_rows.append(
            ImportedAuditEvent(
                scope_import=self.scope_import,
                source_id=get(r, "id", int, self.line),
                at=event.at,
                actor_name=event.actor_name[:150],
                action=event.action[:50],
                target_type=event.target_type[:30],
                target_id=event.target_id[:64],
                local_target_id=local,
                scope_path=event.scope_path[:512],
                before_status=event.before_status[:20],
                after_status=event.after_status[:20],
                reason=event.reason,
                data=event.data,
                prev_hash=event.prev_hash[:64],
                hash=r["hash"][:64],
            )
        )
        if len(self.audit_rows) >= BATCH:
            self._flush_audit()

    def _flush_audit(self) -> None:
        copy_insert(ImportedAuditEvent, self.audit_rows)
        self.audit_rows = []
