"""What a person's browser fetches to open each main dashboard page, and how long until its first chart is
drawn, in Debian's Chromium under a throttled link (`manage.py bench_pages --browser`; docs/benchmarks.md).

Each page is opened twice in a browser context of its own, signed in: cold (an empty HTTP cache, as on a
first visit) and warm (the same context opens about:blank, then the page again, as on the next visit).
The link is emulated through the DevTools protocol (`Network.emulateNetworkConditions`): latency added to
every request and a cap on throughput both ways. Bytes are what crossed the wire (`encodedDataLength`:
compressed bodies and headers; a response served from the browser's cache counts 0). The first chart is
the moment a chart box says it is drawn (`data-ready`, set by common.js after Plotly drew, or present in
a server-rendered SVG chart), measured from the navigation's start."""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
LATENCY_MS = 60.0
MBIT_PER_S = 9.0
GOAL_CHART_MS = 1500.0
GOAL_COLD_BYTES = 600_000
CHART_TIMEOUT_MS = 60_000

# Before any script of the page: note when the first chart box is drawn (a `.chart` with data-ready, or
# holding an <svg>), from the navigation's start (performance.now()).
WATCH_CHARTS = """(() => {
  window.__firstChart = null;
  const drawn = () => document.querySelector('.chart[data-ready], .chart svg');
  const note = () => { if (window.__firstChart === null && drawn()) { window.__firstChart = performance.now(); } };
  new MutationObserver(note).observe(document, { subtree: true, childList: true, attributes: true,
                                                 attributeFilter: ['data-ready'] });
})();"""


@dataclass
class Open:
    bytes: int
    requests: int
    chart_ms: float | None  # None: the page has no chart
    text_ms: float  # first contentful paint
    load_ms: float


@dataclass
class PageResult:
    label: str
    url: str
    cold: Open
    warm: Open
    scripts: list[str]  # the script files the page loads (names only)


def chromium_path() -> str | None:
    return CHROMIUM if os.path.exists(CHROMIUM) else shutil.which("chromium")


def measure_pages(
    base_url: str,
    pages: list[tuple[str, str]],
    *,
    username: str,
    password: str,
    latency_ms: float = LATENCY_MS,
    mbit: float = MBIT_PER_S,
    viewport: tuple[int, int] = (1440, 900),
) -> list[PageResult]:
    """Open each (label, path) cold and warm, signed in as `username`, under the emulated link."""
    from playwright.sync_api import sync_playwright

    executable = chromium_path()
    if executable is None:
        raise RuntimeError("Debian's chromium is not installed (/usr/bin/chromium).")
    results = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        try:
            state = _signed_in_state(browser, base_url, username, password)
            for label, path in pages:
                context = browser.new_context(
                    base_url=base_url,
                    storage_state=state,
                    viewport={"width": viewport[0], "height": viewport[1]},
                    timezone_id="Europe/Berlin",
                )
                try:
                    page = context.new_page()
                    page.add_init_script(WATCH_CHARTS)
                    cdp = context.new_cdp_session(page)
                    cdp.send("Network.enable")
                    throughput = mbit * 1_000_000 / 8  # bytes per second
                    cdp.send(
                        "Network.emulateNetworkConditions",
                        {
                            "offline": False,
                            "latency": latency_ms,
                            "downloadThroughput": throughput,
                            "uploadThroughput": throughput,
                        },
                    )
                    counter = _Counter(cdp)
                    cold = _open(page, path, counter)
                    scripts = page.evaluate(
                        "() => [...document.scripts].filter(s => s.src).map(s => s.src.split('/').pop())"
                    )
                    page.goto("about:blank")
                    warm = _open(page, path, counter)
                    results.append(PageResult(label, path, cold, warm, scripts))
                finally:
                    context.close()
        finally:
            browser.close()
    return results


class _Counter:
    def __init__(self, cdp) -> None:
        self.bytes = 0
        self.requests = 0
        cdp.on("Network.loadingFinished", self._finished)

    def _finished(self, event) -> None:
        self.requests += 1
        self.bytes += int(event.get("encodedDataLength") or 0)

    def reset(self) -> None:
        self.bytes = 0
        self.requests = 0


def _open(page, path: str, counter: _Counter) -> Open:
    counter.reset()
    page.goto(path, wait_until="load")
    has_chart = page.evaluate("() => !!document.querySelector('.chart')")
    chart_ms = None
    if has_chart:
        page.wait_for_function("() => window.__firstChart !== null", timeout=CHART_TIMEOUT_MS)
        chart_ms = page.evaluate("() => window.__firstChart")
    # The requests the page's scripts start after load (chart data, htmx fragments) count too.
    page.wait_for_load_state("networkidle")
    timing = page.evaluate(
        """() => {
      const paint = performance.getEntriesByName('first-contentful-paint')[0];
      const nav = performance.getEntriesByType('navigation')[0];
      return { text: paint ? paint.startTime : 0, load: nav ? nav.loadEventEnd : 0 };
    }"""
    )
    return Open(counter.bytes, counter.requests, chart_ms, timing["text"], timing["load"])


def _signed_in_state(browser, base_url: str, username: str, password: str) -> dict:
    context = browser.new_context(base_url=base_url, timezone_id="Europe/Berlin")
    try:
        page = context.new_page()
        page.goto("/accounts/login/")
        page.get_by_label("User name").fill(username)
        page.get_by_label("Password").fill(password)
        page.get_by_role("button", name="Sign in").click()
        page.wait_for_url("**/")
        # The time-zone cookie common.js would set on the first page (and reload it once for).
        context.add_cookies([{"name": "tz", "value": "Europe/Berlin", "url": base_url}])
        return context.storage_state()
    finally:
        context.close()


def format_table(results: list[PageResult], *, latency_ms: float, mbit: float) -> str:
    """The figures as a Markdown table, with the goals' verdict under it."""

    def kb(n: int) -> str:
        return f"{n / 1000:,.0f} kB"

    def ms(v: float | None) -> str:
        return "no chart" if v is None else f"{v / 1000:.2f} s"

    lines = [
        f"link: {mbit:g} Mbit/s, {latency_ms:g} ms latency (Chromium, emulated); cold = empty cache",
        "",
        "| page | cold: bytes (requests) | warm: bytes (requests) | cold: text | cold: first chart "
        "| warm: first chart | chart library |",
        "| --- | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    worst_bytes, worst_chart = 0, 0.0
    for r in results:
        library = next((s for s in r.scripts if "plotly" in s), "—")
        lines.append(
            f"| {r.label} | {kb(r.cold.bytes)} ({r.cold.requests}) | {kb(r.warm.bytes)} ({r.warm.requests}) "
            f"| {ms(r.cold.text_ms)} | {ms(r.cold.chart_ms)} | {ms(r.warm.chart_ms)} | {library} |"
        )
        worst_bytes = max(worst_bytes, r.cold.bytes)
        worst_chart = max(worst_chart, r.cold.chart_ms or 0.0)
    bytes_ok = "meets" if worst_bytes <= GOAL_COLD_BYTES else "MISSES"
    chart_ok = "meets" if worst_chart <= GOAL_CHART_MS else "MISSES"
    lines += [
        "",
        f"heaviest cold open {kb(worst_bytes)}: {bytes_ok} the {kb(GOAL_COLD_BYTES)} goal; "
        f"slowest first chart (cold) {ms(worst_chart)}: {chart_ok} the {GOAL_CHART_MS / 1000:.1f} s goal",
    ]
    return "\n".join(lines)
