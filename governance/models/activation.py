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


def activation(log_k: float, decay: float, at: datetime) -> float:
    exponent = log_k - decay * days(at)
    return math.exp(min(exponent, 50.0))


def activation_sql(at_param: str = "%s") -> str:
    """SQL for A(t) of governance_memory rows, given a timestamptz parameter."""
    return (
        "exp(LEAST(activation_log_k - decay_rate * "
        f"(extract(epoch from ({at_param})::timestamptz - '{EPOCH.isoformat()}'::timestamptz) / 86400.0), 50))"
    )
