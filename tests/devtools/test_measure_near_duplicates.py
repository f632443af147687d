"""`measure_near_duplicates`: candidate/source-turn pairs against each turn's nearest other turn, with the
real embedder, on conversations written through the events path."""

from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from governance.models import Memory
from governance.services.events import event_ingest
from governance.tasks import embed_memories


def test_the_report_prints_both_distributions_and_the_threshold_table(project_scope):
    event_ingest(
        scope=project_scope,
        session="s1",
        at=None,
        actor=None,
        turns=[
            {"role": "user", "content": "From now on, always export slides as PDF.", "ref": "u1"},
            {"role": "assistant", "content": "Noted, the deck will be exported as PDF.", "ref": "a1"},
            {"role": "user", "content": "I prefer dark backgrounds for charts.", "ref": "u2"},
            {"role": "user", "content": "The board meets on Thursday in Berlin.", "ref": "u3"},
        ],
    )
    embed_memories(list(Memory.objects.values_list("pk", flat=True)))
    out = StringIO()
    call_command("measure_near_duplicates", "--scope-prefix", "acme", stdout=out)
    text = out.getvalue()
    assert "candidate/source-turn pairs" in text and "near-duplicates" in text and "distinct" in text
    rows = {
        line.split()[0]: line.split()[1:] for line in text.splitlines() if line[:9].strip().startswith("0.")
    }
    assert set(rows) >= {"0.90", "0.95"} and "word overlap" in text


def test_nothing_imported_is_a_clear_error(db):
    with pytest.raises(CommandError, match="no scope"):
        call_command("measure_near_duplicates", "--scope-prefix", "nowhere")
