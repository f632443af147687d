"""A turn's trace in words, stage by stage, with counts that add up: what came in (and from which stage),
what went out, and every item dropped — by name where the skipped list names it, else counted with the
reason the stage recorded (docs/architecture.md, "The read path"; the counts are written by
governance.recall's stages)."""

from __future__ import annotations

# One plain line per stage (the glossary's "packet" and "stage" entries say more).
STAGE_WORDS = {
    "eligible": "decide where to look: this scope and the scopes above it that your grants reach; only memories "
    "in force or usable now, valid now and meant for this kind of task",
    "lexical": "search by words (full text and trigrams)",
    "recent": "take the latest turns of this session",
    "keyed": "take the facts in force by key, the conventions and the preferences (pinned, not searched)",
    "pending": "count the memories written so recently that they have no vector yet (words, key and "
    "recency still find them)",
    "embed": "turn the query into a vector, the numbers that stand for its meaning",
    "embed_wait": "time this request waited for that vector after its other searches had finished",
    "vector": "search by meaning (the memories whose vectors, or one of whose sentences' vectors, are nearest the query's)",
    "fuse": "merge the search lists into one ranking; a memory found by two paths counts once",
    "adjudicate": "settle supersedes and contradictions: what is no longer in force moves to the negative context",
    "rank": "score by match, activation, recency and task fit; drop cold weak matches and overridden facts",
    "pack": "place blocks into the packet's slots within the token budget",
    "speakers": "search by words again, within what each person the query names said",
    "named_time_words": "search by words within the span of time the query names",
    "named_time": "search by meaning within the span of time the query names",
    "session": "apply this session's own corrections and requirements to the rules in force",
    "handoff": "read the task's hand-off (its six sections) for the packet",
}
# Search paths run side by side on the same query; their lists meet at fuse. The vector path's own steps
# (counting what waits for a vector, embedding the query, waiting for it) run among them.
PATHS = ("lexical", "speakers", "named_time_words", "vector", "named_time", "recent", "keyed")
SIDE_BY_SIDE = (*PATHS, "pending", "embed", "embed_wait")
# Stages whose counts are not memories: shown with their own words, no "came in → went out".
UNIT_WORDS = {
    "scopes": "{in_} scope asked → {out} scopes searched",
    "query": "the query",
    "waiting": "{out} memories wait for their vector",
    "corrections": "{in_} corrections and requirements of the session read → {out} in force here",
    "spans named": "the query names no span of time",
    "speakers named": "the query names no speaker",
}
DEFAULT_UNIT = {"eligible": "scopes", "embed": "query", "embed_wait": "query", "pending": "waiting"}
# The counted (unnamed) drops a stage records, in words.
COUNTED = {
    "found_twice": "found by more than one path, counted once",
    "collapsed": "repeated turns folded into one",
    "cut": "below the fusion cut-off (not among the best fused)",
    "changed": "changed status between the search and the read",
    "to_negative": "no longer in force: moved to the negative context",
    "dropped": "lost a contradiction or were otherwise settled out",
    "not_placed": "not among the best of their slot, or already placed as a recent turn",
    "already_placed": "came twice (a recent turn that search found too), counted once under its other slot",
    "over_budget": "did not fit the token budget",
}
# A turn that names its drops (`ids`) says which of the two `not_placed` once counted together.
NOT_BEST = "not among the best of their slot (a slot holds the ten best)"
SHOWN = 20  # dropped memories named per reason on the page; the rest behind "and N more"
ADDED = {"fuse": "tool-call partners brought in", "adjudicate": "supporters brought in"}
BUDGET_REASON = "did not fit the token budget"
EARLIER = "earlier"  # a stored turn from before skipped items named their stage


def stage_of(block: dict) -> str:
    return block.get("stage") or ("pack" if block.get("reason") == BUDGET_REASON else EARLIER)


def stages(trace: dict) -> list[dict]:
    """The trace's stages, each with what its `counts` entry adds (`from`, `unit`, counted drops)."""
    counts = (trace or {}).get("counts") or {}
    counts = counts if isinstance(counts, dict) else {}
    rows = [
        {**(counts.get(s.get("name")) if isinstance(counts.get(s.get("name")), dict) else {}), **s}
        for s in (trace or {}).get("stages", [])
        if isinstance(s, dict)
    ]
    longest = max((float(s.get("ms") or 0) for s in rows), default=0) or 1
    return [{**s, "pct": round(100 * float(s.get("ms") or 0) / longest, 1)} for s in rows]


def _int(value) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _row(s: dict, named: list[dict]) -> dict:
    name = str(s.get("name", ""))
    n_in, n_out = _int(s.get("in")), _int(s.get("out"))
    unit = s.get("unit") or DEFAULT_UNIT.get(name, "")
    row = {
        "name": name,
        "words": STAGE_WORDS.get(name, ""),
        "in": n_in,
        "out": n_out,
        "ms": s.get("ms"),
        "pct": s.get("pct", 0),
        "dropped": named,
        "counted": [],
        "from": [],
        "added": 0,
        "unit": unit,
        "parallel": name in SIDE_BY_SIDE,
        "summary": "",
    }
    if unit:
        row["summary"] = UNIT_WORDS.get(unit, "").format(in_=n_in, out=n_out)
        return row
    came = s.get("from")
    if isinstance(came, dict):
        row["from"] = [(k, v) for k, v in came.items() if _int(v) is not None]
    row["added"] = (_int(s.get("added")) or 0) if name in ADDED else 0
    counted = []
    recorded = s.get("ids") if isinstance(s.get("ids"), dict) else None
    for key, words in COUNTED.items():
        n = _int(s.get(key))
        if key == "over_budget":  # named in the skipped list already
            continue
        if key == "not_placed" and "already_placed" in s:
            words = NOT_BEST
        if n:
            ids = (recorded or {}).get(key)
            ids = [i for i in ids if _int(i) is not None] if isinstance(ids, list) else []
            counted.append({"n": n, "why": words, "key": key, "ids": ids, "recorded": recorded is not None})
    if name in PATHS and name != "keyed":
        row["summary"] = f"found {n_out}"
        by_sentence = _int(s.get("by_sentence"))
        if by_sentence:  # the vector stage: how many of its scores one sentence of the memory gave
            row["summary"] += f", {by_sentence} by one of their sentences"
        return row
    if n_in is not None and n_out is not None:
        # Whatever the stage dropped and neither named nor counted: still said, so in − out always adds up.
        missing = n_in + row["added"] - n_out - len(named) - sum(c["n"] for c in counted)
        if missing > 0:
            counted.append(
                {
                    "n": missing,
                    "why": "left out without a recorded reason (a turn stored before "
                    "stages counted their drops)",
                    "key": "unrecorded",
                    "ids": [],
                    "recorded": False,
                }
            )
    row["counted"] = counted
    row["n_dropped"] = len(named) + sum(c["n"] for c in counted)
    return row


def funnel(trace: dict, skipped: list[dict]) -> list[dict]:
    """Per stage, in words: what came in (and from where), what went out, what it dropped (named items
    from the already-masked skipped list, counted ones with their reason). Consecutive search paths are
    one group (`paths`), as they run side by side. Items of an old turn that did not record their stage
    come last, under "earlier"."""
    by_stage: dict[str, list[dict]] = {}
    for b in skipped:
        by_stage.setdefault(stage_of(b), []).append(b)
    rows: list[dict] = []
    for s in stages(trace):
        row = _row(s, by_stage.pop(str(s.get("name", "")), []))
        if row["parallel"] and rows and rows[-1].get("paths") is not None:
            rows[-1]["paths"].append(row)
        elif row["parallel"]:
            rows.append({"name": "paths", "paths": [row], "dropped": [], "counted": []})
        else:
            rows.append(row)
    for name, items in by_stage.items():  # a stage not in the trace (or "earlier"): still say why
        rows.append(
            {
                "name": name,
                "words": "an earlier stage (not recorded in this turn)"
                if name == EARLIER
                else STAGE_WORDS.get(name, ""),
                "in": None,
                "out": None,
                "ms": None,
                "pct": 0,
                "dropped": items,
                "counted": [],
                "from": [],
                "added": 0,
                "unit": "",
                "summary": "",
                "n_dropped": len(items),
            }
        )
    return rows


def flat(rows: list[dict]) -> dict[str, dict]:
    """The funnel's stages by name, the paths' members included (tests and the why-not answer)."""
    out: dict[str, dict] = {}
    for r in rows:
        for member in r.get("paths") or [r]:
            out[member["name"]] = member
    return out


def left_out(rows: list[dict]) -> int:
    """How many items the stages left out in all (named or counted)."""
    return sum(m.get("n_dropped") or 0 for m in flat(rows).values())


def drop_ids(rows: list[dict]) -> set[int]:
    """Every memory id the funnel names as dropped (skipped blocks and the stages' recorded ids)."""
    ids: set[int] = set()
    for m in flat(rows).values():
        ids.update(b["memory_id"] for b in m.get("dropped", []) if _int(b.get("memory_id")) is not None)
        for c in m.get("counted", []):
            ids.update(c.get("ids", []))
    return ids


def name_drops(rows: list[dict], labels: dict) -> list[dict]:
    """Each stage's drops as the reader may see them (`labels`: selectors.dashboard.drop_labels): a counted
    reason's ids become `named` (the first SHOWN) and `more`, those the reader may not read only `hidden`
    (a number: no id, no words), and what the turn did not record by id `unnamed`. A skipped block of a
    memory outside the reader's grants leaves `dropped` for the stage's `hidden` count."""
    for m in flat(rows).values():
        shown, hidden = [], 0
        for b in m.get("dropped", []):
            memory_id = b.get("memory_id")
            if _int(memory_id) is not None and memory_id not in labels:
                hidden += 1
                continue
            shown.append({**b, "label": labels.get(memory_id)})
        m["dropped"], m["dropped_more"], m["hidden"] = shown[:SHOWN], shown[SHOWN:], hidden
        m["n_named"] = len(shown)
        for c in m.get("counted", []):
            named = [labels[i] for i in c["ids"] if i in labels]
            c["named"], c["more"] = named[:SHOWN], named[SHOWN:]
            c["hidden"] = len(c["ids"]) - len(named)
            # Found twice counts the extra finds of memories named once each: nothing more to name.
            twice = c["key"] == "found_twice" and c["recorded"]
            c["unnamed"] = 0 if twice else max(c["n"] - len(c["ids"]), 0)
    return rows


def named_funnel(principal, trace: dict, skipped: list[dict]) -> tuple[list[dict], dict]:
    """The funnel with every drop labelled for this reader (one query for all the labels), and the labels."""
    from governance.selectors import dashboard as sel

    rows = funnel(trace, skipped)
    labels = sel.drop_labels(principal, drop_ids(rows))
    return name_drops(rows, labels), labels
