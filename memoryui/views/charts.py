"""Activation curves for charts: A(t) = A0·e^(−λ(t−t0)) + Σ wᵢ·e^(−λ(t−tᵢ)), rebuilt from the memory's
start and its logged reinforcements by governance.models.activation, which keeps the same sum in log K."""

from __future__ import annotations

from datetime import datetime, timedelta

from governance.models.activation import activation_from_history

SAMPLES = 120


activation_at = activation_from_history  # the one definition, beside log K (governance.models.activation)


def curve(
    *,
    a0: float,
    decay: float,
    start: datetime,
    events: list[tuple[datetime, float]],
    since: datetime,
    until: datetime,
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
        for when, weight in events
        if since <= when <= until
    ]
    return {"x": xs, "y": ys, "reinforcements": points}
