"""Activation curves for charts: A(t) = A0·e^(−λ(t−t0)) + Σ wᵢ·e^(−λ(t−tᵢ)), rebuilt from the memory's
start and its logged reinforcements (the same formula as governance.models.activation keeps in log K)."""

from __future__ import annotations

import math
from datetime import datetime, timedelta

SAMPLES = 120


def activation_at(a0: float, decay: float, start: datetime, events: list[tuple[datetime, float]], at: datetime) -> float | None:
    # A backdated history (an import, the demo) can log reinforcements before the recorded start: the
    # memory existed then, so the curve begins at whichever came first.
    if at < start and not any(when <= at for when, _ in events):
        return None
    day = 86400.0
    value = a0 * math.exp(-decay * (at - start).total_seconds() / day) if at >= start else 0.0
    for when, weight in events:
        if when <= at:
            value += weight * math.exp(-decay * (at - when).total_seconds() / day)
    return value


def curve(
    *, a0: float, decay: float, start: datetime, events: list[tuple[datetime, float]], since: datetime, until: datetime
) -> dict:
    """Sampled points over [since, until], plus a point just before and at each reinforcement so the
    jumps are drawn as jumps; and the reinforcement points themselves."""
    step = (until - since) / SAMPLES
    times = [since + step * i for i in range(SAMPLES + 1)]
    for when, _ in events:
        if since <= when <= until:
            times += [when - timedelta(milliseconds=1), when]
    if since <= start <= until:
        times.append(start)
    times.sort()
    xs, ys = [], []
    for t in times:
        value = activation_at(a0, decay, start, events, t)
        if value is not None:
            xs.append(t)
            ys.append(value)
    points = [
        (when, activation_at(a0, decay, start, events, when), weight)
        for when, weight in events if since <= when <= until
    ]
    return {"x": xs, "y": ys, "reinforcements": points}
