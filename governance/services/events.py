"""Ingesting an interaction: episodic memories per turn (keeping ref and the tool call/result pairing)
and candidate memories found by the extractor (a correction keyed like the fact it corrects), in one
transaction."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from governance.errors import InvalidInput
from governance.models import Kind, Memory, Principal, Relation, RelationKind, Scope, SourceKind
from governance.permissions import may_write_candidates
from governance.services.acceptance import accepted_offers
from governance.services.correction import corrections_link, corrections_resolve, rules_corrected_by_meaning
from governance.services.extraction import Extractor, get_extractor
from governance.services.memory import MAX_TEXT_CHARS, MemoryInput, memory_record_batch
from governance.services.requirements import requirement_status, requirements_link, requirements_resolve
from governance.services.small_talk import small_talk_turn

ROLES = {
    "user": SourceKind.USER,
    "assistant": SourceKind.ASSISTANT,
    "system": SourceKind.ASSISTANT,
    "tool_call": SourceKind.ASSISTANT,
    "tool_result": SourceKind.TOOL_RESULT,
    "tool": SourceKind.TOOL_RESULT,
}
MAX_TURNS = 200
BAD_ROLE = f"role must be one of: {', '.join(ROLES)}."
NO_TURNS = f"An event has 1 to {MAX_TURNS} turns."
EMPTY_CONTENT = "Every turn needs a non-empty content."
# meta key naming the extractor of a candidate (what tells an extracted candidate from a recorded turn).
EXTRACTED_BY = "extracted_by"
REF_TWICE = "Two turns of this event share the ref {ref!r} with different texts; a ref names one turn."
CALL_NEEDS_ID = "A tool_call or tool_result turn needs a call_id that pairs the call with its result."
TURN_TOO_LONG = "A turn's content is {length:,} characters; a memory holds at most {limit:,}: split the turn."


def turn_too_long(content: str) -> str | None:
    """Why a turn of this content cannot be recorded (its memory would pass the text limit), or None."""
    if len(content) > MAX_TEXT_CHARS:
        return TURN_TOO_LONG.format(length=len(content), limit=MAX_TEXT_CHARS)
    return None


def _validate(turns: list[dict]) -> None:
    if not isinstance(turns, list) or not 1 <= len(turns) <= MAX_TURNS:
        raise InvalidInput(NO_TURNS, field="turns")
    for i, turn in enumerate(turns):
        if not isinstance(turn, dict) or turn.get("role") not in ROLES:
            raise InvalidInput(BAD_ROLE, field=f"turns[{i}].role")
        if not isinstance(turn.get("content"), str) or not turn["content"].strip():
            raise InvalidInput(EMPTY_CONTENT, field=f"turns[{i}].content")
        if problem := turn_too_long(turn["content"]):
            raise InvalidInput(problem, field=f"turns[{i}].content")
        if turn["role"] in ("tool_call", "tool_result", "tool") and not turn.get("call_id"):
            raise InvalidInput(CALL_NEEDS_ID, field=f"turns[{i}].call_id")


def _lock_session(scope_id: int, session: str) -> None:
    with transaction.get_connection().cursor() as cursor:
        cursor.execute(
            "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", [f"episodes:{scope_id}:{session}"]
        )


def _fresh_turns(turns: list[dict], seen: set[str]) -> list[dict]:
    """The turns not stored yet: a ref already stored, or met earlier in this event with the same text,
    is a re-send; the same ref with another text in one event is refused (one turn, one text)."""
    fresh, texts = [], {}
    for i, turn in enumerate(turns):
        ref = turn.get("ref")
        if ref and ref in texts:
            if texts[ref] != turn["content"]:
                raise InvalidInput(REF_TWICE.format(ref=ref), field=f"turns[{i}].ref")
            continue
        if ref:
            texts[ref] = turn["content"]
        if not (ref and ref in seen):
            fresh.append(turn)
    return fresh


def event_ingest(
    *,
    scope: Scope,
    session: str,
    at: datetime | None,
    turns: list[dict],
    actor: Principal | None,
    extractor: Extractor | None = None,
) -> list[Memory]:
    """Record one interaction. A turn already stored (same scope, session and ref) is not stored again,
    so re-sending or re-importing an interaction adds nothing. Returns the memories created."""
    _validate(turns)
    at = at or timezone.now()
    refs = [t.get("ref") for t in turns if t.get("ref")]
    with transaction.atomic():
        if refs:
            # Writers of one session's turns take turns, so the second reads the refs the first stored
            # (two importers of one scope at once stored duplicates before); the unique index
            # memory_one_episode_per_turn holds it whatever the caller.
            _lock_session(scope.pk, session or "")
        seen = (
            set(
                Memory.objects.filter(
                    scope=scope, session=session or "", kind=Kind.EPISODIC, source_ref__in=refs
                ).values_list("source_ref", flat=True)
            )
            if refs
            else set()
        )
        fresh = _fresh_turns(turns, seen)
        if not fresh:
            return []
        items = []
        judge = settings.MEMORY_SMALL_TALK_FILTER
        for i, turn in enumerate(fresh):
            role = "tool_result" if turn["role"] == "tool" else turn["role"]
            items.append(
                MemoryInput(
                    scope=scope,
                    kind=Kind.EPISODIC,
                    text=turn["content"],
                    source_kind=ROLES[turn["role"]],
                    source_ref=turn.get("ref") or "",
                    session=session or "",
                    speaker=turn.get("speaker") or "",
                    call_id=turn.get("call_id") or "",
                    # Turns of one event keep their order even when they share a timestamp.
                    occurred_at=(turn.get("at") or at) + timedelta(microseconds=i),
                    meta={
                        "role": role,
                        **({"small_talk": True} if judge and small_talk_turn(turn["content"], role) else {}),
                    },
                )
            )
        extractor = extractor or get_extractor()
        # Under an agent write policy of 'episodes' the turns are recorded, nothing is extracted from them.
        extracting = may_write_candidates(actor, scope)
        found = extractor.extract(fresh) if extracting else []
        if extracting:  # "好的。" to the assistant's "要不要改成 PPTX?": the user asked for PPTX
            found += accepted_offers(scope=scope, session=session or "", turns=fresh)
        # A correction of a keyed fact takes its key, so confirming it supersedes (or overrides) the old value;
        # a sentence that says the opposite of a rule in force (or another value of it) corrects it.
        corrections_resolve(scope=scope, found=found)
        if extracting:
            rules_corrected_by_meaning(scope=scope, found=found, turns=fresh)
        # What each requirement the user stated replaces (their session's own, or a rule in force), and
        # whether it waits for a person (services/requirements.py).
        requirements_resolve(scope=scope, session=session or "", found=found, turns=fresh)
        # A sentence whose text was forgotten is extracted like any other. Skipping it made the extractor an
        # oracle: an agent posting one turn of many guesses read back (GET /memories, its session's packet)
        # which guess was missing. What the user says again is a new statement: a candidate like any other,
        # in force for its session only and for everyone only once a person confirms it; the forgotten
        # memory itself stays forgotten (docs/governance.md, "Forgetting").
        candidates = [
            MemoryInput(
                scope=scope,
                kind=e.kind,
                text=e.text,
                source_kind=SourceKind.USER,
                source_ref=e.meta.get("from_ref", ""),
                session=session or "",
                status=requirement_status(e),
                confidence=e.confidence,
                occurred_at=_said_at(e.meta.get("from_ref"), e.text, fresh, items, at),
                key=e.key,
                meta={**e.meta, EXTRACTED_BY: extractor.name, "rule": e.rule},
            )
            for e in found
        ]
        created = memory_record_batch(items=items + candidates, actor=actor)
        _link_candidates(created[: len(items)], created[len(items) :], actor)
        corrections_link(candidates=created[len(items) :], actor=actor)
        requirements_link(candidates=created[len(items) :], actor=actor)
        return created


def _said_at(
    ref: str | None, text: str, fresh: list[dict], items: list[MemoryInput], at: datetime
) -> datetime:
    """When a candidate was said: the time of the turn it was read from (the ref it names, else the user
    turn holding its text), so a fact of an imported history decays from the day it was said, not from
    the event's first turn; the event's time when no turn is found (a live turn's time is the event's)."""
    for turn, item in zip(fresh, items, strict=True):
        if (ref and turn.get("ref") == ref) or (
            not ref and turn["role"] == "user" and text in turn["content"]
        ):
            return item.occurred_at
    return at


def _link_candidates(episodes: list[Memory], candidates: list[Memory], actor: Principal | None) -> None:
    """Each candidate is derived_from the turn it was read from (provenance for reviewers)."""
    by_ref = {m.source_ref: m for m in episodes if m.source_ref}
    links = []
    for cand in candidates:
        origin = by_ref.get(cand.meta.get("from_ref") or "")
        if origin is None:
            origin = next(
                (m for m in episodes if m.source_kind == SourceKind.USER and cand.text in m.text), None
            )
        if origin is not None:
            links.append(
                Relation(
                    source=cand,
                    target=origin,
                    kind=RelationKind.DERIVED_FROM,
                    actor=actor,
                    reason="extracted from this turn",
                )
            )
    Relation.objects.bulk_create(links, ignore_conflicts=True)
