"""Activation that decays and is reinforced by use.

A(t) = A0·e^(−λ(t−t0)) + Σ wᵢ·e^(−λ(t−tᵢ)) = e^(−λt)·K  with  K = A0·e^(λt0) + Σ wᵢ·e^(λtᵢ).
We store log K per row, so log A(t) = log K − λt is a plain SQL expression and ranking needs no sweep.
t is measured in days since EPOCH.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime

EPOCH = datetime(2024, 1, 1, tzinfo=UTC)
SECONDS_PER_DAY = 86400.0


def days(at: datetime) -> float:
    return (at - EPOCH).total_seconds() / SECONDS_PER_DAY


def initial_log_k(a0: float, decay: float, at: datetime) -> float:
    return math.log(a0) + decay * days(at)


def reinforced_log_k(log_k: float, decay: float, weight: float, at: datetime) -> float:
    x = math.log(weight) + decay * days(at)
    hi, lo = max(log_k, x), min(log_k, x)
    return hi + math.log1p(math.exp(lo - hi))


# log A(t) is clamped to [FLOOR, CEILING] before exp(): PostgreSQL's exp() raises "value out of range:
# underflow" where the result would be 0 (a memory that occurred centuries ago, as an API caller may
# write), and e^-700 is 0 for any ranking or display.
CEILING, FLOOR = 50.0, -700.0


def activation(log_k: float, decay: float, at: datetime) -> float:
    exponent = log_k - decay * days(at)
    return math.exp(max(min(exponent, CEILING), FLOOR))


def activation_from_history(
    a0: float, decay: float, start: datetime, events: list[tuple[datetime, float]], at: datetime
) -> float | None:
    """A(t) summed from its history (the start and the logged reinforcements, as weights): what log K
    folds into one number, spelled out so a chart can draw the curve between reinforcements. None before
    the memory existed. A backdated history (an import, the demo) can log reinforcements before the
    recorded start: the memory existed then, so the curve begins at whichever came first."""
    if at < start and not any(when <= at for when, _ in events):
        return None
    value = a0 * math.exp(-decay * (days(at) - days(start))) if at >= start else 0.0
    for when, weight in events:
        if when <= at:
            value += weight * math.exp(-decay * (days(at) - days(when)))
    return value


def log_activation_sql(table: str = "") -> str:
    """SQL for log A(t) = log K − λ·t of governance_memory rows, with one parameter: `days(at)`. Ranks
    and compares like A(t) without an exp() per row; `table` qualifies the columns ("governance_memory")."""
    prefix = f"{table}." if table else ""
    return f"{prefix}activation_log_k - {prefix}decay_rate * %s"


def activation_sql(at_param: str = "%s") -> str:
    """SQL for A(t) of governance_memory rows, given a timestamptz parameter."""
    days_sql = (
        f"(extract(epoch from ({at_param})::timestamptz - '{EPOCH.isoformat()}'::timestamptz) / 86400.0)"
    )
    return f"exp(GREATEST(LEAST({log_activation_sql().replace('%s', days_sql)}, {CEILING}), {FLOOR}))"
