"""The one percentile the benchmark commands print (nearest rank: a value that was really measured)."""

from __future__ import annotations

import math


def percentile(values: list[float], q: float) -> float:
    """The q-quantile (0 ≤ q ≤ 1) by nearest rank; NaN for no values."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]
