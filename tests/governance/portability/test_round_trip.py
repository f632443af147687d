"""Issue 14, portability: the demo workspace exported and imported into a fresh workspace answers the same
queries with the same packets (same texts, slots, scores and negatives), apart from ids and paths."""

from __future__ import annotations

import json
import re
from datetime import timedelta

from django.utils import timezone

from devtools.demo import DEMO_TURNS, load_demo
from governance.models import Memory, Principal, Relation, RelationKind, Scope, ScopeImport, Status
from governance.propagation import embed_memories
from governance.recall import assemble_context
from governance.services.portability import scope_export_lines, scope_import

ID_KEYS = {"memory_id", "contradicts"}


def _as_source(value, ids: dict[int, int], source: str, target: str, key: str = ""):
    """The copy's packet told in the source's terms: each imported memory's id replaced by the id it had in
    the file (in id fields and in the reasons, such as "memories 14 and 12 contradict"; never in a memory's
    text), paths by the source's."""
    if isinstance(value, dict):
        return {
            k: (
                ids.get(v, -1)
                if k in ID_KEYS and isinstance(v, int)
                else _as_source(v, ids, source, target, k)
            )
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_as_source(v, ids, source, target, key) for v in value]
    if isinstance(value, str):
        value = re.sub(rf"(?<![\w-]){target}(?=/|$)", source, value)
        if key == "text":
            return value
        return re.sub(r"\b\d+\b", lambda m: str(ids.get(int(m.group()), m.group())), value)
    return value


def _packet(agent, path, query, task_type, as_of):
    result = assemble_context(
        principal=agent,
        scope=path,
        query=query,
        budget_tokens=600,
        task={"goal": query, "type": task_type},
        as_of=as_of,
        store=False,
    )
    return result["packet"]


def test_the_demo_workspace_round_trip_gives_the_same_packets_for_the_same_queries(db):
    load_demo()
    lines = list(scope_export_lines(Scope.objects.get(path="demo")))
    result = scope_import(lines=lines, into="demo-copy", actor=None, grants="keep")
    embed_memories(list(Memory.objects.exclude(status=Status.FORGOTTEN).values_list("pk", flat=True)))
    ids = {m.pk: m.meta["imported"]["id"] for m in Memory.objects.filter(pk__in=result.memory_ids)}
    agent = Principal.objects.get(name="demo-agent")
    as_of = timezone.now() + timedelta(minutes=1)
    compared = 0
    for scope_name, _session, query, task_type in DEMO_TURNS:
        original = _packet(agent, f"demo/{scope_name}", query, task_type, as_of)
        copied = _packet(agent, f"demo-copy/{scope_name}", query, task_type, as_of)
        assert _as_source(copied, ids, "demo", "demo-copy") == original, scope_name
        assert any(b.get("memory_id") for k, v in original.items() if k != "skipped" for b in v)
        compared += 1
    assert compared == len(DEMO_TURNS)
    # The negatives survived the trip: the superseded export format is named as no longer in force.
    negative = _packet(agent, "demo-copy/slides", DEMO_TURNS[0][2], "continue", as_of)["negative"]
    assert any("PDF" in block["text"] for block in negative)
    assert (
        result.counts["memories"]
        == Memory.objects.filter(scope__path__startswith="demo/").exclude(status=Status.FORGOTTEN).count()
    )


def test_imported_ids_are_remapped_and_the_supersedes_chain_points_inside_the_copy(db):
    load_demo()
    result = scope_import(
        lines=scope_export_lines(Scope.objects.get(path="demo")), into="elsewhere", actor=None
    )
    copy_ids = set(Memory.objects.filter(scope__path__startswith="elsewhere/").values_list("pk", flat=True))
    chain = Relation.objects.filter(kind=RelationKind.SUPERSEDES, source_id__in=copy_ids)
    assert chain.exists()
    assert all(r.target_id in copy_ids for r in chain)
    r2 = Memory.objects.get(scope__path="elsewhere/slides", key="export_format", revision=2)
    r1 = Memory.objects.get(scope__path="elsewhere/slides", key="export_format", revision=1)
    assert (r1.status, r2.status) == (Status.SUPERSEDED, Status.ACTIVE)
    assert Relation.objects.filter(source=r2, target=r1, kind=RelationKind.SUPERSEDES).exists()
    # The tombstone came as a tombstone: forgotten, no text, the source's hash kept.
    tomb = Memory.objects.get(scope__path="elsewhere/alex", status=Status.FORGOTTEN)
    assert tomb.text == "" and tomb.purged_at is not None and tomb.meta["imported"]["hash_keyed_at_source"]
    record = ScopeImport.objects.get(pk=result.scope_import.pk)
    assert record.audit_event.action == "scope.import"
    assert record.audit_events.count() == result.counts["audit"] > 0
    assert json.dumps(record.counts)
