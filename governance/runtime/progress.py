"""The one progress display of the long-running commands (import_conversations, export_scope, import_scope):
done of total, what was made, the rate so far and the time left at that rate."""

from __future__ import annotations

import time


def format_eta(seconds: float) -> str:
    seconds = max(0, int(round(seconds)))
    hours, rest = divmod(seconds, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}" if hours else f"{rest // 60}:{rest % 60:02d}"


def progress_line(done: int, total: int, elapsed: float, *, unit: str = "turns", extra: str = "") -> str:
    """One progress line: `done/total unit (pct%), extra, rate unit/s, ETA h:mm:ss`."""
    rate = done / max(elapsed, 1e-6)
    eta = format_eta((total - done) / rate) if rate > 0 else "?"
    pct = 100.0 * done / total if total else 100.0
    middle = f", {extra}" if extra else ""
    return f"  {done}/{total} {unit} ({pct:.0f}%){middle}, {rate:.1f} {unit}/s, ETA {eta}"


class Progress:
    """Writes a progress line to `write` at most every `every` seconds (and always at the end)."""

    def __init__(self, write, total: int, *, unit: str, every: float = 1.0) -> None:
        self.write, self.total, self.unit, self.every = write, total, unit, every
        self.started = time.monotonic()
        self._last = 0.0

    def update(self, done: int, extra: str = "", *, force: bool = False) -> None:
        now = time.monotonic()
        if force or done >= self.total or now - self._last >= self.every:
            self._last = now
            self.write(progress_line(done, self.total, now - self.started, unit=self.unit, extra=extra))

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.started
