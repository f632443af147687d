"""Write-time filtering of small talk: a turn with nothing to remember is stored as its episode but never
embedded, keyword-indexed or recalled as evidence; a turn with content, a tool turn and a turn in a
scope written while the filter is off are untouched."""

import pytest

from governance.models import Memory
from governance.propagation import needs_embedding
from governance.recall.packet import assemble_context, recall_memories
from governance.services.events import event_ingest
from governance.services.small_talk import is_small_talk, small_talk_turn
from governance.tasks import embed_memories


@pytest.mark.parametrize(
    "text",
    [
        "ok",
        "OK.",
        "okkk",
        "thanks!",
        "Thank you so much!",
        "haha nice",
        "hahaha",
        "lol",
        "Sounds great!",
        "Bye!",
        "hi",
        "🙂",
        "...",
        "好的",
        "好的，谢谢！",
        "哈哈哈",
        "收到",
        "嗯嗯",
        "没问题",
        "谢谢你啦",
    ],
)
def test_acknowledgements_greetings_and_reactions_are_small_talk(text):
    assert is_small_talk(text)


@pytest.mark.parametrize(
    "text",
    [
        "The client wants PPTX.",
        "Yes, 3pm works",
        "No, PDF please",
        "ok, send it to Anna",
        "Thanks, Melanie!",
        "I love painting",
        "5",
        "haha my dog ate the charger",
        "好的，明天发PPT",
        "我们用MySQL",
        "谢谢，发到邮箱",
        "ok " * 30,
    ],
)
def test_a_turn_with_a_content_word_a_name_or_a_number_is_kept(text):
    assert not is_small_talk(text)


def test_tool_turns_are_never_small_talk():
    assert small_talk_turn("ok", "user") and small_talk_turn("ok", "assistant")
    assert not small_talk_turn("ok", "tool_result") and not small_talk_turn("ok", "tool_call")


TURNS = [
    {"role": "user", "content": "Export the quarterly deck as PPTX for the Acme board", "ref": "u1"},
    {"role": "assistant", "content": "ok", "ref": "a1"},
    {"role": "user", "content": "thanks!", "ref": "u2"},
    {"role": "assistant", "content": "haha nice", "ref": "a2"},
    {"role": "tool_result", "content": "ok", "ref": "r1", "call_id": "c1"},
]


def test_small_talk_is_stored_but_not_embedded_indexed_or_recalled(project_scope, owner):
    created = event_ingest(scope=project_scope, session="s1", at=None, turns=TURNS, actor=None)
    episodes = {m.source_ref: m for m in created if m.kind == "episodic"}
    assert set(episodes) == {"u1", "a1", "u2", "a2", "r1"}  # every turn is kept as its episode
    small = {ref for ref, m in episodes.items() if m.meta.get("small_talk")}
    assert small == {"a1", "u2", "a2"}
    assert all(episodes[ref].lexical == "" for ref in small) and episodes["u1"].lexical
    pending = set(needs_embedding(None).filter(pk__in=[m.pk for m in created]).values_list("pk", flat=True))
    assert pending == {m.pk for m in created} - {episodes[ref].pk for ref in small}
    embed_memories([m.pk for m in created])
    vectors = dict(
        Memory.objects.filter(pk__in=[m.pk for m in created]).values_list("source_ref", "embedding")
    )
    assert vectors["a1"] is None and vectors["u2"] is None and vectors["u1"] is not None
    assert vectors["r1"] is not None  # a tool's "ok" is a result, embedded

    for query in ("thanks", "haha nice", "ok"):
        found = {r["memory_id"] for r in recall_memories(principal=owner, scope=project_scope, query=query)}
        assert not found & {episodes[ref].pk for ref in small}, query
    packet = assemble_context(
        principal=owner,
        scope=project_scope,
        query="thanks, how is the deck exported?",
        budget_tokens=1500,
        session="s1",
    )["packet"]
    evidence = {b["memory_id"] for b in packet["evidence"]}
    assert episodes["u1"].pk in evidence | {b["memory_id"] for b in packet["recent"]}
    assert not evidence & {episodes[ref].pk for ref in small}


def test_with_the_filter_off_every_turn_is_embedded(project_scope, settings):
    settings.MEMORY_SMALL_TALK_FILTER = False
    created = event_ingest(scope=project_scope, session="s1", at=None, turns=TURNS, actor=None)
    assert not any(m.meta.get("small_talk") for m in created)
    assert needs_embedding(None).filter(pk__in=[m.pk for m in created]).count() == len(created)


def test_the_report_counts_marked_turns_and_marked_evidence_of_a_benchmark_file(tmp_path):
    import json
    from io import StringIO

    from django.core.management import call_command

    sample = [
        {
            "sample_id": "conv-1",
            "conversation": {
                "speaker_a": "Ann",
                "speaker_b": "Bo",
                "session_1_date_time": "1:56 pm on 8 May, 2023",
                "session_1": [
                    {"speaker": "Ann", "dia_id": "D1:1", "text": "I adopted a cat called Miso last week."},
                    {"speaker": "Bo", "dia_id": "D1:2", "text": "haha nice"},
                    {"speaker": "Ann", "dia_id": "D1:3", "text": "Thanks!"},
                ],
            },
            "qa": [
                {
                    "question": "What is Ann's cat called?",
                    "answer": "Miso",
                    "evidence": ["D1:1"],
                    "category": 4,
                },
                {"question": "What did Bo say?", "answer": "haha nice", "evidence": ["D1:2"], "category": 4},
            ],
        }
    ]
    path = tmp_path / "conv.json"
    path.write_text(json.dumps(sample))
    out = StringIO()
    call_command("small_talk_report", "--file", str(path), "--format", "locomo", "--show", "5", stdout=out)
    text = out.getvalue()
    assert "3 turns, 2 small talk" in text and "2 evidence turns of 2 questions, 1 of them marked" in text
    assert "EVIDENCE" in text and "haha nice" in text
