"""One turn, one episode (issue 25): two importers of one scope at the same time stored duplicate episodes
(891 for 788 LoCoMo turns). Writers of one session's turns now take turns, and the unique index
memory_one_episode_per_turn holds it whatever the caller."""

from __future__ import annotations

import json
from collections import Counter
from io import StringIO

import pytest
from django.core.management import call_command

from governance.errors import InvalidInput, TurnAlreadyStored
from governance.models import Memory
from governance.services.events import event_ingest
from governance.services.memory import MemoryInput, memory_record
from tests.governance.services.test_concurrency import race


def conversation_file(tmp_path, sessions: int, turns: int) -> str:
    lines = [
        {
            "scope": "imp/race",
            "session": f"s{s}",
            "at": f"2026-03-0{s + 1}T10:00:{i:02d}Z",
            "role": "user" if i % 2 == 0 else "assistant",
            "content": f"In session {s} turn {i} we talked about the harbour ferries number {s * 100 + i}.",
            "ref": f"D{s}:{i}",
        }
        for s in range(sessions)
        for i in range(turns)
    ]
    path = tmp_path / "race.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines), encoding="utf-8")
    return str(path)


@pytest.mark.django_db(transaction=True)
def test_concurrent_imports_into_one_scope_store_each_turn_once(tmp_path, monkeypatch):
    from governance.management.commands import import_conversations

    monkeypatch.setattr(import_conversations, "BATCH_TURNS", 4)  # many small chunks interleave
    path = conversation_file(tmp_path, sessions=3, turns=20)

    results = race(
        3,
        lambda i: call_command(
            "import_conversations", path, "--no-embed", stdout=StringIO(), stderr=StringIO()
        ),
    )

    assert [r for r in results if isinstance(r, Exception)] == []
    episodes = Memory.objects.filter(scope__path="imp/race", kind="episodic")
    refs = Counter(episodes.values_list("session", "source_ref"))
    assert len(refs) == 60
    assert max(refs.values()) == 1
    assert episodes.count() == 60


@pytest.mark.django_db
def test_the_database_refuses_a_second_episode_of_one_turn(project_scope, agent):
    def turn(text: str) -> MemoryInput:
        return MemoryInput(
            scope=project_scope,
            kind="episodic",
            text=text,
            source_kind="user",
            source_ref="D1:3",
            session="s1",
        )

    memory_record(item=turn("We moved the demo to Friday."), actor=agent)
    with pytest.raises(TurnAlreadyStored):
        memory_record(item=turn("Something else entirely."), actor=agent)
    # Another session, or no ref at all, is another turn.
    memory_record(
        item=MemoryInput(**{**turn("We moved the demo to Friday.").__dict__, "session": "s2"}), actor=agent
    )
    memory_record(item=MemoryInput(**{**turn("No ref here.").__dict__, "source_ref": ""}), actor=agent)
    memory_record(item=MemoryInput(**{**turn("No ref here.").__dict__, "source_ref": ""}), actor=agent)
    assert Memory.objects.filter(scope=project_scope, source_ref="D1:3").count() == 2


@pytest.mark.django_db
def test_one_event_naming_one_ref_twice_stores_it_once_or_is_refused(project_scope, agent):
    same = {"role": "user", "content": "The ferry leaves at nine.", "ref": "r1"}
    created = event_ingest(scope=project_scope, session="s", at=None, turns=[same, same], actor=agent)
    assert [m.source_ref for m in created if m.kind == "episodic"] == ["r1"]

    other = {"role": "user", "content": "The ferry leaves at ten.", "ref": "r2"}
    clash = {**other, "content": "Something different."}
    with pytest.raises(InvalidInput) as refused:
        event_ingest(scope=project_scope, session="s", at=None, turns=[other, clash], actor=agent)
    assert refused.value.extra["field"] == "turns[1].ref"
    assert not Memory.objects.filter(scope=project_scope, source_ref="r2").exists()
