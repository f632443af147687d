"""LoCoMo and LongMemEval files as published: loaded, imported by import_conversations, and measured by
`evaluate_retrieval --file F --format …` (every search path, a BM25 baseline, time order, latency)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from governance.evaluation.conversations import EvalQuestion, detect_format, load
from governance.models import Memory

LOCOMO = [
    {
        "sample_id": "conv-26",
        "conversation": {
            "speaker_a": "Caroline",
            "speaker_b": "Melanie",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                {
                    "speaker": "Caroline",
                    "dia_id": "D1:1",
                    "text": "Hey Mel! Good to see you! How have you been?",
                },
                {
                    "speaker": "Melanie",
                    "dia_id": "D1:2",
                    "text": "Hey Caroline! I'm swamped with the kids and work.",
                },
                {
                    "speaker": "Caroline",
                    "dia_id": "D1:3",
                    "text": "I went to a LGBTQ support group yesterday and it was so powerful.",
                },
                {
                    "speaker": "Melanie",
                    "dia_id": "D1:4",
                    "text": "Wow, a support group! What happened that was so awesome?",
                },
                {
                    "speaker": "Melanie",
                    "dia_id": "D1:5",
                    "text": "Look at what I painted last week.",
                    "img_url": ["x.jpg"],
                    "blip_caption": "a painting of a sunset over a lake",
                },
            ],
            "session_2_date_time": "1:14 pm on 25 May, 2023",
            "session_2": [
                {
                    "speaker": "Melanie",
                    "dia_id": "D2:1",
                    "text": "I ran a charity race for mental health last Saturday!",
                },
                {
                    "speaker": "Caroline",
                    "dia_id": "D2:2",
                    "text": "That's amazing, I'm researching adoption agencies now.",
                },
                {
                    "speaker": "Melanie",
                    "dia_id": "D2:3",
                    "text": "Went to a support group for parents with my sister.",
                },
            ],
        },
        "qa": [
            {
                "question": "When did Caroline go to the LGBTQ support group?",
                "answer": "7 May 2023",
                "evidence": ["D1:3"],
                "category": 2,
            },
            {
                "question": "What did Melanie paint?",
                "answer": "A sunset",
                "evidence": ["D1:5"],
                "category": 4,
            },
            {
                "question": "What is Caroline researching?",
                "answer": "Adoption agencies",
                "evidence": ["D2:2"],
                "category": 1,
            },
            {
                "question": "Which events has Melanie taken part in?",
                "answer": "race",
                "evidence": ["D2:1; D2:3"],
                "category": 1,
            },
            {"question": "A question without evidence", "answer": "-", "evidence": [], "category": 5},
        ],
    }
]

LONGMEMEVAL = [
    {
        "question_id": "ku_001",
        "question_type": "knowledge-update",
        "question": "What is my current personal best time in the 5K?",
        "answer": "25:50",
        "question_date": "2023/06/01 (Thu) 10:00",
        "haystack_dates": ["2023/03/02 (Thu) 09:10", "2023/04/11 (Tue) 18:30", "2023/05/20 (Sat) 02:21"],
        "haystack_session_ids": ["s_old", "s_noise", "s_new"],
        "haystack_sessions": [
            [
                {
                    "role": "user",
                    "content": "I just ran the 5K and my personal best time is 27:12.",
                    "has_answer": True,
                },
                {"role": "assistant", "content": "Congratulations on your personal best!"},
            ],
            [
                {"role": "user", "content": "Can you suggest a recipe with lentils?"},
                {"role": "assistant", "content": "Sure, a lentil soup is easy."},
            ],
            [
                {
                    "role": "user",
                    "content": "Update: I set a new personal best in the 5K, 25:50!",
                    "has_answer": True,
                },
                {"role": "assistant", "content": "That is a big improvement."},
            ],
        ],
        "answer_session_ids": ["s_old", "s_new"],
    },
    {
        "question_id": "ss_002",
        "question_type": "single-session-user",
        "question": "What soup did I ask about?",
        "answer": "lentil soup",
        "question_date": "2023/06/01 (Thu) 10:00",
        "haystack_dates": ["2023/04/11 (Tue) 18:30"],
        "haystack_session_ids": ["t1"],
        "haystack_sessions": [
            [
                {"role": "user", "content": "Can you suggest a recipe with lentils?"},
                {"role": "assistant", "content": "Sure, a lentil soup is easy.", "has_answer": True},
            ]
        ],
        "answer_session_ids": ["t1"],
    },
]


@pytest.fixture
def locomo_file(tmp_path):
    path = tmp_path / "locomo10.json"
    path.write_text(json.dumps(LOCOMO), encoding="utf-8")
    return path


@pytest.fixture
def longmemeval_file(tmp_path):
    path = tmp_path / "longmemeval_s.json"
    path.write_text(json.dumps(LONGMEMEVAL), encoding="utf-8")
    return path


def test_a_locomo_file_loads_speakers_session_dates_and_evidence(locomo_file):
    assert detect_format(locomo_file) == "locomo"
    loaded = load(locomo_file, "locomo", prefix="locomo")
    turn = next(t for t in loaded.turns if t["ref"] == "D1:3")
    assert (turn["scope"], turn["session"], turn["speaker"]) == ("locomo/conv_26", "session_1", "Caroline")
    assert turn["at"].isoformat().startswith("2023-05-08T13:5")
    painted = next(t for t in loaded.turns if t["ref"] == "D1:5")
    assert "sunset over a lake" in painted["content"]
    by_q = {q.question: q for q in loaded.questions}
    assert by_q["When did Caroline go to the LGBTQ support group?"].evidence_refs == ("D1:3",)
    assert by_q["When did Caroline go to the LGBTQ support group?"].category == "2 temporal"
    assert by_q["Which events has Melanie taken part in?"].evidence_refs == ("D2:1", "D2:3")
    assert len(loaded.questions) == 4 and len(loaded.skipped) == 1


def test_a_longmemeval_file_loads_answer_turns_and_which_evidence_is_newer(longmemeval_file):
    assert detect_format(longmemeval_file) == "longmemeval"
    loaded = load(longmemeval_file, "longmemeval", prefix="lme")
    update = next(q for q in loaded.questions if q.ident == "ku_001")
    assert update.scope == "lme/ku_001" and update.category == "knowledge-update"
    assert update.evidence_refs == ("s_old:0", "s_new:0")
    assert (update.newer_refs, update.older_refs) == (("s_new:0",), ("s_old:0",))
    roles = {t["role"] for t in loaded.turns}
    assert roles == {"user", "assistant"}
    assert next(q for q in loaded.questions if q.ident == "ss_002").evidence_refs == ("t1:1",)
    assert update.asked_at == datetime(2023, 6, 1, 10, 0, tzinfo=UTC)  # its question_date


def test_a_longmemeval_question_date_that_is_no_date_is_refused_with_its_item(tmp_path):
    data = json.loads(json.dumps(LONGMEMEVAL))
    data[1]["question_date"] = "June"
    path = tmp_path / "lme.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ValueError, match="item 1: question_date is not like"):
        load(path, "longmemeval", prefix="lme")


def test_a_longmemeval_question_is_asked_after_its_whole_haystack_even_when_a_session_is_dated_later(
    tmp_path,
):
    data = json.loads(json.dumps(LONGMEMEVAL[1]))
    data["haystack_dates"] = ["2023/06/01 (Thu) 18:30"]  # hours after the question, as a few real items are
    path = tmp_path / "lme.json"
    path.write_text(json.dumps([data]), encoding="utf-8")
    (question,) = load(path, "longmemeval", prefix="lme").questions
    assert question.asked_at == datetime(2023, 6, 1, 18, 31, tzinfo=UTC)  # just after its last turn


def test_a_question_asked_at_a_time_never_sees_what_was_said_later(db, tmp_path):
    """Recall answers as of the question's time (`as_of`): a turn said after it (here the best match of
    all) is in no path's ranking, and the evidence said before it is."""
    from dataclasses import replace

    from governance.evaluation.retrieval import evaluate_loaded

    data = json.loads(json.dumps(LONGMEMEVAL[1]))
    data["haystack_dates"].append("2023/07/01 (Sat) 09:00")
    data["haystack_session_ids"].append("later")
    data["haystack_sessions"].append(
        [{"role": "user", "content": "What soup did I ask about? The lentil soup, the soup I asked about."}]
    )
    path = tmp_path / "lme.json"
    path.write_text(json.dumps([data]), encoding="utf-8")
    call_command("import_conversations", str(path), "--format", "longmemeval", stdout=StringIO())
    (question,) = load(path, "longmemeval", prefix="longmemeval").questions
    assert Memory.objects.filter(scope__path="longmemeval/ss_002", source_ref="later:0").exists()
    asked = replace(question, asked_at=datetime(2023, 6, 1, 10, 0, tzinfo=UTC))
    for q, later_seen in ((asked, False), (question, True)):
        results = evaluate_loaded([q], baseline=False, detail_path="full")
        (task,) = results["tasks"]
        assert "t1:1" in task["ranked"] and ("later:0" in task["ranked"]) is later_seen
    results = evaluate_loaded([asked], baseline=False)
    for name in ("vector", "keyword"):
        assert results["strategies"][name]["all"]["recall@10"] == 1.0


def test_import_conversations_takes_both_files_and_importing_twice_adds_nothing(
    db, locomo_file, longmemeval_file
):
    call_command("import_conversations", str(locomo_file), stdout=StringIO())
    call_command("import_conversations", str(longmemeval_file), "--format", "longmemeval", stdout=StringIO())
    turn = Memory.objects.get(scope__path="locomo/conv_26", source_ref="D1:3", kind="episodic")
    assert turn.speaker == "Caroline" and "carolin" in turn.lexical.split()  # the name's term
    assert turn.embedding is not None
    assert Memory.objects.filter(scope__path="longmemeval/ku_001", kind="episodic").count() == 6
    before = Memory.objects.count()
    call_command("import_conversations", str(locomo_file), stdout=StringIO())
    assert Memory.objects.count() == before


def test_a_turn_too_long_for_a_memory_is_left_out_by_name_and_the_rest_imports(db, tmp_path):
    """A real LongMemEval haystack holds a pasted document of 41,855 characters: the import used to stop
    at it with a traceback, part-way. Now that turn is named and left out, the rest imports and is asked,
    and the import command says it failed."""
    from governance.services.memory import MAX_TEXT_CHARS

    data = json.loads(json.dumps(LONGMEMEVAL[1]))
    data["haystack_sessions"][0].insert(
        1, {"role": "user", "content": "lorem ipsum " * (MAX_TEXT_CHARS // 10)}
    )
    path = tmp_path / "lme.json"
    path.write_text(json.dumps([data]), encoding="utf-8")
    loaded = load(path, "longmemeval", prefix="longmemeval")
    assert [t["ref"] for t in loaded.turns] == ["t1:0", "t1:2"] and len(loaded.questions) == 1
    (why,) = loaded.left_out
    assert why.startswith("longmemeval/ss_002, turn t1:1: A turn's content is 23,999 characters")
    with pytest.raises(CommandError, match="1 lines could not be imported"):
        call_command("import_conversations", str(path), "--format", "longmemeval", stdout=StringIO())
    refs = set(Memory.objects.filter(kind="episodic").values_list("source_ref", flat=True))
    assert refs == {"t1:0", "t1:2"}
    err = StringIO()
    call_command(
        "evaluate_retrieval",
        "--file",
        str(path),
        "--imported-only",
        "--no-baseline",
        stdout=StringIO(),
        stderr=err,
    )
    assert "1 turn(s) not imported (first: longmemeval/ss_002, turn t1:1" in err.getvalue()


def test_a_file_that_is_neither_format_is_refused_with_a_sentence(db, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{"conversation": "not an object"}]), encoding="utf-8")
    with pytest.raises(CommandError, match="item 0: `conversation` must be an object"):
        call_command("evaluate_retrieval", "--file", str(bad), "--format", "locomo", stdout=StringIO())
    with pytest.raises(CommandError, match="Give a questions JSONL file"):
        call_command("evaluate_retrieval", stdout=StringIO())


def test_evaluate_retrieval_on_a_locomo_file_shows_full_each_path_and_bm25(db, locomo_file, tmp_path):
    out, stdout = tmp_path / "r.json", StringIO()
    call_command(
        "evaluate_retrieval",
        "--file",
        str(locomo_file),
        "--format",
        "locomo",
        "--json",
        str(out),
        stdout=stdout,
        stderr=StringIO(),
    )
    results = json.loads(out.read_text())
    assert list(results["strategies"]) == ["full", "vector", "keyword", "bm25"]
    for body in results["strategies"].values():
        assert body["all"]["questions"] == 4
        assert set(body["categories"]) == {"1 multi-hop", "2 temporal", "4 single-hop"}
        assert body["all"]["recall@1"] <= body["all"]["recall@5"] <= body["all"]["recall@10"]
        assert body["latency_ms_p50"] > 0 and body["latency_ms_p95"] >= body["latency_ms_p50"]
    # Eight turns: every evidence turn is among the first ten of the full pipeline.
    assert results["strategies"]["full"]["all"]["recall@10"] == 1.0
    printed = stdout.getvalue()
    assert "full @10" in printed and "bm25 @10" in printed and "all (4)" in printed
    assert "recall p95 ms" in printed
    # The latency split: the embedding's own time and each stage's, and what runs once the vector is there.
    split = results["strategies"]["full"]["stages_ms"]
    assert {"embed", "embed_wait", "lexical", "vector", "fuse", "rank", "after_embedding"} <= set(split)
    assert split["after_embedding"]["p50"] >= split["fuse"]["p50"]
    assert "vector" in results["strategies"]["vector"]["stages_ms"]
    assert "lexical" not in results["strategies"]["vector"]["stages_ms"]
    assert results["strategies"]["bm25"]["stages_ms"] == {}
    assert "latency split" in printed and "after_embedding p50/p95" in printed
    # No adversarial question here: no "answerable" total either.
    assert "answerable" not in results["strategies"]["full"]
    # Per conversation too; one conversation of four questions prints no spread table.
    assert results["strategies"]["bm25"]["conversations"]["locomo/conv_26"]["questions"] == 4
    assert "per conversation" not in printed


def test_the_spread_table_prints_each_conversation_its_worst_and_the_spread_per_path():
    from governance.evaluation.report import spread_table

    def path(**recall):
        return {
            "conversations": {scope: {"questions": n, "recall@10": r} for scope, (n, r) in recall.items()}
        }

    results = {
        "strategies": {
            "full": path(a=(12, 0.9), b=(30, 0.75), c=(3, 0.1)),
            "bm25": path(a=(12, 0.5), b=(30, 0.6), c=(3, 0.0)),
        }
    }
    table = spread_table(results)
    rows = {
        line.split("|")[1].strip(): [c.strip() for c in line.split("|")[2:-1]] for line in table.splitlines()
    }
    assert rows["a (12)"] == ["0.900", "0.500"] and rows["b (30)"] == ["0.750", "0.600"]
    assert rows["worst"] == ["0.750", "0.500"] and rows["spread"] == ["0.150", "0.100"]
    assert not any(label.startswith("c ") for label in rows)  # three questions: not a conversation's figure
    # A single conversation, or none, has no spread to print.
    assert spread_table({"strategies": {"full": path(a=(12, 0.9))}}) == ""
    assert spread_table({"strategies": {}}) == ""


def test_adversarial_questions_are_measured_apart_from_the_answerable_total(db, tmp_path):
    data = json.loads(json.dumps(LOCOMO))
    data[0]["qa"][-1] = {
        "question": "What did Caroline paint?",
        "answer": "-",
        "evidence": ["D1:5"],
        "category": 5,
    }
    path, out, stdout = tmp_path / "locomo_adv.json", tmp_path / "r.json", StringIO()
    path.write_text(json.dumps(data), encoding="utf-8")
    call_command(
        "evaluate_retrieval", "--file", str(path), "--json", str(out), stdout=stdout, stderr=StringIO()
    )
    for body in json.loads(out.read_text())["strategies"].values():
        assert body["all"]["questions"] == 5 and body["categories"]["5 adversarial"]["questions"] == 1
        assert body["answerable"]["questions"] == 4
    assert "answerable (4)" in stdout.getvalue() and "all (5)" in stdout.getvalue()


def test_longmemeval_abstention_questions_are_measured_apart_from_the_answerable_total(db, tmp_path):
    """A question id ending in "_abs" asks about what the history never says; its answer session is only
    the one near its topic, with no turn marked as the answer. LongMemEval's own retrieval metrics leave
    such questions out: here they are a category of their own, outside the answerable total."""
    data = json.loads(json.dumps(LONGMEMEVAL))
    never = json.loads(json.dumps(LONGMEMEVAL[1]))
    never.update(question_id="ss_002_abs", question="What bread did I ask about?")
    never["haystack_sessions"][0][1].pop("has_answer")
    data.append(never)
    path, out, stdout = tmp_path / "lme_abs.json", tmp_path / "r.json", StringIO()
    path.write_text(json.dumps(data), encoding="utf-8")
    loaded = load(path, "longmemeval", prefix="longmemeval")
    assert [q.category for q in loaded.questions] == ["knowledge-update", "single-session-user", "abstention"]
    call_command(
        "evaluate_retrieval", "--file", str(path), "--json", str(out), stdout=stdout, stderr=StringIO()
    )
    for body in json.loads(out.read_text())["strategies"].values():
        assert body["categories"]["abstention"]["questions"] == 1
        assert body["answerable"]["questions"] == 2 and body["all"]["questions"] == 3
    assert "answerable (2)" in stdout.getvalue() and "abstention (1)" in stdout.getvalue()


def test_evaluate_retrieval_ranks_the_newer_evidence_of_a_knowledge_update_first(
    db, longmemeval_file, tmp_path
):
    out = tmp_path / "r.json"
    call_command(
        "evaluate_retrieval",
        "--file",
        str(longmemeval_file),
        "--json",
        str(out),
        stdout=StringIO(),
        stderr=StringIO(),
    )
    results = json.loads(out.read_text())
    full = results["strategies"]["full"]
    assert full["newer_first"] == {"questions": 1, "rate": 1.0}
    assert set(full["categories"]) == {"knowledge-update", "single-session-user"}


def test_first_per_category_takes_the_first_n_of_each_category_round_robin():
    from governance.evaluation.retrieval import first_per_category

    questions = [
        EvalQuestion(scope=f"s/{i}", question=f"q{i}", evidence_refs=("r",), category=c, ident=f"{c}{i}")
        for i, c in enumerate("aabacbbc")
    ]
    picked = [q.ident for q in first_per_category(questions, 2)]
    assert picked == ["a0", "b2", "c4", "a1", "b5", "c7"]  # a round of every category, then the next
    assert [q.ident for q in first_per_category(questions, 1)] == ["a0", "b2", "c4"]


def test_evaluate_retrieval_per_category_imports_and_asks_only_those_questions(db, tmp_path):
    data = json.loads(json.dumps(LONGMEMEVAL))
    extra = json.loads(json.dumps(LONGMEMEVAL[1]))
    extra["question_id"] = "ss_003"  # a second single-session-user question, left out by --per-category 1
    data.append(extra)
    path, out, stdout = tmp_path / "lme.json", tmp_path / "r.json", StringIO()
    path.write_text(json.dumps(data), encoding="utf-8")
    call_command(
        "evaluate_retrieval",
        "--file",
        str(path),
        "--per-category",
        "1",
        "--json",
        str(out),
        stdout=stdout,
        stderr=StringIO(),
    )
    results = json.loads(out.read_text())
    assert results["questions"] == 2
    assert {c: b["questions"] for c, b in results["strategies"]["full"]["categories"].items()} == {
        "knowledge-update": 1,
        "single-session-user": 1,
    }
    assert Memory.objects.filter(scope__path="longmemeval/ss_003").count() == 0  # not imported
    assert "questions=2 " in stdout.getvalue()
    # With --limit, the first of the stratified questions.
    call_command(
        "evaluate_retrieval",
        "--file",
        str(path),
        "--per-category",
        "2",
        "--limit",
        "1",
        "--json",
        str(out),
        stdout=StringIO(),
        stderr=StringIO(),
    )
    assert json.loads(out.read_text())["questions"] == 1
    # --imported-only imports nothing and asks only what is imported in full: ss_003 is left out.
    stderr = StringIO()
    call_command(
        "evaluate_retrieval",
        "--file",
        str(path),
        "--imported-only",
        "--json",
        str(out),
        stdout=StringIO(),
        stderr=stderr,
    )
    assert json.loads(out.read_text())["questions"] == 2
    assert "1 question(s) left out: not imported in full" in stderr.getvalue()
    assert Memory.objects.filter(scope__path="longmemeval/ss_003").count() == 0
    with pytest.raises(CommandError, match="--per-category must be 1 or more"):
        call_command("evaluate_retrieval", "--file", str(path), "--per-category", "0", stdout=StringIO())


def test_evaluate_retrieval_category_imports_and_asks_only_that_category(db, tmp_path):
    path, out, stdout = tmp_path / "lme.json", tmp_path / "r.json", StringIO()
    path.write_text(json.dumps(LONGMEMEVAL), encoding="utf-8")
    call_command(
        "evaluate_retrieval",
        "--file",
        str(path),
        "--category",
        "knowledge-update",
        "--json",
        str(out),
        stdout=stdout,
        stderr=StringIO(),
    )
    results = json.loads(out.read_text())
    assert {c: b["questions"] for c, b in results["strategies"]["full"]["categories"].items()} == {
        "knowledge-update": 1
    }
    other = {q["question_id"] for q in LONGMEMEVAL if q["question_type"] != "knowledge-update"}
    assert other and not Memory.objects.filter(scope__path__in=[f"longmemeval/{q}" for q in other]).exists()
    # A category the file does not have is named, with the ones it has, and nothing is imported or asked.
    with pytest.raises(CommandError, match="has no category 'knowledge-updates' .*knowledge-update"):
        call_command(
            "evaluate_retrieval", "--file", str(path), "--category", "knowledge-updates", stdout=StringIO()
        )


def test_the_misses_table_names_the_evidence_left_out_and_the_updates_in_the_wrong_order():
    from governance.evaluation.report import misses_table

    def task(ident, category, expected, ranked, recall, newer_first=None):
        return {
            "id": ident,
            "category": category,
            "question": f"{ident}?",
            "expected": expected,
            "ranked": ranked,
            "recall@10": recall,
            "newer_first": newer_first,
        }

    tasks = [
        task("a", "single-hop", ["x"], ["x"], 1.0),
        task("b", "multi-hop", ["x", "y"], ["x", "z"], 0.5),
        task("c", "knowledge-update", ["old", "new"], ["old", "new"], 1.0, newer_first=False),
    ]
    table = misses_table({"tasks": tasks}).splitlines()
    assert len(table) == 4 and "error" not in table[0]  # a header, its rule, b and c; a missed nothing
    assert table[2].split("|")[1].strip() == "b" and table[2].rstrip(" |").endswith("y")
    assert table[3].split("|")[1].strip() == "c" and "older first" in table[3]
    assert misses_table({"tasks": tasks[:1]}) == "" and misses_table({}) == ""


def test_evaluate_retrieval_misses_lists_what_full_missed(db, longmemeval_file):
    out = StringIO()
    call_command(
        "evaluate_retrieval",
        "--file",
        str(longmemeval_file),
        "--no-baseline",
        "--misses",
        stdout=out,
        stderr=StringIO(),
    )
    text = out.getvalue()
    assert "what `full` missed (" in text and "of 2 questions)" in text
