"""Plain-text tables of an evaluation's results (recall@k per strategy and category), printed by
`evaluate_retrieval` and pasted into docs/evaluation.md; the synthetic suite's table is devtools.evaluation.report."""

from __future__ import annotations

from governance.evaluation.retrieval import KS


def format_cell(value, how: str) -> str:
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


def recall_by_category(results: dict) -> dict:
    """The recall table of a retrieval evaluation, the one shape `evaluate_retrieval` prints and the
    dashboard shows: a row per category, then `answerable` (when the file has questions outside it) and
    `all`, each with its question count and, per path, recall@1/5/10."""
    strategies = results.get("strategies") or {}
    paths = list(strategies)
    if not paths:
        return {"paths": [], "ks": KS, "rows": []}
    first = strategies[paths[0]]
    totals = [t for t in ("answerable", "all") if t in first]

    def part(body: dict, label: str) -> dict:
        return (body.get(label) if label in totals else (body.get("categories") or {}).get(label)) or {}

    rows = []
    for label in [*(first.get("categories") or {}), *totals]:
        rows.append(
            {
                "label": label,
                "questions": part(first, label).get("questions"),
                "total": label in totals,
                "values": [[part(strategies[p], label).get(f"recall@{k}") for k in KS] for p in paths],
            }
        )
    return {"paths": paths, "ks": KS, "rows": rows}


def retrieval_table(results: dict) -> str:
    """Recall@k per path (columns) and category (rows), from `evaluate_retrieval`."""
    table = recall_by_category(results)
    header = ["category (questions)", *(f"{p} @{k}" for p in table["paths"] for k in KS)]
    rows = [
        [f"{r['label']} ({r['questions']})", *(format_cell(v, "rate") for path in r["values"] for v in path)]
        for r in table["rows"]
    ]
    return markdown_table(header, rows)


# Conversations of fewer answerable questions than this are not printed one by one (LongMemEval gives each
# question a haystack of its own: a row per question would say nothing about generalising).
SPREAD_MIN_QUESTIONS = 10


def spread_table(results: dict, k: int = max(KS)) -> str:
    """Recall@k of every path per conversation (its answerable questions), then the spread (the best
    conversation's minus the worst's) and the worst: "" when fewer than two conversations have
    SPREAD_MIN_QUESTIONS questions each."""
    strategies = results.get("strategies") or {}
    paths = [p for p, body in strategies.items() if body.get("conversations")]
    if not paths:
        return ""
    first = strategies[paths[0]]["conversations"]
    scopes = [s for s, agg in first.items() if (agg.get("questions") or 0) >= SPREAD_MIN_QUESTIONS]
    if len(scopes) < 2:
        return ""
    value = lambda path, scope: strategies[path]["conversations"][scope].get(f"recall@{k}")  # noqa: E731
    rows = [
        [f"{scope} ({first[scope]['questions']})", *(format_cell(value(p, scope), "rate") for p in paths)]
        for scope in scopes
    ]
    for label, pick in (("worst", min), ("spread", None)):
        cells = []
        for p in paths:
            values = [v for v in (value(p, s) for s in scopes) if v is not None]
            if not values:
                cells.append("-")
            else:
                cells.append(format_cell(pick(values) if pick else max(values) - min(values), "rate"))
        rows.append([label, *cells])
    return markdown_table([f"conversation (answerable questions), recall@{k}", *paths], rows)


MISS_TEXT = 90  # characters of a question shown in the misses table


def missed(results: dict) -> list[tuple[dict, list[str], bool]]:
    """The questions the detailed path missed (`evaluate_loaded(detail_path=…)`'s tasks): each task with the
    evidence refs it left out of its top k and whether a knowledge update's older evidence came first."""
    out = []
    for task in results.get("tasks") or []:
        top = set(task.get("ranked") or [])
        left_out = [ref for ref in task.get("expected") or [] if ref not in top]
        older_first = task.get("newer_first") is False
        if left_out or older_first:
            out.append((task, left_out, older_first))
    return out


def misses_table(results: dict) -> str:
    """`missed`, one row per question (`evaluate_retrieval --misses`); "" when nothing was missed."""
    k = max(KS)
    rows = []
    for task, left_out, older_first in missed(results):
        question = task.get("question") or ""
        rows.append(
            [
                task.get("id") or "",
                task.get("category") or "",
                format_cell(task.get(f"recall@{k}"), "rate"),
                "older first" if older_first else "",
                question if len(question) <= MISS_TEXT else question[: MISS_TEXT - 1] + "…",
                " ".join(left_out) or "-",
                task.get("error") or "",
            ]
        )
    if not rows:
        return ""
    header = [
        "question id",
        "category",
        f"recall@{k}",
        "time order",
        "question",
        f"evidence not in the top {k}",
    ]
    if any(row[-1] for row in rows):  # the error column only when a question failed
        return markdown_table([*header, "error"], rows)
    return markdown_table(header, [row[:-1] for row in rows])
