"""evaluate_retrieval on the shipped EN+ZH dataset, imported through import_conversations."""

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from governance.evaluation.retrieval import _recall_at, parse_questions
from governance.models import Memory

DATA = Path(__file__).resolve().parents[2] / "data"
CONVERSATIONS = DATA / "eval_conversations.jsonl"
QUESTIONS = DATA / "eval_questions.jsonl"


def test_shipped_questions_parse_and_cite_turns_that_exist_in_the_conversations():
    questions, errors = parse_questions(QUESTIONS.read_text(encoding="utf-8").splitlines())
    refs = {json.loads(line)["ref"] for line in CONVERSATIONS.read_text(encoding="utf-8").splitlines()}
    assert not errors and len(questions) >= 20
    assert {q.scope.split("/")[1] for q in questions} == {"alex-trip", "wang-project"}  # EN and ZH
    assert all(set(q.evidence_refs) <= refs for q in questions)


def test_recall_at_k_counts_the_share_of_evidence_found_in_the_top_k():
    assert _recall_at(("a", "b"), ["x", "a", "y", "b"], 1) == 0.0
    assert _recall_at(("a", "b"), ["x", "a", "y", "b"], 2) == 0.5
    assert _recall_at(("a", "b"), ["x", "a", "y", "b"], 10) == 1.0


def test_bad_question_lines_are_refused_with_their_line_numbers(tmp_path):
    bad = tmp_path / "q.jsonl"
    bad.write_text('{"scope": "a/b", "question": "q", "evidence_refs": []}\nnot json\n', encoding="utf-8")
    with pytest.raises(CommandError) as exc:
        call_command("evaluate_retrieval", str(bad))
    assert "line 1: `evidence_refs` must be a non-empty list" in str(exc.value)
    assert "line 2: not JSON" in str(exc.value)


def test_unknown_strategy_is_refused(tmp_path):
    with pytest.raises(CommandError, match="Unknown strategy"):
        call_command("evaluate_retrieval", str(QUESTIONS), "--strategy", "psychic")


def test_a_question_about_a_scope_never_imported_is_reported_not_crashed(db, tmp_path):
    q = tmp_path / "q.jsonl"
    q.write_text('{"scope": "nowhere/at-all", "question": "q?", "evidence_refs": ["r"]}\n', encoding="utf-8")
    out = tmp_path / "r.json"
    call_command(
        "evaluate_retrieval",
        str(q),
        "--strategy",
        "vector",
        "--json",
        str(out),
        stdout=StringIO(),
        stderr=StringIO(),
    )
    body = json.loads(out.read_text())["strategies"]["vector"]
    assert body["all"]["recall@10"] == 0.0 and body["errors"]


def test_imported_dataset_reports_recall_per_category_and_strategy(db, tmp_path):
    out = tmp_path / "retrieval.json"
    stdout = StringIO()
    call_command(
        "evaluate_retrieval",
        str(QUESTIONS),
        "--conversations",
        str(CONVERSATIONS),
        "--json",
        str(out),
        stdout=stdout,
        stderr=StringIO(),
    )
    assert Memory.objects.filter(scope__path="evalds/alex-trip", source_ref="en-s1-t03").exists()
    results = json.loads(out.read_text())
    assert set(results["strategies"]) == {"recent", "vector", "structured_vector", "temporal", "full"}
    full = results["strategies"]["full"]
    assert set(full["categories"]) == {"single_hop", "paraphrase", "knowledge_update", "multi_hop"}
    assert full["all"]["questions"] == 24
    assert full["all"]["recall@1"] <= full["all"]["recall@5"] <= full["all"]["recall@10"]
    # The dataset is answerable: the full pipeline finds most evidence; the last turns alone do not.
    assert full["all"]["recall@10"] >= 0.8
    assert results["strategies"]["recent"]["all"]["recall@10"] < full["all"]["recall@10"]
    printed = stdout.getvalue()
    assert "full @10" in printed and "all (24)" in printed
