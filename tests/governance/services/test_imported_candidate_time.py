"""A candidate read from an imported turn carries the time the turn was said, so the facts of an imported
history decay from when they were said; a repeat said again then reinforces from that time too. The
audit event and `last_reinforced_at` (what retention's "unused for N days" reads) keep the write's time."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from io import StringIO

import pytest
from django.conf import settings
from django.utils import timezone

from governance.models import AuditEvent, Memory, ReinforcementEvent, activation
from governance.services.conversation_import import conversation_ingest
from governance.services.events import EXTRACTED_BY, event_ingest

SESSION_START = datetime(2023, 1, 10, 9, 0, tzinfo=UTC)
# A rule the extractor proposes (a preference), said long after the session's first turn.
LATER = datetime(2023, 5, 2, 18, 30, tzinfo=UTC)
PREFERENCE = "I prefer green tea in the evening."


def line(scope, session, at, content, ref, role="user"):
    return {"scope": scope, "session": session, "at": at, "role": role, "content": content, "ref": ref}


def imported(lines):
    errors: list[str] = []
    conversation_ingest(lines, errors, no_embed=True, out=StringIO())
    assert errors == []


def candidate(scope_path, text=PREFERENCE) -> Memory:
    return Memory.objects.get(scope__path=scope_path, text=text, meta__has_key=EXTRACTED_BY)


@pytest.mark.django_db
def test_an_imported_turns_candidate_carries_the_turns_time_not_the_sessions_first():
    imported(
        [
            line("imp/said", "s1", SESSION_START, "We walked along the harbour after dinner.", "t1"),
            line(
                "imp/said",
                "s1",
                SESSION_START + timedelta(minutes=1),
                "Nice, the ferries too?",
                "t2",
                "assistant",
            ),
            line("imp/said", "s1", LATER, f"Back from the trip. {PREFERENCE}", "t3"),
        ]
    )
    turn = Memory.objects.get(scope__path="imp/said", kind="episodic", source_ref="t3")
    found = candidate("imp/said")
    assert found.occurred_at == turn.occurred_at
    assert found.occurred_at.date() == LATER.date()
    assert found.activation_log_k == pytest.approx(
        activation.initial_log_k(found.activation_a0, found.decay_rate, turn.occurred_at)
    )
    # The write itself is audited at the time it was made.
    created = AuditEvent.objects.get(action="memory.record", target_id=str(found.pk))
    assert created.at > timezone.now() - timedelta(minutes=5)  # the write's time, not 2023


@pytest.mark.django_db
def test_a_repeat_in_an_imported_history_reinforces_from_when_it_was_said_and_stays_cold():
    started = timezone.now()
    imported(
        [
            line("imp/again", "s1", SESSION_START, PREFERENCE, "a1"),
            line("imp/again", "s2", LATER, PREFERENCE, "b1"),
        ]
    )
    kept = candidate("imp/again")
    event = ReinforcementEvent.objects.get(memory=kept)
    assert event.at.date() == LATER.date()
    # Said twice in 2023: cold today (it was 0.5 and hot when the repeat reinforced at the import's time).
    assert activation.activation(kept.activation_log_k, kept.decay_rate, timezone.now()) < (
        settings.MEMORY_COLD_THRESHOLD
    )
    assert kept.last_reinforced_at >= started
    merged = AuditEvent.objects.get(action="memory.near_duplicate", target_id=str(kept.pk))
    assert merged.at >= started


@pytest.mark.django_db
def test_a_live_turns_candidate_is_said_now_and_hot(project_scope, agent):
    before = timezone.now()
    event_ingest(
        scope=project_scope,
        session="live",
        at=None,
        turns=[{"role": "user", "content": PREFERENCE}],
        actor=agent,
    )
    found = Memory.objects.get(scope=project_scope, text=PREFERENCE, meta__has_key=EXTRACTED_BY)
    assert found.occurred_at >= before
    assert activation.activation(found.activation_log_k, found.decay_rate, timezone.now()) >= (
        settings.MEMORY_COLD_THRESHOLD
    )
