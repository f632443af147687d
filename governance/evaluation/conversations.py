"""Readers for the public conversation-memory benchmark files, turned into what this service stores and asks:
turns (the lines `import_conversations` ingests) and questions with the refs of their evidence turns
(what `evaluate_retrieval` measures). The user brings the files; nothing is downloaded.

- LoCoMo: a JSON list of samples {sample_id, conversation: {speaker_a, speaker_b, session_N: [{speaker,
  dia_id, text, blip_caption?}], session_N_date_time}, qa: [{question, answer, evidence: [dia_id], category}]}.
  One scope per sample; a turn's ref is its dia_id ("D3:7"); the speaker's name is kept on the turn.
- LongMemEval: a JSON list of questions {question_id, question_type, question, answer, question_date,
  haystack_dates, haystack_session_ids, haystack_sessions: [[{role, content, has_answer?}]],
  answer_session_ids}. Each question has its own haystack, so one scope per question; a turn's ref is
  "<session id>:<index>". The question is asked at its question_date. The evidence is the turns marked has_answer in the answer sessions (the whole
  answer sessions when none is marked).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

from governance.services.events import turn_too_long

FORMATS = ("jsonl", "locomo", "longmemeval")
LOCOMO_CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
KNOWLEDGE_UPDATE = "knowledge-update"
# A LongMemEval question whose id ends in "_abs" asks about what the history never says (the answer is "you
# did not mention it"); its answer sessions are only the sessions near its topic, with no turn marked as the
# answer. The benchmark's own retrieval metrics leave these out (LongMemEval, print_retrieval_metrics.py);
# here they are a category of their own, measured and printed apart from the answerable total, as LoCoMo's
# adversarial questions are.
ABSTENTION = "abstention"
NOT_A_LIST = "{name}: a {fmt} file is a JSON list of {what}."
BAD_ITEM = "{name}: item {index}: {problem}"
UNKNOWN_FORMAT = "The file format is one of: " + ", ".join(FORMATS) + "."
# Turns of one session are this far apart (the files date sessions, not turns): keeps their order in time.
TURN_SPACING = timedelta(seconds=30)


@dataclass(frozen=True)
class EvalQuestion:
    scope: str
    question: str
    evidence_refs: tuple[str, ...]
    category: str
    ident: str = ""
    # Knowledge updates: the evidence of the newest session and of the older ones, to check that the
    # newer evidence ranks first.
    newer_refs: tuple[str, ...] = ()
    older_refs: tuple[str, ...] = ()
    # When the question was asked (LongMemEval's question_date): recall answers as of then, so "two months
    # ago" and recency mean what they meant to the asker, and nothing said later is in the packet. None
    # (LoCoMo, which dates no question): asked now.
    asked_at: datetime | None = None
    # The file's gold answer (LoCoMo's `answer`, or `adversarial_answer`; LongMemEval's `answer`), kept for
    # a missed question's drill-down; retrieval is measured on the evidence turns, never on it.
    answer: str = ""


def _answer(value) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


@dataclass
class Loaded:
    turns: list[dict] = field(default_factory=list)  # import_conversations lines
    questions: list[EvalQuestion] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # questions left out, and why
    # Turns left out of `turns`, and why: too long to be one memory (3 turns of the LongMemEval dev
    # file, pasted documents of up to 41,855 characters). Their questions stay: such a turn, if it is
    # evidence, counts as missed.
    left_out: list[str] = field(default_factory=list)


def detect_format(path: Path) -> str:
    """jsonl for a file of JSON lines; locomo or longmemeval for a JSON list, by the keys of its first item."""
    with open(path, encoding="utf-8") as handle:
        head = handle.read(4096).lstrip()
    if not head.startswith("["):
        return "jsonl"
    match = re.search(r'"(conversation|qa|haystack_sessions|question_id)"', head)
    if match and match.group(1) in ("haystack_sessions", "question_id"):
        return "longmemeval"
    return "locomo"


def load(path: Path, fmt: str, *, prefix: str) -> Loaded:
    if fmt == "locomo":
        return load_locomo(_json_list(path, fmt, "samples"), prefix=prefix, name=path.name)
    if fmt == "longmemeval":
        return load_longmemeval(_json_list(path, fmt, "questions"), prefix=prefix, name=path.name)
    raise ValueError(UNKNOWN_FORMAT)


def _without_long_turns(loaded: Loaded) -> Loaded:
    """Leave out the turns no memory can hold (services.events.turn_too_long, the rule the import applies),
    each named in `left_out`, so the rest of the file imports and is asked."""
    kept = []
    for turn in loaded.turns:
        if problem := turn_too_long(turn["content"]):
            loaded.left_out.append(f"{turn['scope']}, turn {turn['ref']}: {problem}")
        else:
            kept.append(turn)
    loaded.turns = kept
    return loaded


def _json_list(path: Path, fmt: str, what: str) -> list:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise ValueError(f"{path.name}: not JSON ({exc})") from exc
    if not isinstance(data, list):
        raise ValueError(NOT_A_LIST.format(name=path.name, fmt=fmt, what=what))
    return data


def _slug(value: object) -> str:
    return re.sub(r"[^a-z0-9_]+", "_", str(value).lower()).strip("_") or "x"


# --- LoCoMo --------------------------------------------------------------------------------------------


def parse_locomo_date(text: str) -> datetime | None:
    """ "1:56 pm on 8 May, 2023" (the dataset's form), as UTC."""
    cleaned = re.sub(r"\s+", " ", str(text or "")).strip()
    for pattern in ("%I:%M %p on %d %B, %Y", "%I:%M %p on %d %b, %Y", "%I:%M %p on %B %d, %Y"):
        try:
            return datetime.strptime(cleaned, pattern).replace(tzinfo=UTC)
        except ValueError:
            continue
    return None


def _locomo_text(turn: dict) -> str:
    text = str(turn.get("text") or "").strip()
    caption = str(turn.get("blip_caption") or "").strip()
    # A shared photo is part of what was said ("Look at this!"): its caption keeps the turn findable.
    return f"{text} [shares a photo: {caption}]" if caption else text


def _evidence_ids(raw) -> list[str]:
    # The file has a few evidence entries written "D8:6; D9:17" or "D10:19 D10:20": split them.
    out: list[str] = []
    for item in raw if isinstance(raw, list) else [raw]:
        out += [p for p in re.split(r"[;,\s]+", str(item or "")) if p]
    return out


def load_locomo(samples: list, *, prefix: str, name: str = "locomo") -> Loaded:
    loaded = Loaded()
    for index, sample in enumerate(samples):
        conv = sample.get("conversation") if isinstance(sample, dict) else None
        if not isinstance(conv, dict):
            raise ValueError(
                BAD_ITEM.format(name=name, index=index, problem="`conversation` must be an object")
            )
        scope = f"{prefix}/{_slug(sample.get('sample_id') or f'sample_{index}')}"
        sessions = sorted(
            (int(m.group(1)), key) for key in conv if (m := re.fullmatch(r"session_(\d+)", key))
        )
        ref_at: dict[str, datetime] = {}
        for number, key in sessions:
            start = parse_locomo_date(conv.get(f"{key}_date_time"))
            if start is None:
                raise ValueError(
                    BAD_ITEM.format(
                        name=name,
                        index=index,
                        problem=f"`{key}_date_time` is not a date like '1:56 pm on 8 May, 2023'",
                    )
                )
            for position, turn in enumerate(conv.get(key) or []):
                text = _locomo_text(turn) if isinstance(turn, dict) else ""
                if not text or not turn.get("dia_id"):
                    continue
                at = start + position * TURN_SPACING
                ref = str(turn["dia_id"]).strip()
                ref_at[ref] = at
                loaded.turns.append(
                    {
                        "scope": scope,
                        "session": f"session_{number}",
                        "at": at,
                        "role": "user",
                        "speaker": str(turn.get("speaker") or "").strip(),
                        "content": text,
                        "ref": ref,
                    }
                )
        for qi, qa in enumerate(sample.get("qa") or []):
            refs = [r for r in _evidence_ids(qa.get("evidence")) if r in ref_at]
            question = str(qa.get("question") or "").strip()
            if not question or not refs:
                loaded.skipped.append(
                    f"{scope} question {qi}: no question text or no evidence turn in the file"
                )
                continue
            category = qa.get("category")
            label = (
                f"{category} {LOCOMO_CATEGORIES[category]}"
                if category in LOCOMO_CATEGORIES
                else str(category)
            )
            loaded.questions.append(
                EvalQuestion(
                    scope=scope,
                    question=question,
                    evidence_refs=tuple(dict.fromkeys(refs)),
                    category=label,
                    ident=f"{scope}#{qi}",
                    answer=_answer(qa.get("answer", qa.get("adversarial_answer"))),
                )
            )
    return _without_long_turns(loaded)


# --- LongMemEval ---------------------------------------------------------------------------------------


def parse_longmemeval_date(text: str) -> datetime | None:
    """ "2023/05/20 (Sat) 02:21" (the dataset's form), as UTC."""
    cleaned = re.sub(r"\s*\([A-Za-z]+\)\s*", " ", str(text or "")).strip()
    for pattern in ("%Y/%m/%d %H:%M", "%Y/%m/%d"):
        try:
            return datetime.strptime(cleaned, pattern).replace(tzinfo=UTC)
        except ValueError:
            continue
    return None


def load_longmemeval(items: list, *, prefix: str, name: str = "longmemeval") -> Loaded:
    loaded = Loaded()
    for index, item in enumerate(items):
        if not isinstance(item, dict) or not isinstance(item.get("haystack_sessions"), list):
            raise ValueError(
                BAD_ITEM.format(name=name, index=index, problem="`haystack_sessions` must be a list")
            )
        qid = str(item.get("question_id") or f"q{index}")
        scope = f"{prefix}/{_slug(qid)}"
        sessions = item["haystack_sessions"]
        ids = list(item.get("haystack_session_ids") or [f"s{i}" for i in range(len(sessions))])
        dates = list(item.get("haystack_dates") or [])
        if len(ids) != len(sessions):
            raise ValueError(
                BAD_ITEM.format(
                    name=name,
                    index=index,
                    problem="`haystack_session_ids` and `haystack_sessions` differ in length",
                )
            )
        answer_sessions = {str(s) for s in item.get("answer_session_ids") or []}
        marked: dict[str, list[str]] = {}
        whole: dict[str, list[str]] = {}
        session_at: dict[str, datetime] = {}
        last_at: datetime | None = None
        for si, (sid, turns) in enumerate(zip(ids, sessions, strict=True)):
            sid = str(sid)
            start = parse_longmemeval_date(dates[si]) if si < len(dates) else None
            if start is None:
                raise ValueError(
                    BAD_ITEM.format(
                        name=name,
                        index=index,
                        problem=f"haystack date {si} is not like '2023/05/20 (Sat) 02:21'",
                    )
                )
            session_at[sid] = start
            for position, turn in enumerate(turns or []):
                content = str((turn or {}).get("content") or "").strip()
                role = (turn or {}).get("role")
                if not content or role not in ("user", "assistant"):
                    continue
                ref = f"{sid}:{position}"
                at = start + position * TURN_SPACING
                last_at = at if last_at is None else max(last_at, at)
                loaded.turns.append(
                    {
                        "scope": scope,
                        "session": sid,
                        "at": at,
                        "role": role,
                        "speaker": "",
                        "content": content,
                        "ref": ref,
                    }
                )
                if sid in answer_sessions:
                    whole.setdefault(sid, []).append(ref)
                    if turn.get("has_answer"):
                        marked.setdefault(sid, []).append(ref)
        evidence_by_session = marked or whole
        refs = [
            r
            for sid in sorted(evidence_by_session, key=lambda s: session_at[s])
            for r in evidence_by_session[sid]
        ]
        question = str(item.get("question") or "").strip()
        if not question or not refs:
            loaded.skipped.append(f"{scope}: no question text or no evidence turn in the haystack")
            continue
        category = ABSTENTION if qid.endswith("_abs") else str(item.get("question_type") or "uncategorised")
        asked_at = None
        if item.get("question_date"):
            asked_at = parse_longmemeval_date(item["question_date"])
            if asked_at is None:
                raise ValueError(
                    BAD_ITEM.format(
                        name=name, index=index, problem="question_date is not like '2023/05/20 (Sat) 02:21'"
                    )
                )
            # The benchmark asks every question after its whole haystack, yet a few of its sessions are
            # dated hours after the question (6 of the 122 dev questions, up to 19 h, all of the question's
            # day or the next): then the question is asked just after the last turn, not before its evidence.
            if last_at is not None:
                asked_at = max(asked_at, last_at + TURN_SPACING)
        newer, older = (), ()
        if category == KNOWLEDGE_UPDATE and len(evidence_by_session) > 1:
            by_time = sorted(evidence_by_session, key=lambda s: session_at[s])
            newer = tuple(evidence_by_session[by_time[-1]])
            older = tuple(r for sid in by_time[:-1] for r in evidence_by_session[sid])
        loaded.questions.append(
            EvalQuestion(
                scope=scope,
                question=question,
                evidence_refs=tuple(refs),
                category=category,
                ident=qid,
                newer_refs=newer,
                older_refs=older,
                asked_at=asked_at,
                answer=_answer(item.get("answer")),
            )
        )
    return _without_long_turns(loaded)
