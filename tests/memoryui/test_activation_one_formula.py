"""One activation formula: the chart's curve (summed from the memory's start and its logged
reinforcements), the stored log K read in Python, and the SQL every list and the recall rank by give the
same A(t) for the same memory at the same instant."""

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from governance.models import Memory
from governance.models.activation import activation
from governance.selectors import dashboard as sel
from governance.services.memory import memory_reinforce
from memoryui.views.charts import curve
from tests.memoryui.conftest import remember


@pytest.fixture
def used(project_scope):
    now = timezone.now()
    memory = remember(
        project_scope,
        "Decks go out as PPTX",
        kind="convention",
        key="deck_format",
        occurred_at=now - timedelta(days=10),
    )
    memory_reinforce(
        memory_ids=[memory.pk], weight=0.5, reason="recalled", actor=None, at=now - timedelta(days=7)
    )
    memory_reinforce(
        memory_ids=[memory.pk], weight=1.5, reason="recalled", actor=None, at=now - timedelta(days=2)
    )
    return Memory.objects.get(pk=memory.pk)


def test_the_chart_curve_at_now_is_the_stored_and_the_sql_activation(reviewer_client, used):
    at = timezone.now()
    events = [(e.at, e.weight) for e in sel.memory_reinforcements(used)]
    assert len(events) == 2
    start = used.occurred_at or used.created_at
    drawn = curve(
        a0=used.activation_a0, decay=used.decay_rate, start=start, events=events, since=start, until=at
    )
    assert abs(drawn["x"][-1] - at) <= timedelta(milliseconds=1)
    stored = activation(used.activation_log_k, used.decay_rate, at)
    in_sql = Memory.objects.filter(pk=used.pk).with_activation(at).get().activation
    assert drawn["y"][-1] == pytest.approx(stored, rel=1e-9)
    assert in_sql == pytest.approx(stored, rel=1e-9)
    # What the memory page's chart serves (its last point is the request's "now") against the database.
    served = reviewer_client.get(reverse("dashboard:memory-activation", args=[used.pk])).json()
    after = Memory.objects.filter(pk=used.pk).with_activation(timezone.now()).get().activation
    before = Memory.objects.filter(pk=used.pk).with_activation(at).get().activation
    assert after * (1 - 1e-6) <= served["y"][-1] <= before * (1 + 1e-6)


def test_a_memory_that_occurred_centuries_ago_has_activation_near_zero_in_sql_too(project_scope):
    """PostgreSQL's exp() raises on underflow (the schema fuzz's recall with a memory dated year 1 was a
    500): the SQL clamps log A(t) as the Python does, and both give the same ~0."""
    memory = remember(
        project_scope, "An ancient note", occurred_at=timezone.now() - timedelta(days=365 * 1500)
    )
    at = timezone.now()
    in_sql = Memory.objects.filter(pk=memory.pk).with_activation(at).get().activation
    stored = activation(Memory.objects.get(pk=memory.pk).activation_log_k, memory.decay_rate, at)
    assert in_sql == pytest.approx(stored, rel=1e-9) and 0 <= in_sql < 1e-300
