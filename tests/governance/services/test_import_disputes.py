"""`import_conversations` proposes the same review items as live writes (issue 25): once the import has
embedded its turns, the one place that follows an embedding (governance.propagation.stores
run_after_embedding, the embedding worker's own hook) proposes the disputes among them, so a user importing
a history finds "We use MySQL." / "The team has moved to PostgreSQL." in review; a turn that changes
nothing and the same text in another scope are not paired. `MEMORY_DISPUTES=false` turns it off, as for
live writes. (On the LoCoMo dev file the rule proposes none: docs/evaluation.md.)"""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command

from governance.models import Dispute

pytestmark = pytest.mark.django_db

TURNS = [
    ("imp/db", "s1", "2026-03-01T10:00:00Z", "We use MySQL for the main database."),
    ("imp/db", "s1", "2026-03-01T10:01:00Z", "The main database backups run every night at two."),
    ("imp/db", "s2", "2026-03-09T10:00:00Z", "The team has moved to PostgreSQL for the main database."),
    ("imp/db", "s2", "2026-03-09T10:01:00Z", "We have moved the stand-up to 10 am."),
    ("imp/other", "s3", "2026-03-02T10:00:00Z", "We use Oracle for the main database."),
]


def _file(tmp_path) -> str:
    lines = [
        {
            "scope": scope,
            "session": session,
            "at": at,
            "role": "user",
            "content": text,
            "ref": f"{session}-{i}",
        }
        for i, (scope, session, at, text) in enumerate(TURNS)
    ]
    path = tmp_path / "history.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines), encoding="utf-8")
    return str(path)


def test_an_import_proposes_the_disputes_a_live_write_would(tmp_path):
    path = _file(tmp_path)
    call_command("import_conversations", path, stdout=StringIO(), stderr=StringIO())
    pairs = {(d.newer.text, d.older.text) for d in Dispute.objects.select_related("newer", "older")}
    assert pairs == {
        ("The team has moved to PostgreSQL for the main database.", "We use MySQL for the main database.")
    }
    # Importing again adds no turn and no second dispute.
    call_command("import_conversations", path, stdout=StringIO(), stderr=StringIO())
    assert Dispute.objects.count() == 1


def test_with_disputes_off_an_import_proposes_none(tmp_path, settings):
    settings.MEMORY_DISPUTES = False
    call_command("import_conversations", _file(tmp_path), stdout=StringIO(), stderr=StringIO())
    assert not Dispute.objects.exists()
