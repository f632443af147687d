"""bench_pages' page set at a small size: every page answers, and its query count is bounded and does not
grow when the workspace doubles (timings are the benchmark's business, not a test's)."""

from __future__ import annotations

import pytest

from devtools.management.bench_seed import ensure_bench
from devtools.management.commands.bench_pages import Command, measure, page_set

# The most queries any dashboard page of the set may run (the busiest, the turn and memory pages, run ~20).
MAX_QUERIES = 40
GROWTH_ALLOWED = 3


def run_pages(info) -> dict[tuple[str, str, str], tuple[int, int]]:
    command = Command()
    clients = {
        "owner": command._client(info["owner"].user),
        "reviewer": command._client(info["reviewer"].user),
    }
    out = {}
    for label, url, who, method in page_set(info["owner"]):
        _, _, queries, status = measure(clients[who], url, method, 1)
        out[(label, who, url.split("?")[0])] = (queries, status)
    return out


def test_bench_page_set_answers_with_bounded_queries_that_do_not_grow_with_the_workspace(db):
    def quiet(*_):
        return None

    info = ensure_bench(memories=300, vectors=60, seed=7, log=quiet, turns=40, vacuum=False)
    small = run_pages(info)
    ensure_bench(memories=600, vectors=60, seed=8, log=quiet, turns=40, vacuum=False)
    big = run_pages(info)
    assert len(big) >= 40 and any("by meaning" in label for label, _, _ in big)
    for key, (queries, status) in big.items():
        assert status == 200, key
        assert queries <= MAX_QUERIES, (key, queries)
    # Same pages (the memory and turn pages are the newest ones, so they are matched by label). A page may
    # run a query or two more when the data holds one more kind of thing to show (the review queue does,
    # 10 then 12), but a query per row would add hundreds here: 300 more memories, 40 more turns.
    by_label = {(label, who): q for (label, who, _), (q, _) in small.items()}
    for (label, who, _), (queries, _) in big.items():
        assert queries <= by_label[(label, who)] + GROWTH_ALLOWED, (
            label,
            who,
            by_label[(label, who)],
            queries,
        )
        if label.startswith("memories"):  # one fewer where a page no longer spans the rows without a key
            assert queries <= by_label[(label, who)], (label, who)


@pytest.mark.browser
def test_the_browser_measurement_counts_bytes_cold_and_warm_and_times_the_first_chart(
    transactional_db, live_server, owner, project_scope
):
    """bench_pages --browser against the live server, unthrottled: a cold open fetches the static files, a
    warm one takes them from the cache (hashed names, long max-age); chart pages report a first chart."""
    from devtools.benchmarks import page_weight
    from devtools.management.commands.bench_pages import main_pages
    from tests.memoryui.conftest import remember

    if page_weight.chromium_path() is None:
        pytest.skip("Debian's chromium is not installed")
    remember(project_scope, "Export slides as PDF", kind="convention", key="export_format")
    pages = [p for p in main_pages("acme") if p[0] in ("overview", "turns", "timeline", "a memory's page")]
    assert len(pages) == 4
    results = page_weight.measure_pages(
        live_server.url, pages, username="olivia", password="pw-olivia", latency_ms=0, mbit=1000
    )
    by_label = {r.label: r for r in results}
    for r in results:
        assert r.cold.bytes > r.warm.bytes * 1.5, r  # the static files came from the cache the second time
    assert by_label["turns"].cold.chart_ms is None
    for label in ("overview", "timeline", "a memory's page"):
        assert by_label[label].cold.chart_ms is not None and by_label[label].cold.chart_ms > 0, label
    assert not any("plotly" in s for s in by_label["overview"].scripts)
    table = page_weight.format_table(results, latency_ms=0, mbit=1000)
    assert "| timeline |" in table and "meets the 600 kB goal" in table
