"""Memory records of the import (docs/portability.md): each `memory` / `tombstone` line checked and queued,
the queue written in batches, source references and meta remapped to the ids made here. A step of
`import_._Importer`, which holds the state (`memories`, `scopes`, `line`, the batches) and the helpers this
uses (`_choice`, `_number`, `_scope_ref`, `_principal_ref`)."""

from __future__ import annotations

import math
import re

from django.db import IntegrityError, transaction

from governance.models import (
    Kind,
    Memory,
    SourceKind,
    Status,
    Tier,
    activation,
    content_hash,
    lexical,
)
from governance.services import near_duplicate
from governance.services.bulk import copy_insert
from governance.services.four_eyes import NEEDED, import_needs_two
from governance.services.outbox import outbox_emit
from governance.services.portability.format import (
    BAD_VALUE,
    DUPLICATE_ID,
    ImportFileError,
    parse_time,
)
from governance.services.portability.format import (
    field as get,
)
from governance.services.portability.import_records import BATCH
from governance.services.portability.names import PRINCIPAL_KIND_CLASH, local_principal  # noqa: F401

GRANTS_DROP, GRANTS_KEEP = "drop", "keep"
_MEMORY_REF = re.compile(r"^memory:(\d+)$")
# Pending decisions of the source installation (four-eyes approvals and end requests, by principal ids
# there): never carried, or a file could name local principals as having approved. Four-eyes starts afresh.
UNCARRIED_META = ("approvals", "approvals_needed", "end_requests")


class MemoryRowsStep:
    def _row(self, r: dict, *, forgotten: bool) -> None:
        line, fid = self.line, get(r, "id", int, self.line)
        scope = self._scope_ref(r)
        kind = self._choice(r, "kind", Kind.values)
        key = get(r, "key", str, line, optional=True)
        if key is not None and (not key.strip() or len(key) > 200):
            raise ImportFileError(line, BAD_VALUE.format(type=r["type"], field="key", value=key))
        revision = get(r, "revision", int, line)
        if revision < 1:
            raise ImportFileError(line, BAD_VALUE.format(type=r["type"], field="revision", value=revision))
        tier = self._choice(r, "tier", Tier.values)
        created = parse_time(r, "created_at", line)
        if forgotten:
            digest = get(r, "content_hash", str, line)
            at = parse_time(r, "forgotten_at", line) or self.now
            memory = Memory(
                scope=scope,
                kind=kind,
                key=key,
                revision=revision,
                text="",
                lexical="",
                source_kind=SourceKind.USER,
                status=Status.FORGOTTEN,
                tier=tier,
                content_hash=digest[:64],
                purged_at=at,
                decay_rate=0.1,
                meta={
                    "imported": {
                        "source": self.scope_import.source_installation,
                        "id": fid,
                        "forgotten_at": r.get("forgotten_at"),
                        "forgotten_by": str(r.get("forgotten_by") or "")[:150],
                        "created_at": r.get("created_at"),
                        "hash_keyed_at_source": True,
                    }
                },
            )
            self._key_seen(scope, key, revision, Status.FORGOTTEN, line)
            self._queue(line, fid, memory)
            return
        status = self._choice(r, "status", Status.values)
        text = get(r, "text", str, line)
        if not text.strip() or len(text) > 20_000:
            raise ImportFileError(line, BAD_VALUE.format(type="memory", field="text", value=text[:40]))
        source_kind = self._choice(r, "source_kind", SourceKind.values)
        valid_from, valid_until = parse_time(r, "valid_from", line), parse_time(r, "valid_until", line)
        if valid_from and valid_until and valid_until <= valid_from:
            raise ImportFileError(
                line, BAD_VALUE.format(type="memory", field="valid_until", value=r["valid_until"])
            )
        occurred = parse_time(r, "occurred_at", line) or created or self.now
        decay = self._number(r, "decay_rate", 0, 1e6, 0.1)
        a0 = self._number(r, "activation_a0", 0, 1e6, 1.0)
        log_k = r.get("activation_log_k")
        if isinstance(log_k, bool) or not isinstance(log_k, int | float) or not math.isfinite(log_k):
            log_k = activation.initial_log_k(a0, decay, occurred)
        meta = {
            k: v
            for k, v in (get(r, "meta", dict, line, optional=True) or {}).items()
            if k not in UNCARRIED_META
        }
        confirmed_at = parse_time(r, "confirmed_at", line)
        confirmed_by = self._principal_ref(r, "confirmed_by")
        provenance = {
            "source": self.scope_import.source_installation,
            "id": fid,
            "created_at": r.get("created_at"),
        }
        in_force = confirmed_at is not None
        if in_force:
            # The name as the file says it (not the principal it was matched or mapped to here).
            provenance["confirmed_by"] = (
                self.principal_names[r["confirmed_by"]] if confirmed_by is not None else "system"
            )
            provenance["confirmed_at"] = r.get("confirmed_at")
        speaker = str(r.get("speaker") or "")[:200]
        memory = Memory(
            scope=scope,
            kind=kind,
            key=key,
            revision=revision,
            text=text,
            lexical=lexical.lexical_text(text, speaker),
            source_kind=source_kind,
            source_ref=self._source_ref(str(r.get("source_ref") or "")[:500]),
            session=str(r.get("session") or "")[:200],
            speaker=speaker,
            call_id=str(r.get("call_id") or "")[:200],
            task_type=str(r.get("task_type") or "")[:100],
            occurred_at=occurred,
            status=status,
            confidence=self._number(r, "confidence", 0, 1, 0.5),
            importance=self._number(r, "importance", 0, 1, 0.5),
            tier=tier,
            valid_from=valid_from,
            valid_until=valid_until,
            content_hash=content_hash(text),
            activation_a0=a0,
            decay_rate=decay,
            activation_log_k=float(log_k),
            last_reinforced_at=parse_time(r, "last_reinforced_at", line),
            reinforcement_count=max(0, int(self._number(r, "reinforcement_count", 0, 1e12, 0))),
            created_by=self._principal_ref(r, "created_by"),
            # In force here as the importing owner's act (the system's on the command line); the source's
            # confirmation stays as provenance only: no person of this installation is named for it.
            confirmed_by=self.actor if in_force else None,
            confirmed_at=self.now if in_force else None,
            meta={**self._remap_meta(meta), "imported": provenance},
        )
        if (
            in_force
            and status == Status.ACTIVE
            and self.actor is not None
            and import_needs_two(memory, self.__dict__.setdefault("_four_eyes", {}))
        ):  # proposed: two reviewers put it in force
            memory.status, memory.confirmed_by, memory.confirmed_at = Status.PROPOSED, None, None
            memory.meta = {**memory.meta, "requested_status": Status.ACTIVE, NEEDED: 2}
            status = Status.PROPOSED
            self.counts["proposed_for_four_eyes"] += 1
        if status == Status.ACTIVE:
            if self._in_force_already(memory):
                status = Status.PROPOSED
            else:
                self._said_in_force(memory)
        self._key_seen(scope, key, revision, status, line)
        self._queue(line, fid, memory)

    def _in_force_already(self, memory: Memory) -> bool:
        """In force once (docs/governance.md): an unkeyed statement of the file that a memory in force in its
        target scope already says (held before the import, or an earlier row of the file), as a person's
        write in force of it would reinforce that memory (near_duplicate.absorbs), comes in as a proposal
        marked with that memory (`near_duplicate_of`, decision in_force); confirming it is refused
        (`in_force_copy`). Nothing of the file is dropped, and nothing is in force twice.
        The search (near_duplicate_find, one query) runs only when it can find something: the scope held
        statements of this kind in force before the import, or an earlier statement of the file in force
        holds every term of this one (`_said_in_force`); a file of distinct statements imported into a new
        scope sends none."""
        if memory.key is not None or not near_duplicate.checked(memory.kind, None):
            return False
        group = (memory.scope_id, memory.kind, memory.task_type)
        said = self._in_force_terms.get(group, {})
        words = set(lexical.terms(memory.text))
        earlier = set.intersection(*(said.get(t, set()) for t in words)) if words and said else set()
        if not earlier and not self._held_before(group):
            return False
        if earlier & self._queued_in_force:
            self._flush_memories()  # the earlier statement is still queued: written, the search sees it
        found = near_duplicate.near_duplicate_find(
            scope_id=memory.scope_id,
            kind=memory.kind,
            text=memory.text,
            task_type=memory.task_type,
            statuses=(Status.ACTIVE,),
        )
        if found is None or not near_duplicate.absorbs(memory.kind, found, in_force=True):
            return False
        memory.status, memory.confirmed_by, memory.confirmed_at = Status.PROPOSED, None, None
        memory.meta = {
            **memory.meta,
            "requested_status": Status.ACTIVE,
            near_duplicate.OF: {**found.as_dict(), "decision": "in_force"},
        }
        self.counts["already_in_force"] += 1
        return True

    def _said_in_force(self, memory: Memory) -> None:
        """Index a statement of the file that comes in force (keyed or not: either can be what a later one
        repeats) by its terms, for `_in_force_already`."""
        if not near_duplicate.checked(memory.kind, None):
            return
        group = (memory.scope_id, memory.kind, memory.task_type)
        self._held_before(group)  # read before any of the file's statements of the group is written
        number = self._in_force_count = getattr(self, "_in_force_count", 0) + 1
        for term in lexical.terms(memory.text):
            self._in_force_terms.setdefault(group, {}).setdefault(term, set()).add(number)
        self._queued_in_force.add(number)

    def _held_before(self, group: tuple) -> bool:
        """Whether the target scope held statements of this kind and task type in force before the import."""
        held = self.__dict__.setdefault("_held", {})
        if group not in held:
            scope_id, kind, task_type = group
            held[group] = Memory.objects.filter(
                scope_id=scope_id, kind=kind, task_type=task_type, status=Status.ACTIVE
            ).exists()
        return held[group]

    @property
    def _in_force_terms(self) -> dict:
        """(scope id, kind, task type) -> term -> the numbers of the file's statements in force holding it."""
        return self.__dict__.setdefault("_terms_in_force", {})

    @property
    def _queued_in_force(self) -> set[int]:
        """The numbers of those statements still queued (not written yet)."""
        return self.__dict__.setdefault("_queued_numbers", set())

    def _queue(self, line: int, fid: int, memory: Memory) -> None:
        if fid in self.memories or fid in self._pending_ids:
            raise ImportFileError(line, DUPLICATE_ID.format(type="memory", id=fid))
        self.pending.append((line, fid, memory))
        self._pending_ids.add(fid)
        if len(self.pending) >= BATCH:
            self._flush_memories()

    @property
    def _pending_ids(self) -> set[int]:
        if not hasattr(self, "_pids"):
            self._pids: set[int] = set()
        return self._pids

    def _flush_memories(self) -> None:
        if not self.pending:
            return
        rows = [m for _, _, m in self.pending]
        try:
            with transaction.atomic():
                copy_insert(Memory, rows)
        except IntegrityError as exc:
            raise ImportFileError(
                self.pending[0][0],
                f"the memories from this line on break an invariant of the "
                f"database: {str(exc).splitlines()[0]}",
            ) from exc
        for _, fid, memory in self.pending:
            self.memories[fid] = memory.pk
        live = [m.pk for m in rows if m.status != Status.FORGOTTEN]
        if live:
            outbox_emit(topic="memory.created", payload={"memory_ids": live})
        self.result_ids.extend(live)
        self.pending = []
        self._pids = set()
        self._queued_in_force.clear()

    @property
    def result_ids(self) -> list[int]:
        if not hasattr(self, "_result_ids"):
            self._result_ids: list[int] = []
        return self._result_ids

    def _source_ref(self, ref: str) -> str:
        match = _MEMORY_REF.match(ref)
        if match and int(match.group(1)) in self.memories:
            return f"memory:{self.memories[int(match.group(1))]}"
        return ref

    def _remap_meta(self, meta: dict) -> dict:
        """Memory ids named in meta (a correction's target, a promotion's episodes) turned into the new ids;
        an id the import does not carry is left out."""

        def walk(node):
            if isinstance(node, dict):
                out = {}
                for k, v in node.items():
                    if k in ("memory_id", "contradicts") and isinstance(v, int) and not isinstance(v, bool):
                        out[k] = self.memories.get(v)
                    elif k == "episode_ids" and isinstance(v, list):
                        out[k] = [self.memories[i] for i in v if isinstance(i, int) and i in self.memories]
                    else:
                        out[k] = walk(v)
                return out
            if isinstance(node, list):
                return [walk(v) for v in node]
            return node

        return walk(meta)

    # --- the end --------------------------------------------------------------------------------------
