"""Plain-text tables of an evaluation's results: pass rate per category (rows) and strategy (columns),
then the metrics. Used by the commands and pasted into docs/evaluation.md."""

from __future__ import annotations

from governance.evaluation.suite import CATEGORIES

METRIC_ROWS = (
    ("constraint_retention", "constraint retention", "rate"),
    ("stale_use_rate", "stale-use rate", "rate"),
    ("cross_scope_recalls", "cross-scope recalls", "count"),
    ("evidence_recall@1", "evidence recall@1", "rate"),
    ("evidence_recall@5", "evidence recall@5", "rate"),
    ("evidence_recall@10", "evidence recall@10", "rate"),
    ("input_tokens_mean", "input tokens (mean)", "num"),
    ("input_tokens_p95", "input tokens (p95)", "num"),
    ("context_ms_p50", "context latency p50 (ms)", "num"),
    ("context_ms_p95", "context latency p95 (ms)", "num"),
    ("recall_ms_p50", "recall latency p50 (ms)", "num"),
    ("errors", "errors", "count"),
)


def _fmt(value, how: str) -> str:
    if value is None:
        return "-"
    if how == "rate":
        return f"{value:.3f}"
    if how == "count":
        return str(int(value))
    return f"{value:.1f}" if isinstance(value, float) else str(value)


def markdown_table(header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    line = lambda cells: "| " + " | ".join(str(c).ljust(w) for c, w in zip(cells, widths, strict=True)) + " |"  # noqa: E731
    sep = "| " + " | ".join("-" * w for w in widths) + " |"
    return "\n".join([line(header), sep, *(line(r) for r in rows)])


def ablation_table(results: dict) -> str:
    strategies = list(results.get("strategies", {}))
    body = results.get("strategies", {})
    rows = [
        [c, *(_fmt(body[s]["categories"].get(c), "rate") for s in strategies)]
        for c in CATEGORIES if any(c in body[s]["categories"] for s in strategies)
    ]
    rows.append(["**overall**", *(_fmt(body[s]["overall"], "rate") for s in strategies)])
    metrics = [[label, *(_fmt(body[s]["metrics"].get(key), how) for s in strategies)] for key, label, how in METRIC_ROWS]
    return markdown_table(["pass rate", *strategies], rows) + "\n\n" + markdown_table(["metric", *strategies], metrics)


def retrieval_table(results: dict) -> str:
    """Recall@k per strategy (columns) and category (rows), from `evaluate_retrieval`."""
    strategies = list(results.get("strategies", {}))
    categories = sorted({c for s in strategies for c in results["strategies"][s]["categories"]})
    header = ["category (questions)", *(f"{s} @{k}" for s in strategies for k in (1, 5, 10))]
    rows = []
    for c in [*categories, "all"]:
        first = results["strategies"][strategies[0]]
        n = first["categories"][c]["questions"] if c != "all" else first["all"]["questions"]
        cells = [f"{c} ({n})"]
        for s in strategies:
            part = results["strategies"][s]["categories"][c] if c != "all" else results["strategies"][s]["all"]
            cells += [_fmt(part[f"recall@{k}"], "rate") for k in (1, 5, 10)]
        rows.append(cells)
    return markdown_table(header, rows)
