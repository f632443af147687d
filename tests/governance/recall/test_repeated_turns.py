"""A turn said again word for word takes one place in each search list (governance.recall.fusion): a small-
talk line repeated all through a long conversation must not fill the results and push out the one turn the
question is about."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from governance.propagation import embed_memories
from governance.recall import fusion, recall_memories
from governance.services.events import event_ingest

REPEATED = "How are the kids doing?"


def _session(scope, session, days_ago, lines):
    turns = [
        {"role": "user", "speaker": who, "content": text, "ref": f"{session}:{i}"}
        for i, (who, text) in enumerate(lines)
    ]
    created = event_ingest(
        scope=scope, session=session, at=timezone.now() - timedelta(days=days_ago), turns=turns, actor=None
    )
    embed_memories([m.pk for m in created])
    return {m.source_ref: m for m in created if m.kind == "episodic"}


def _history(scope):
    turns = {}
    for day in range(12):
        turns |= _session(
            scope,
            f"s{day}",
            200 - day,
            [("Melanie", REPEATED), ("Sam", "Good, busy as always."), ("Melanie", REPEATED)],
        )
    turns |= _session(
        scope, "trip", 100, [("Sam", "Last weekend I went camping in the mountains with my kids.")]
    )
    return turns


def test_a_repeated_small_talk_line_takes_one_place_and_the_answer_comes_in(project_scope, agent):
    turns = _history(project_scope)
    results = recall_memories(
        principal=agent,
        scope=project_scope,
        query="Which activities did Sam share with their kids?",
        k=5,
        strategy="full",
    )
    texts = [r["text"] for r in results]
    assert texts.count(REPEATED) == 1
    assert turns["trip:0"].pk in [r["memory_id"] for r in results]


def test_the_copy_kept_is_the_latest_one_said(project_scope, agent):
    turns = _history(project_scope)
    latest = max((m for m in turns.values() if m.text == REPEATED), key=lambda m: (m.occurred_at, m.pk))
    results = recall_memories(
        principal=agent, scope=project_scope, query="How are the kids doing?", k=10, strategy="vector"
    )
    assert [r["memory_id"] for r in results if r["text"] == REPEATED] == [latest.pk]


def test_only_turns_collapse_and_only_the_same_speaker_s_words():
    at = timezone.now()
    rows = {
        1: {"kind": "episodic", "scope_id": 1, "speaker": "Melanie", "text": REPEATED, "occurred_at": at},
        2: {
            "kind": "episodic",
            "scope_id": 1,
            "speaker": "Melanie",
            "text": "how are the  KIDS doing?",
            "occurred_at": at + timedelta(days=1),
        },
        3: {"kind": "episodic", "scope_id": 1, "speaker": "Sam", "text": REPEATED, "occurred_at": at},
        4: {"kind": "semantic", "scope_id": 1, "speaker": "", "text": "Export as PDF.", "occurred_at": None},
        5: {"kind": "semantic", "scope_id": 1, "speaker": "", "text": "Export as PDF.", "occurred_at": None},
    }
    lists = {"vector": [(1, 0.9), (2, 0.9), (3, 0.9), (4, 0.8), (5, 0.8)], "lexical": [(5, 0.7), (1, 0.6)]}
    collapsed = fusion.collapse_repeats(lists, rows)
    assert collapsed["vector"] == [(2, 0.9), (3, 0.9), (4, 0.8), (5, 0.8)]
    assert collapsed["lexical"] == [(5, 0.7), (2, 0.6)]


def test_keys_computed_before_fusion_are_reused_and_the_missing_ones_added(monkeypatch):
    """The keyword stage computes its rows' repeat keys while the query is embedded (fusion.repeat_keys);
    fusion then computes only the keys of rows it has none for, and collapses as with none computed."""
    at = timezone.now()
    rows = {
        1: {"kind": "episodic", "scope_id": 1, "speaker": "Melanie", "text": REPEATED, "occurred_at": at},
        2: {
            "kind": "episodic",
            "scope_id": 1,
            "speaker": "Melanie",
            "text": REPEATED.upper(),
            "occurred_at": at,
        },
        3: {"kind": "episodic", "scope_id": 1, "speaker": "Sam", "text": "Fine, thanks", "occurred_at": at},
    }
    lists = {"vector": [(1, 0.9), (2, 0.8), (3, 0.7)], "lexical": [(3, 0.5), (1, 0.4)]}
    expected = fusion.collapse_repeats(lists, rows)
    known = fusion.repeat_keys({i: rows[i] for i in (1, 3)}, {})
    computed = []
    real = fusion.repeat_key
    monkeypatch.setattr(fusion, "repeat_key", lambda row: computed.append(row["text"]) or real(row))
    assert fusion.collapse_repeats(lists, rows, known) == expected
    assert computed == [REPEATED.upper()]  # only the row without a key
    assert set(known) == {1, 2, 3}
