"""`bench_keyword`: the keyword search timed in a large scratch scope of copied turns, pruned and scoring
every match, with the same lists, and nothing left behind."""

from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from governance.models import Memory, Scope
from governance.recall import search
from governance.services.events import event_ingest


def test_the_scratch_copies_are_timed_both_ways_compared_and_rolled_back(project_scope, monkeypatch):
    lines = [
        "The kids like pizza night on Fridays",
        "My kids play outside after school",
        "I like jazz records and old films",
        "We saw the zebra exhibit at the zoo",
        "The kids like the zebra at the zoo",
    ]
    event_ingest(
        scope=project_scope,
        session="s1",
        at=None,
        actor=None,
        turns=[{"role": "user", "content": text, "ref": f"u{i}"} for i, text in enumerate(lines)],
    )
    before = Memory.objects.count()
    # small enough that the copies make common words and a scope large enough to prune in
    monkeypatch.setattr(search, "DF_CAP", 3)
    monkeypatch.setattr(search, "PRUNE_FROM_ROWS", 10)
    out = StringIO()
    call_command("bench_keyword", "--scope-prefix", "acme/", "--copies", "4", "--repeat", "1", stdout=out)
    text = out.getvalue()
    assert f"scratch scope: {4 * project_scope.memories.count()} memories" in text, text
    assert "pruned" in text and "every match" in text and "the same lists: yes" in text
    assert Memory.objects.count() == before and not Scope.objects.filter(path__startswith="bench-keyword")


def test_nothing_imported_is_a_clear_error(db):
    with pytest.raises(CommandError, match="no scope"):
        call_command("bench_keyword", "--scope-prefix", "nowhere/")
