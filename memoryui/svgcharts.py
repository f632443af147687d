"""Charts drawn on the server as plain SVG, where a histogram or a line says all there is to say: the
overview's activation histogram and a memory's activation curve. No chart library is sent for them.

The plot area is an SVG of a fixed 1000×1000 coordinate space stretched to its box
(preserveAspectRatio="none"; strokes keep their width with vector-effect), so it fills any width, a
phone's too; tick labels, titles and annotations are HTML placed in percentages of that box, so text
keeps its size and the theme's colours (templates/dashboard/charts/_svgchart.html, the CSS `.svgchart`).
Each bar and point carries a <title> (the browser shows it on hover) and the figure its aria-label."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime

from django.utils import formats, timezone

SIZE = 1000.0


@dataclass
class Mark:
    x: float  # 0..1000, left to right
    y: float  # 0..1000, bottom to top
    title: str = ""
    cls: str = ""
    w: float = 0.0  # bars: width
    label: str = ""

    @property
    def top(self) -> float:  # SVG's y runs downwards
        return SIZE - self.y

    @property
    def left_pct(self) -> float:
        return self.x / 10

    @property
    def bottom_pct(self) -> float:
        return self.y / 10


@dataclass
class Chart:
    dom_id: str
    aria_label: str
    x_title: str
    y_title: str
    x_ticks: list[Mark] = field(default_factory=list)
    y_ticks: list[Mark] = field(default_factory=list)
    bars: list[Mark] = field(default_factory=list)
    dots: list[Mark] = field(default_factory=list)
    vlines: list[Mark] = field(default_factory=list)  # x, label at the top
    hlines: list[Mark] = field(default_factory=list)  # y, label at the left
    line: str = ""  # polyline points
    legend: list[tuple[str, str]] = field(default_factory=list)  # (css class, words)


def _scale(value: float, lo: float, hi: float) -> float:
    return 0.0 if hi <= lo else max(0.0, min(SIZE, (value - lo) / (hi - lo) * SIZE))


def _short(v: float) -> str:
    if v >= 1e-3:
        return f"{v:.2g}"
    exponent = math.floor(math.log10(v))
    mantissa = v / 10**exponent
    return f"{mantissa:.1f}×10^{exponent}".replace("^", "")


def _log_label(exponent: int) -> str:
    value = 10.0**exponent
    return f"{value:g}" if -3 <= exponent <= 3 else f"10{str(exponent).translate(SUPERSCRIPT)}"


SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def histogram(data: dict) -> Chart:
    """The activation histogram (governance.selectors.dashboard.activation_histogram's bins) on a log axis,
    cold bins muted, the threshold dashed."""
    lo, hi = data["range"]
    counts = data["counts"]
    step = _whole_step(max([1, *counts]) / 4)
    top = step * 4  # four whole, round steps: counts are whole numbers
    bins = len(counts)
    width = SIZE / bins
    t = math.log10(data["threshold"])
    chart = Chart(
        dom_id="activation-histogram",
        aria_label="Histogram of memory activation with the cold threshold",
        x_title="activation A(t) now (log scale, unitless)",
        y_title="memories",
    )
    for i, n in enumerate(counts):
        centre = lo + (i + 0.5) * (hi - lo) / bins
        chart.bars.append(
            Mark(
                x=i * width + width * 0.04,
                w=width * 0.92,
                y=_scale(n, 0, top),
                cls="cold" if centre < t else "hot",
                title=f"activation {data['labels'][i]}: {n} {'memory' if n == 1 else 'memories'}",
            )
        )
    step = max(1, round(bins / 6))
    for i in range(0, bins + 1, step):
        chart.x_ticks.append(Mark(x=i * width, y=0, label=_short(data["edges"][i])))
    for k in range(5):
        chart.y_ticks.append(Mark(x=0, y=_scale(step * k, 0, top), label=f"{step * k:g}"))
    chart.vlines.append(
        Mark(
            x=_scale(t, lo, hi), y=SIZE, cls="threshold", label=f"cold threshold {_short(data['threshold'])}"
        )
    )
    return chart


def _whole_step(n: float) -> int:
    """The smallest whole 1, 2 or 5 × 10^k at or above n."""
    magnitude = 10 ** max(0, math.floor(math.log10(max(n, 1))))
    for m in (1, 2, 5, 10):
        if n <= m * magnitude:
            return m * magnitude
    return 10 * magnitude  # pragma: no cover


def activation_curve(
    *,
    xs: list[datetime],
    ys: list[float],
    reinforcements: list[tuple[datetime, float, float]],
    changes: list[tuple[datetime, str]],
    threshold: float,
) -> Chart:
    """A memory's activation over time on a log axis: the curve, its reinforcements, its changes of state
    and the cold threshold. Times are labelled in the reader's time zone."""
    chart = Chart(
        dom_id="activation-curve",
        aria_label="Activation of this memory over time",
        x_title="time (your time zone)",
        y_title="activation A(t) (log scale)",
    )
    chart.legend = [("curve", "activation")]
    if reinforcements:
        chart.legend.append(("dot", "reinforcement"))
    if changes:
        chart.legend.append(("change", "change of state"))
    floor = 1e-12
    logs = [math.log10(max(y, floor)) for y in ys] + [math.log10(threshold)]
    y_lo, y_hi = math.floor(min(logs)), math.ceil(max(logs))
    if y_hi == y_lo:
        y_hi += 1
    t0, t1 = xs[0].timestamp(), xs[-1].timestamp()

    def x_of(when: datetime) -> float:
        return _scale(when.timestamp(), t0, t1)

    def y_of(value: float) -> float:
        return _scale(math.log10(max(value, floor)), y_lo, y_hi)

    chart.line = " ".join(f"{x_of(x):.1f},{SIZE - y_of(y):.1f}" for x, y in zip(xs, ys, strict=True))
    for when, value, weight in reinforcements:
        chart.dots.append(
            Mark(
                x=x_of(when), y=y_of(value), cls="dot", title=f"{_when(when)}: reinforced, weight {weight:g}"
            )
        )
    for when, status in changes:
        chart.vlines.append(Mark(x=x_of(when), y=SIZE, cls="change", label=f"→ {status}", title=_when(when)))
    chart.hlines.append(Mark(x=0, y=y_of(threshold), cls="threshold", label="cold threshold"))
    spread = max(1, math.ceil((y_hi - y_lo) / 6))
    for e in range(y_lo, y_hi + 1, spread):
        chart.y_ticks.append(Mark(x=0, y=_scale(e, y_lo, y_hi), label=_log_label(e)))
    for k in range(5):
        moment = datetime.fromtimestamp(t0 + (t1 - t0) * k / 4, tz=xs[0].tzinfo)
        chart.x_ticks.append(Mark(x=SIZE * k / 4, y=0, label=_tick(moment, t1 - t0)))
    return chart


def _when(value: datetime) -> str:
    return formats.date_format(timezone.localtime(value), "Y-m-d H:i")


def _tick(value: datetime, span_s: float) -> str:
    local = timezone.localtime(value)
    if span_s <= 2 * 86400:
        return formats.date_format(local, "M j, H:i")
    return formats.date_format(local, "M j" if span_s < 300 * 86400 else "M Y")
