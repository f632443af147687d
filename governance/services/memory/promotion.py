"""Promotion, "write fast, promote slow": a candidate preference or convention seen consistently in
several episodes (sessions) of the same scope and task type becomes a long-term proposal that cites its
supporting episodes with `derived_from` relations. It is never promoted without them: confirming checks
the support again, so an episode forgotten in the meantime counts no more."""

from __future__ import annotations

from collections import defaultdict

from django.conf import settings
from django.db import transaction

from governance.errors import Conflict, InvalidInput
from governance.models import (
    NEAR_DUPLICATES,
    Kind,
    Memory,
    Principal,
    Relation,
    RelationKind,
    Scope,
    SourceKind,
    Status,
    Tier,
)
from governance.permissions import Action, require, require_writable
from governance.services.audit import AuditEntry, audit_record
from governance.services.memory.record import MemoryInput, memory_record

PROMOTABLE_KINDS = (Kind.PREFERENCE, Kind.CONVENTION)
# Episodic memories cited per supporting session: enough to show the evidence, not the whole transcript.
EPISODES_PER_SESSION = 3


class PromotionUnsupported(Conflict):
    code = "promotion_unsupported"
    message = (
        "A promotion needs supporting episodes from enough distinct sessions of the same scope and task type; "
        "this one does not have them (any more)."
    )


class PromotionForgotten(Conflict):
    code = "promotion_text_forgotten"
    message = (
        "This candidate was folded into a proposal that was since forgotten; it is not proposed again. "
        "Only a person writing the text again brings it back."
    )


class PromotionExists(Conflict):
    code = "promotion_exists"
    message = (
        "This candidate's promotion was already proposed (or decided) in this scope: see the review "
        "queue or the memory it became."
    )


PROMOTION_NOT_CANDIDATE = "Only candidate preferences and conventions can be promoted."


def min_episodes() -> int:
    return int(getattr(settings, "PROMOTION_MIN_EPISODES", 3))


def _supporting_sessions(episodes: list[Memory]) -> set[str]:
    return {e.session or f"memory:{e.pk}" for e in episodes}


def promotion_check_support(memory: Memory) -> None:
    """Raise PromotionUnsupported when a promotion proposal no longer cites enough live episodes."""
    promo = memory.meta.get("promotion")
    if not promo:
        return
    episodes = list(
        Memory.objects.filter(
            relations_in__source=memory,
            relations_in__kind=RelationKind.DERIVED_FROM,
            kind=Kind.EPISODIC,
            scope__tree__ancestor_of=memory.scope.tree,
        ).exclude(status=Status.FORGOTTEN)
    )
    if len(_supporting_sessions(episodes)) < int(promo.get("min_episodes", min_episodes())):
        raise PromotionUnsupported()


def _episodes_for(candidate: Memory) -> list[Memory]:
    """The episodic memories a candidate was extracted from, for it and each repeat merged into it
    (services/near_duplicate.py): the ones it names in "episode_ids", else the latest episodic traces of
    its session, scope and task type. A candidate naming none keeps its own session's support even when a
    repeat names some."""
    base = Memory.objects.filter(scope_id=candidate.scope_id, kind=Kind.EPISODIC).exclude(
        status=Status.FORGOTTEN
    )
    meta = candidate.meta if isinstance(candidate.meta, dict) else {}
    named: list[int] = []
    sessions: list[str] = []
    for entry, session in (
        (meta, candidate.session),
        *((r, r.get("session")) for r in meta.get(NEAR_DUPLICATES) or ()),
    ):
        ids = [int(i) for i in (entry.get("episode_ids") or ()) if isinstance(i, int)]
        if ids:
            named += ids
        elif session:
            sessions.append(session)
    out = list(base.filter(pk__in=named)) if named else []
    for session in dict.fromkeys(sessions):
        seen = {e.pk for e in out}
        latest = base.filter(session=session, task_type=candidate.task_type).order_by("-occurred_at", "-pk")
        out += [e for e in latest[:EPISODES_PER_SESSION] if e.pk not in seen]
    return out


def _sessions_of(candidate: Memory) -> list[str]:
    """The sessions a candidate was seen in: its own, and those of the repeats merged into it
    (services/near_duplicate.py: a repeat reinforces the candidate instead of being stored)."""
    merged = candidate.meta.get(NEAR_DUPLICATES) if isinstance(candidate.meta, dict) else None
    sessions = [candidate.session, *((r.get("session") or "") for r in merged or ())]
    return [s for s in dict.fromkeys(sessions) if s]


def _group(candidate: Memory) -> str:
    """The promotion group the periodic scan files this candidate under, so a proposal requested by hand
    and the scan's never double up (`_already_promoted`)."""
    subject = f"key:{candidate.key}" if candidate.key else f"text:{candidate.content_hash}"
    return f"{candidate.task_type}|{subject}|{candidate.content_hash[:16]}"


def episodes_suggested(candidate: Memory) -> list[Memory]:
    """The episodes the scan would cite for this candidate (the dashboard ticks them in its request form)."""
    return _episodes_for(candidate)


def _propose(
    *,
    scope: Scope,
    template: Memory,
    candidates: list[Memory],
    episodes: list[Memory],
    needed: int,
    actor: Principal | None,
    group: str,
    reason: str = "",
    requested: bool = False,
) -> Memory:
    proposal = memory_record(
        item=MemoryInput(
            scope=scope,
            kind=template.kind,
            key=template.key,
            text=template.text,
            source_kind=SourceKind.MODEL_INFERENCE,
            source_ref=f"promotion:{group}",
            status=Status.PROPOSED,
            confidence=max(c.confidence for c in candidates),
            importance=max(c.importance for c in candidates),
            tier=Tier.LONG,
            task_type=template.task_type,
            meta={
                "promotion": {
                    "group": group,
                    "candidates": [c.pk for c in candidates],
                    "min_episodes": needed,
                    "sessions": sorted(_supporting_sessions(episodes)),
                    **(
                        {"requested_by": actor.name if actor else "system", "reason": reason}
                        if requested
                        else {}
                    ),
                }
            },
        ),
        actor=actor,
    )
    Relation.objects.bulk_create(
        [
            Relation(
                source=proposal,
                target=e,
                kind=RelationKind.DERIVED_FROM,
                actor=actor,
                reason=f"seen in session {e.session or '-'}",
            )
            for e in episodes
        ]
        + [
            Relation(
                source=c,
                target=proposal,
                kind=RelationKind.SUPPORTS,
                actor=actor,
                reason="candidate folded into the promotion",
            )
            for c in candidates
            if c.pk != proposal.pk
        ],
        ignore_conflicts=True,
    )
    audit_record(
        actor=actor,
        entry=AuditEntry(
            "memory.promotion_request" if requested else "memory.promotion_propose",
            "memory",
            str(proposal.pk),
            scope.path,
            "",
            proposal.status,
            reason,
            {
                "episodes": [e.pk for e in episodes],
                "candidates": [c.pk for c in candidates],
                "needed": needed,
            },
        ),
    )
    return proposal


def promotion_propose(
    *, memory_id: int, episode_ids: list[int], actor: Principal | None, reason: str = ""
) -> Memory:
    """Request the promotion of one candidate preference or convention, citing the episodes a person (or
    an agent) chose: the proposal the periodic scan would make (the same group, every candidate of that
    group folded in), in `proposed` whoever asks: it goes through review like any proposal and puts
    nothing in force. Refused without enough supporting sessions, or when already proposed or decided."""
    if not isinstance(episode_ids, list) or not all(isinstance(i, int) for i in episode_ids):
        raise InvalidInput("episode_ids is a list of memory ids.", field="episode_ids")
    with transaction.atomic():
        candidate = (
            Memory.objects.select_for_update(no_key=True, of=("self",))
            .select_related("scope")
            .filter(pk=memory_id)
            .first()
        )
        if candidate is None:
            from governance.errors import NotFound

            raise NotFound()
        require(actor, candidate.scope, Action.WRITE_CANDIDATE)
        require_writable(actor, candidate.scope, episodes_only=False)
        if candidate.kind not in PROMOTABLE_KINDS or candidate.status != Status.CANDIDATE:
            raise InvalidInput(PROMOTION_NOT_CANDIDATE, field="memory")
        episodes = list(
            Memory.objects.filter(
                pk__in=episode_ids,
                kind=Kind.EPISODIC,
                scope_id=candidate.scope_id,
                task_type=candidate.task_type,
            ).exclude(status=Status.FORGOTTEN)
        )
        needed = min_episodes()
        if len(_supporting_sessions(episodes)) < needed:
            raise PromotionUnsupported()
        folded = _folded_into_forgotten(candidate.scope)
        if candidate.pk in folded:
            raise PromotionForgotten()
        group = _group(candidate)
        if _already_promoted(candidate.scope, group):
            raise PromotionExists()
        same = Memory.objects.filter(
            scope_id=candidate.scope_id,
            status=Status.CANDIDATE,
            kind=candidate.kind,
            task_type=candidate.task_type,
            content_hash=candidate.content_hash,
        )
        same = same.filter(key=candidate.key) if candidate.key else same.filter(key__isnull=True)
        members = sorted({candidate, *same.exclude(pk__in=folded)}, key=lambda m: m.pk)
        return _propose(
            scope=candidate.scope,
            template=candidate,
            candidates=members,
            episodes=episodes,
            needed=needed,
            actor=actor,
            group=group,
            reason=(reason or "").strip()[:500],
            requested=True,
        )


def _folded_into_forgotten(scope: Scope) -> set[int]:
    """The candidates of `scope` folded into a promotion proposal that was forgotten since. Suppression is by
    row, never by text: skipping every candidate whose text matches a forgotten memory told whoever can
    write candidates (an agent, three sessions of guesses and a promotion request) which text had been
    forgotten. The rows a forget decided stay decided; a text said again is a new statement."""
    folded: set[int] = set()
    for ids in Memory.objects.filter(
        scope=scope, status=Status.FORGOTTEN, meta__promotion__has_key="candidates"
    ).values_list("meta__promotion__candidates", flat=True):
        folded.update(i for i in ids or () if isinstance(i, int))
    return folded


def _already_promoted(scope: Scope, group: str) -> bool:
    return Memory.objects.filter(
        scope=scope,
        meta__promotion__group=group,
        status__in=(Status.PROPOSED, Status.ACTIVE, Status.REJECTED),
    ).exists()


def promotion_scan(
    *, scope: Scope, actor: Principal | None = None, needed: int | None = None
) -> list[Memory]:
    """Find candidate preferences/conventions of `scope` repeated in at least `needed` distinct sessions
    of the same task type with one consistent text, and turn each group into one promotion proposal."""
    needed = needed or min_episodes()
    if actor is not None:
        require(actor, scope, Action.WRITE_CANDIDATE)
    candidates = list(
        Memory.objects.filter(scope=scope, status=Status.CANDIDATE, kind__in=PROMOTABLE_KINDS).order_by("pk")
    )
    # The candidates a forgotten proposal was made of are never proposed again; candidates written since, of
    # the same text or not, are proposed like any others (see _folded_into_forgotten).
    folded = _folded_into_forgotten(scope)
    candidates = [c for c in candidates if c.pk not in folded]
    groups: dict[tuple[str, str], list[Memory]] = defaultdict(list)
    for c in candidates:
        groups[(c.task_type, f"key:{c.key}" if c.key else f"text:{c.content_hash}")].append(c)
    created = []
    for (task_type, subject), members in groups.items():
        if subject.startswith("key:") and len({m.content_hash for m in members}) > 1:
            continue  # the sessions disagree about this key: not consistent, nothing to promote
        group = f"{task_type}|{subject}|{members[-1].content_hash[:16]}"
        if len({s for m in members for s in _sessions_of(m)}) < needed or _already_promoted(scope, group):
            continue
        episodes: dict[int, Memory] = {}
        for member in members:
            episodes.update({e.pk: e for e in _episodes_for(member)})
        if len(_supporting_sessions(list(episodes.values()))) < needed:
            continue
        with transaction.atomic():
            created.append(
                _propose(
                    scope=scope,
                    template=members[-1],
                    candidates=members,
                    episodes=list(episodes.values()),
                    needed=needed,
                    actor=actor,
                    group=group,
                )
            )
    return created
