"""The command line: create_token, import_conversations (idempotent), recall/context --json."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from governance.models import ApiToken, Grant, Memory, Principal, Scope, hash_token


def run(*args) -> str:
    out = StringIO()
    call_command(*args, stdout=out, stderr=StringIO())
    return out.getvalue()


def test_create_token_creates_scope_principal_and_grant_and_prints_the_token_last(db):
    first = run("create_token", "bot", "--scope", "neo/alpha", "--role", "agent").strip().splitlines()[-1]
    second = run("create_token", "bot", "--scope", "neo/alpha", "--role", "agent").strip().splitlines()[-1]
    assert first != second and first.startswith("mem_")
    assert ApiToken.objects.filter(key_hash=hash_token(first)).exists()
    assert Principal.objects.filter(name="bot").count() == 1
    assert Grant.objects.get(principal__name="bot").scope == Scope.objects.get(path="neo/alpha")
    with pytest.raises(CommandError):
        run("create_token", "bot", "--scope", "Bad Path")


def test_import_conversations_is_idempotent_and_recall_json_prints_the_api_shape(db, tmp_path):
    lines = [
        {
            "scope": "imp/proj",
            "session": "s1",
            "at": "2026-01-01T10:00:00Z",
            "role": "user",
            "content": "From now on report in metric units.",
            "ref": "1",
        },
        {
            "scope": "imp/proj",
            "session": "s1",
            "at": "2026-01-01T10:00:05Z",
            "role": "assistant",
            "content": "Understood: metric units.",
        },
        {
            "scope": "imp/proj/sub",
            "session": "s2",
            "at": "2026-01-02T09:00:00Z",
            "role": "user",
            "content": "我们的预算上限是五万元。",
            "ref": "2",
        },
    ]
    path = tmp_path / "conv.jsonl"
    path.write_text("\n".join(json.dumps(x, ensure_ascii=False) for x in lines), encoding="utf-8")
    out = run("import_conversations", str(path))
    assert "3 new" in out
    count = Memory.objects.count()
    assert Memory.objects.filter(kind="episodic").count() == 3 and count > 3  # candidates extracted too
    assert Memory.objects.exclude(embedding=None).count() == count  # batch-embedded by the import
    assert "0 new" in run("import_conversations", str(path))
    assert Memory.objects.count() == count
    body = json.loads(run("recall", "--scope", "imp/proj", "--query", "which units?", "-k", "2", "--json"))
    assert len(body["results"]) == 2 and "metric" in body["results"][0]["text"]
    ctx = json.loads(
        run("context", "--scope", "imp/proj/sub", "--query", "预算", "--budget", "200", "--json")
    )
    assert ctx["budget"]["limit"] == 200 and "五万元" in ctx["text"]


def test_import_reports_bad_lines(db, tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"scope": "imp/p", "session": "s", "role": "user", "content": "hi"}\nnot json\n')
    with pytest.raises(CommandError):
        run("import_conversations", str(path))


def test_a_jsonl_turn_too_long_for_a_memory_is_a_bad_line_and_the_others_import(db, tmp_path):
    from governance.services.memory import MAX_TEXT_CHARS

    def line(ref: str, content: str) -> str:
        body = {"scope": "imp/p", "session": "s", "at": "2026-01-01T10:00:00Z", "role": "user"}
        return json.dumps({**body, "content": content, "ref": ref})

    path = tmp_path / "long.jsonl"
    path.write_text(
        "\n".join([line("1", "short"), line("2", "x" * (MAX_TEXT_CHARS + 1)), line("3", "also short")])
    )
    with pytest.raises(CommandError, match="turn '2': A turn's content is 20,001 characters"):
        run("import_conversations", str(path))
    assert set(Memory.objects.filter(kind="episodic").values_list("source_ref", flat=True)) == {"1", "3"}


@pytest.mark.parametrize("as_of", ["2026-02-30T10:00:00Z", "2026-01-05T10:00:00", "soon"])
def test_a_bad_as_of_is_a_command_error_not_a_traceback(db, as_of):
    with pytest.raises(CommandError, match="--as-of is an ISO date-time"):
        run("recall", "--scope", "imp/proj", "--query", "q", "--as-of", as_of)
