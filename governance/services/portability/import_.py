"""Import an exported scope subtree into a scope of this installation, in one transaction: ids remapped,
principals matched by name (or created, as names without a sign-in), grants dropped unless asked for,
every invariant checked before anything is kept; a bad file changes nothing and names its bad line.

Trust: only an owner of the target may import (Action.IMPORT). A memory in force in the file (confirmed
there) is in force here as confirmed by the importing owner, at the import; the source's confirmation is
kept as provenance in meta["imported"]. In a four-eyes target scope a long-term commitment comes in as a
proposal for two reviewers instead: one person's import never stands in for two."""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from django.db import transaction
from django.utils import timezone

from governance.errors import DomainError, InvalidInput, NotFound, PermissionDenied
from governance.models import (
    ImportedAuditEvent,
    Memory,
    Principal,
    PrincipalKind,
    Relation,
    Role,
    Scope,
    ScopeImport,
)
from governance.permissions import Action, nearest_scope, require
from governance.services.audit import AuditEntry, audit_record
from governance.services.portability.format import (
    AFTER_END,
    BAD_VALUE,
    COUNT_MISMATCH,
    DUPLICATE_ID,
    FORMAT_NAME,
    FORMAT_VERSION,
    NO_END,
    NO_HEADER,
    NOT_JSON,
    ORDER,
    OUT_OF_ORDER,
    TOO_DEEP,
    UNKNOWN_REF,
    UNKNOWN_TYPE,
    UNKNOWN_VERSION,
    ImportFileError,
    check_strings,
    parse_time,
)
from governance.services.portability.format import (
    field as get,
)
from governance.services.portability.import_memories import MemoryRowsStep
from governance.services.portability.import_records import BATCH, RecordsStep
from governance.services.portability.names import PRINCIPAL_KIND_CLASH, local_principal  # noqa: F401
from governance.services.principal import grant_add
from governance.services.scope import parse_scope_path, scope_ensure

GRANTS_DROP, GRANTS_KEEP = "drop", "keep"
NEW_WORKSPACE_DENIED = (
    "Importing into a new workspace is for the site's administrator (manage.py import_scope); import into a "
    "scope you own instead."
)
GRANTS_CHOICE = "grants is `drop` (the default: no grant of the file is given) or `keep`."
COUNT_KEYS = {
    "scope": "scopes",
    "principal": "principals",
    "grant": "grants",
    "memory": "memories",
    "tombstone": "tombstones",
    "relation": "relations",
    "summary": "summaries",
    "audit": "audit",
}


@dataclass
class ImportResult:
    root: Scope
    scope_import: ScopeImport
    counts: Counter = field(default_factory=Counter)
    memory_ids: list[int] = field(default_factory=list)  # new ids of the imported (not forgotten) memories
    grants_dropped: int = 0
    proposed_for_four_eyes: int = 0


def _target_check(actor: Principal | None, into: str) -> None:
    """Only an owner of the target (or, for a path that does not exist yet, of its nearest existing
    ancestor) may import; a new workspace only the system (the command line) may open."""
    scope = nearest_scope("/".join(parse_scope_path(into)))
    if scope is not None:
        require(actor, scope, Action.IMPORT)
        return
    if actor is not None:
        raise PermissionDenied(NEW_WORKSPACE_DENIED, action=str(Action.IMPORT))


def scope_import_check(*, into: str, actor: Principal | None) -> None:
    """Whether `actor` may import into `into` (NotFound / PermissionDenied otherwise), before a file is read."""
    _target_check(actor, into)


def scope_import(
    *,
    lines: Iterable[str | bytes],
    into: str,
    actor: Principal | None,
    grants: str = GRANTS_DROP,
    principal_map: dict[str, str] | None = None,
    progress: Callable[[int, int], None] | None = None,
    dry_run: bool = False,
) -> ImportResult:
    """Read an export file (an iterable of its lines) into the scope at `into`, which the export's root
    becomes. One transaction; ImportFileError (with the line) on a bad file, and then nothing is kept.
    `dry_run`: check the whole file and count what it would bring, then roll everything back (a preview)."""
    if grants not in (GRANTS_DROP, GRANTS_KEEP):
        raise InvalidInput(GRANTS_CHOICE, field="grants")
    _target_check(actor, into)
    importer = _Importer(
        into=into, actor=actor, grants=grants, principal_map=principal_map or {}, progress=progress
    )
    try:
        with transaction.atomic():
            result = importer.run(lines)
            if dry_run:
                raise _Preview(result)
            return result
    except _Preview as preview:
        return preview.result


class _Preview(Exception):
    """Raised inside the import's transaction to roll a preview back."""

    def __init__(self, result: ImportResult) -> None:
        self.result = result


class _Importer(MemoryRowsStep, RecordsStep):
    def __init__(self, *, into, actor, grants, principal_map, progress) -> None:
        self.into = "/".join(parse_scope_path(into))
        self.actor, self.grants, self.principal_map, self.progress = actor, grants, principal_map, progress
        self.now = timezone.now()
        self.scopes: dict[int, Scope] = {}
        self.principals: dict[int, Principal | None] = {}
        self.principal_names: dict[int, str] = {}
        self.memories: dict[int, int] = {}  # file id -> new id
        self.pending: list[tuple[int, int, Memory]] = []  # (line, file id, unsaved row)
        self.keys: dict[tuple[int, str], dict] = {}  # (scope id, key) -> {revisions, active, max}
        self.existing_keys: dict[int, set[str]] = {}
        self.counts: Counter = Counter()
        self.relations: list[Relation] = []
        self.relation_seen: set[tuple[int, int, str]] = set()
        self.audit_rows: list[ImportedAuditEvent] = []
        self.header: dict = {}
        self.section = "header"
        self.total = 0
        self.line = 0
        self.result: ImportResult | None = None

    # --- the walk -------------------------------------------------------------------------------------

    def run(self, lines: Iterable[str | bytes]) -> ImportResult:
        ended = False
        for self.line, raw in enumerate(lines, start=1):
            if isinstance(raw, bytes):
                try:
                    raw = raw.decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise ImportFileError(self.line, NOT_JSON) from exc
            if not raw.strip():
                continue
            if ended:
                raise ImportFileError(self.line, AFTER_END)
            try:
                record = json.loads(raw)
            except (ValueError, RecursionError) as exc:  # a line nested too deep to decode is not a record
                raise ImportFileError(self.line, NOT_JSON) from exc
            if not isinstance(record, dict):
                raise ImportFileError(self.line, NOT_JSON)
            check_strings(record, self.line)
            kind = record.get("type")
            if self.line == 1 or not self.header:
                self._header(record)
                continue
            if kind not in ORDER or kind == "header":
                raise ImportFileError(self.line, UNKNOWN_TYPE.format(type=kind))
            if ORDER[kind] < ORDER[self.section]:
                raise ImportFileError(self.line, OUT_OF_ORDER.format(type=kind, after=self.section))
            if ORDER[kind] > ORDER["memory"] >= ORDER[self.section]:
                self._flush_memories()
                self._check_keys()
            self.section = kind
            if kind == "end":
                self._end(record)
                ended = True
                continue
            getattr(self, f"_{kind}")(record)
            self.counts[COUNT_KEYS[kind]] += 1
            done = sum(self.counts.values())
            if self.progress and done % BATCH == 0:
                self.progress(done, self.total)
        if not self.header:
            raise ImportFileError(None, NO_HEADER)
        if not ended:
            raise ImportFileError(None, NO_END)
        if self.progress:
            self.progress(sum(self.counts.values()), self.total)
        return self._finish()

    def _header(self, record: dict) -> None:
        if record.get("type") != "header" or record.get("format") != FORMAT_NAME:
            raise ImportFileError(self.line, NO_HEADER)
        if record.get("version") != FORMAT_VERSION:
            raise ImportFileError(
                self.line, UNKNOWN_VERSION.format(version=record.get("version"), known=FORMAT_VERSION)
            )
        source = get(record, "source", dict, self.line)
        counts = get(record, "counts", dict, self.line)
        self.total = sum(v for v in counts.values() if isinstance(v, int))
        self.header = record
        self.scope_import = ScopeImport(
            root=scope_ensure(path=self.into, actor=self.actor),
            actor=self.actor,
            source_installation=str(source.get("installation") or "")[:200],
            source_host=str(source.get("host") or "")[:255],
            source_root=str(get(record, "root", str, self.line))[:512],
            exported_at=parse_time(record, "exported_at", self.line, required=True),
            format_version=FORMAT_VERSION,
            imported_at=self.now,
        )
        self.scope_import.save()
        if self.progress:
            self.progress(0, self.total)

    def _end(self, record: dict) -> None:
        counts = get(record, "counts", dict, self.line)
        for name in COUNT_KEYS.values():
            if counts.get(name, 0) != self.counts[name]:
                raise ImportFileError(
                    self.line,
                    COUNT_MISMATCH.format(expected=counts.get(name, 0), type=name, found=self.counts[name]),
                )

    # --- scopes, principals, grants -------------------------------------------------------------------

    def _scope(self, r: dict) -> None:
        sid = get(r, "id", int, self.line)
        rel = get(r, "path", str, self.line)
        parent = get(r, "parent", int, self.line, optional=True)
        if sid in self.scopes:
            raise ImportFileError(self.line, DUPLICATE_ID.format(type="scope", id=sid))
        if (parent is None) != (rel == ""):
            raise ImportFileError(self.line, BAD_VALUE.format(type="scope", field="parent", value=parent))
        if parent is not None and parent not in self.scopes:
            raise ImportFileError(
                self.line, UNKNOWN_REF.format(type="scope", field="parent", what="scope", id=parent)
            )
        path = f"{self.into}/{rel}" if rel else self.into
        if parent is not None and path.rsplit("/", 1)[0] != self.scopes[parent].path:
            raise ImportFileError(self.line, BAD_VALUE.format(type="scope", field="path", value=rel))
        try:
            scope = scope_ensure(path=path, actor=self.actor)
        except DomainError as exc:  # a bad name or a path too deep: the file's fault, at this line
            raise ImportFileError(self.line, TOO_DEEP.format(path=rel)) from exc
        if r.get("require_two_reviewers") is True and not scope.require_two_reviewers:
            # Never loosen a target's four-eyes; take the file's when it asks for it.
            scope.require_two_reviewers = True
            scope.save(update_fields=["require_two_reviewers"])
        self.scopes[sid] = scope

    def _principal(self, r: dict) -> None:
        pid = get(r, "id", int, self.line)
        name = get(r, "name", str, self.line)
        kind = get(r, "kind", str, self.line)
        if kind not in PrincipalKind.values or not name.strip() or len(name) > 150:
            raise ImportFileError(self.line, BAD_VALUE.format(type="principal", field="kind", value=kind))
        if pid in self.principals:
            raise ImportFileError(self.line, DUPLICATE_ID.format(type="principal", id=pid))
        principal = self._local_principal(name, kind)
        self.principals[pid] = principal
        self.principal_names[pid] = name

    def _local_principal(self, name: str, kind: str) -> Principal:
        workspace = next(iter(self.scopes.values())).workspace if self.scopes else None
        return local_principal(
            name=name,
            kind=kind,
            actor=self.actor,
            principal_map=self.principal_map,
            workspace=workspace,
            line=self.line,
        )

    def _principal_ref(self, r: dict, name: str) -> Principal | None:
        pid = get(r, name, int, self.line, optional=True)
        if pid is None:
            return None
        if pid not in self.principals:
            raise ImportFileError(
                self.line, UNKNOWN_REF.format(type=r["type"], field=name, what="principal", id=pid)
            )
        return self.principals[pid]

    def _scope_ref(self, r: dict) -> Scope:
        sid = get(r, "scope", int, self.line)
        if sid not in self.scopes:
            raise ImportFileError(
                self.line, UNKNOWN_REF.format(type=r["type"], field="scope", what="scope", id=sid)
            )
        return self.scopes[sid]

    def _grant(self, r: dict) -> None:
        principal = self._principal_ref(r, "principal")
        scope = self._scope_ref(r)
        role = get(r, "role", str, self.line)
        if role not in Role.values or principal is None:
            raise ImportFileError(self.line, BAD_VALUE.format(type="grant", field="role", value=role))
        if self.grants == GRANTS_DROP:
            self.counts["grants_dropped"] += 1
            return
        # As the importer: grant_add refuses a role above the importer's own (the file never widens it).
        grant_add(principal=principal, scope=scope, role=role, actor=self.actor)

    # --- memories -------------------------------------------------------------------------------------

    def _memory(self, r: dict) -> None:
        self._row(r, forgotten=False)

    def _tombstone(self, r: dict) -> None:
        self._row(r, forgotten=True)

    def _choice(self, r: dict, name: str, values: list[str]) -> str:
        value = get(r, name, str, self.line)
        if value not in values:
            raise ImportFileError(self.line, BAD_VALUE.format(type=r["type"], field=name, value=value))
        return value

    def _number(self, r: dict, name: str, low: float, high: float, default: float) -> float:
        value = r.get(name, default)
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not math.isfinite(value)
            or not low <= value <= high
        ):
            raise ImportFileError(self.line, BAD_VALUE.format(type=r["type"], field=name, value=value))
        return float(value)

    def _finish(self) -> ImportResult:
        self._flush_memories()
        self._check_keys()
        self._flush_relations()
        self._flush_audit()
        source = self.scope_import.source_installation
        counts = {k: v for k, v in self.counts.items()}
        event = audit_record(
            actor=self.actor,
            entry=AuditEntry(
                "scope.import",
                "scope",
                str(self.scope_import.root_id),
                self.scope_import.root.path,
                reason=f"imported {counts.get('audit', 0)} events from {source} ({self.scope_import.source_root})",
                data={
                    "import_id": self.scope_import.pk,
                    "source": source,
                    "source_root": self.scope_import.source_root,
                    "format_version": FORMAT_VERSION,
                    "counts": counts,
                    "grants": self.grants,
                },
            ),
        )
        self.scope_import.counts = counts
        self.scope_import.audit_event = event
        self.scope_import.save(update_fields=["counts", "audit_event"])
        return ImportResult(
            root=self.scope_import.root,
            scope_import=self.scope_import,
            counts=self.counts,
            memory_ids=self.result_ids,
            grants_dropped=self.counts["grants_dropped"],
            proposed_for_four_eyes=self.counts["proposed_for_four_eyes"],
        )


__all__ = ["GRANTS_DROP", "GRANTS_KEEP", "ImportResult", "NotFound", "scope_import", "scope_import_check"]
