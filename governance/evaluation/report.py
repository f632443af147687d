"""Plain-text tables of an evaluation's results (recall@k per strategy and category), printed by
`evaluate_retrieval` and pasted into docs/evaluation.md; the synthetic suite's table is devtools.evaluation.report."""

from __future__ import annotations


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
            part = (
                results["strategies"][s]["categories"][c] if c != "all" else results["strategies"][s]["all"]
            )
            cells += [format_cell(part[f"recall@{k}"], "rate") for k in (1, 5, 10)]
        rows.append(cells)
    return markdown_table(header, rows)
