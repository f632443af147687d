"""The synthetic suite's table: pass rate per category (rows) and strategy (columns), then the metrics.
Printed by `manage.py evaluate` and pasted into docs/evaluation.md."""

from __future__ import annotations

from devtools.evaluation.suite import CATEGORIES
from governance.evaluation.report import format_cell, markdown_table

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


def ablation_table(results: dict) -> str:
    strategies = list(results.get("strategies", {}))
    body = results.get("strategies", {})
    rows = [
        [c, *(format_cell(body[s]["categories"].get(c), "rate") for s in strategies)]
        for c in CATEGORIES
        if any(c in body[s]["categories"] for s in strategies)
    ]
    rows.append(["**overall**", *(format_cell(body[s]["overall"], "rate") for s in strategies)])
    metrics = [
        [label, *(format_cell(body[s]["metrics"].get(key), how) for s in strategies)]
        for key, label, how in METRIC_ROWS
    ]
    return (
        markdown_table(["pass rate", *strategies], rows)
        + "\n\n"
        + markdown_table(["metric", *strategies], metrics)
    )
