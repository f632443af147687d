"""The user's requirements in a session: what each one replaces, decided when it is said.

The extractor reads what a user's turn requires of the task (services/extraction.py, meta["requirement"]:
a request that names a value, a boundary, a correction, a standing instruction, a stage fact). Before the
candidates are written, each requirement that names a value is read against what is in force where it was
said: this session's earlier requirements (the session's own, still standing) and the scope's rules in force
(confirmed by a person, in the scope or above it). It replaces the one that names a value of the same sort
(a format by a format, a version by a version) about the same subject, or that it names negated ("PPTX,
not PDF"); an elliptical correction ("改成 PPTX", "make that Markdown") names no subject, so the sort alone
decides, and when two requirements fit equally, the one the conversation's last rounds are about. When
that does not single one out, nothing is replaced: the requirement records that it is ambiguous and what it
could replace, and the packet says so instead of guessing (governance/recall/session.py).

What it replaces is written down on the requirement (meta["requirement"]["replaces"]) and, after the write,
as a `contradicts` relation from it (conflict.conflict_queue: the review queue shows both, and the read
path reads the link like any contradiction of a rule in force). A replaced keyed rule gives the correction
its key, so confirming it supersedes the rule for everyone (the usual path).

A person hears of it: a requirement that would last beyond its session (a standing instruction, a boundary
said in conversation, a correction that replaces something) is written `proposed`, so it is in the review
queue at once; the rest stay candidates, in force in their session only (and found by promotion if the user
says them again in other sessions)."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Q
from django.utils import timezone

from governance.models import Kind, Memory, Principal, Scope, SourceKind, Status, content_hash, lexical
from governance.services.choices import choice_of, refers_back, says_a_change
from governance.services.conflict import conflict_queue
from governance.services.extraction import Extracted
from governance.services.parts import standing_part
from governance.services.retraction import withdraws
from governance.services.values import as_dict, negated_values, values_in

# Words of a requirement that say *that* something is asked or changed, not what about: never evidence that
# two requirements are about the same subject.
PHRASING = frozenset(
    lexical.terms(
        "please change switch make turn convert use instead actually correction from now on going forward always "
        "never do don't not yet it that this them those also just then finally first only again "
        "请 帮我 改成 改为 换成 改用 改回 换回 还是 不是 而是 以后 今后 始终 不要 别 先 也 都 就 再 最后 然后 "
        "一下 一点 可以 必须 记得"
    )
)
# Requirements of a session read when a new one is said (newest first); a session that states more is
# still read whole for the packet (governance/recall/session.py), this bounds the write's query.
SESSION_LIMIT = 100
RULES_LIMIT = 200
# Turns read back to the user's previous turn, to tell which of two fitting requirements a correction is about.
CONTEXT_TURNS = 6

REASON_REPLACES = "The user's requirement in session {session} replaces this one there."
KINDS_IN_FORCE = (Kind.CONVENTION, Kind.PREFERENCE, Kind.STAGE_FACT, Kind.SEMANTIC, Kind.METHOD)


@dataclass
class _Standing:
    """Something in force a new requirement may replace."""

    memory_id: int | None  # None: said earlier in the same event, not written yet
    text: str
    values: list
    key: str | None
    kind: str
    origin: str  # "session" (this session's requirement) or "rule" (the scope's, confirmed by a person)
    scope_path: str
    extracted: Extracted | None = None
    negated: frozenset = frozenset()  # (sort, norm) of the values it names to be avoided, or that it withdrew

    def describe(self) -> dict:
        out = {
            "memory_id": self.memory_id,
            "text": self.text,
            "origin": self.origin,
            "scope": self.scope_path,
        }
        if self.key:
            out["key"] = self.key
        return out


def _subject(text: str, values) -> set[str]:
    """Content terms beyond the values and the phrasing; single CJK characters say too little alone."""
    value_terms = {t for v in values for t in lexical.terms(v.text)}
    return {
        t
        for t in lexical.terms(text)
        if t not in PHRASING and t not in value_terms and not (len(t) == 1 and not t.isascii())
    }


def shares_subject(a: str, b: str) -> bool:
    """Whether two requirements share a content word beyond their values and the phrasing of a request."""
    return bool(_subject(a, values_in(a)) & _subject(b, values_in(b)))


def _session_standing(scope: Scope, session: str) -> list[_Standing]:
    """This session's requirements still standing (not replaced by a later one, not rejected), oldest first."""
    rows = list(
        Memory.objects.filter(
            scope=scope,
            session=session,
            source_kind=SourceKind.USER,
            status__in=(Status.CANDIDATE, Status.PROPOSED),
            purged_at__isnull=True,
            meta__has_key="requirement",
        )
        .exclude(kind=Kind.EPISODIC)
        .order_by("-occurred_at", "-id")
        .values_list("id", "text", "key", "kind", "meta")[:SESSION_LIMIT]
    )
    replaced = {
        (meta.get("requirement") or {}).get("replaces", {}).get("memory_id")
        for *_, meta in rows
        if isinstance((meta.get("requirement") or {}).get("replaces"), dict)
    }
    out = []
    for pk, text, key, kind, meta in reversed(rows):
        requirement = meta.get("requirement") or {}
        if pk in replaced or requirement.get("replaced_by"):
            # the part later requirements left standing ("别覆盖原文件" after "可以发布了"), if any (parts.py)
            text = requirement.get("standing")
            if not text:
                continue
        negated = _negated_of(requirement)
        out.append(_Standing(pk, text, values_in(text), key, kind, "session", scope.path, negated=negated))
    return out


def _negated_of(requirement: dict | None) -> frozenset:
    return frozenset((v["sort"], v["norm"]) for v in (requirement or {}).get("negated") or ())


def _rules_in_force(scope: Scope) -> list[_Standing]:
    """The scope's rules in force that name a value (confirmed by a person, the scope or above it; a key set
    at several levels counts at the narrowest)."""
    now = timezone.now()
    rows = (
        Memory.objects.filter(
            scope__in=Scope.objects.ancestors_of(scope),
            status=Status.ACTIVE,
            confirmed_at__isnull=False,
            purged_at__isnull=True,
        )
        .filter(Q(key__isnull=False) | Q(kind__in=KINDS_IN_FORCE))
        .filter(Q(valid_until__isnull=True) | Q(valid_until__gt=now))
        .order_by("-id")
        .values_list("id", "text", "key", "kind", "scope__path")[:RULES_LIMIT]
    )
    narrowest: dict[str, tuple] = {}
    unkeyed = []
    for row in rows:
        if row[2] is None:
            unkeyed.append(row)
            continue
        held = narrowest.get(row[2])
        if held is None or row[4].count("/") > held[4].count("/"):
            narrowest[row[2]] = row
    out = []
    for pk, text, key, kind, path in [*narrowest.values(), *unkeyed]:
        values = values_in(text)
        if values:
            negated = frozenset((v.sort, v.norm) for v in negated_values(text, values))
            out.append(_Standing(pk, text, values, key, kind, "rule", path, negated=negated))
    return out


def _fit(new: Extracted, new_values, new_negated, standing: _Standing) -> tuple[int, int] | None:
    """How well `new` replaces `standing`: (strength, shared subject terms), or None when it does not."""
    old_norms = {(v.sort, v.norm) for v in standing.values} - standing.negated
    # a bare number names a quantity of the same number ("200 is too short" for "under 200 words")
    old_norms |= {("number", norm.split()[0]) for sort, norm in old_norms if sort.startswith("quantity")}
    if any((v["sort"], v["norm"]) in old_norms for v in new_negated):
        return 3, 0  # "PPTX, not PDF": names what it replaces
    if standing.negated and (
        _elliptical(new) or _subject(new.text, new_values) & _subject(standing.text, standing.values)
    ):
        # "算了,还是导出 PDF 吧" after "PDF 不用导了": it asks again for what the standing one set aside
        if any((v.sort, v.norm) in standing.negated for v in new_values):
            return 3, 0
        if {v.sort for v in new_values} & {sort for sort, _ in standing.negated}:
            return 2, 0
    sorts = {v.sort for v in new_values} & {v.sort for v in standing.values}
    if not sorts:
        return None
    new_norms = {(v.sort, v.norm) for v in new_values}
    if not any((v.sort, v.norm) not in new_norms for v in standing.values if v.sort in sorts):
        return None  # it names the same value again: a repeat, not a change
    shared = len(_subject(new.text, new_values) & _subject(standing.text, standing.values))
    if _elliptical(new):
        return (2 if shared else 1), shared  # elliptical ("改成 PPTX", "PPTX 吧"): the sort alone may decide
    return (2, shared) if shared else None  # another request replaces one only about the same subject


def _elliptical(new: Extracted) -> bool:
    """A correction, a bare choice (services/choices.py), or a request in the words of a change ("格式换一下,
    用 PPTX", "let's do it in Chinese after all"): each may replace what it does not name."""
    kind = (new.meta.get("requirement") or {}).get("type")
    if new.rule in ("correction", "choice") or kind == "choice" or says_a_change(new.text):
        return True
    if refers_back(new.text):
        return True  # "Send it to Kenji": its object is what was asked before
    # a boundary or request with a bare choice in it ("CSV 就行,别搞复杂了")
    return choice_of(new.text, new.text, lambda *_: []) is not None


def _conversation_about(standing: list[_Standing], last_round: list[str]) -> list[_Standing]:
    """Of several that fit, the one the conversation's last round is about: its turns, newest first, each
    asked which of them it names (a value, or a word of the subject); the first turn that names exactly one
    decides, a turn that names several leaves it open (all of them are returned)."""
    for text in last_round:
        lowered, terms = text.lower(), set(lexical.terms(text))
        named = [
            item
            for item in standing
            if any(v.text.lower() in lowered for v in item.values)
            or (_subject(item.text, item.values) & terms)
        ]
        if len(named) == 1:
            return named
        if len(named) > 1:
            return standing
    return standing


def _last_round(scope: Scope, session: str, fresh: list[dict], ref: str) -> list[str]:
    """What was said just before the turn `ref`, newest first, back to and including the user's previous
    turn: that turn and what answered it (tool output aside)."""
    before: list[dict] = []
    for turn in fresh:
        if ref and turn.get("ref") == ref:
            break
        before.append(turn)
    said = [(t.get("role"), t["content"]) for t in reversed(before) if t.get("role") in ("user", "assistant")]
    if not any(role == "user" for role, _ in said) and session:
        stored = (
            Memory.objects.filter(
                scope=scope, session=session, kind=Kind.EPISODIC, status=Status.ACTIVE, purged_at__isnull=True
            )
            .exclude(source_kind=SourceKind.TOOL_RESULT)
            .order_by("-occurred_at", "-id")
            .values_list("source_kind", "text")[:CONTEXT_TURNS]
        )
        said += [("user" if kind == SourceKind.USER else "assistant", text) for kind, text in stored]
    out = []
    for role, text in said:
        out.append(text)
        if role == "user":
            break
    return out


def requirements_resolve(*, scope: Scope, session: str, found: list[Extracted], turns: list[dict]) -> None:
    """Decide, for each requirement in `found` (in order), what it replaces; write it in its meta, give it
    the key of a keyed rule it replaces, and mark it lasting (proposed) when it would outlive the session.
    A bare choice that replaces nothing is taken out of `found`. Queries only when a requirement names a
    value."""
    todo = [e for e in found if e.meta.get("requirement")]
    if not todo:
        return
    _resolve(scope, session, todo, turns)
    for extracted in todo:
        if not stands(extracted.meta["requirement"]) and extracted.rule not in ("choice", "withdrawal"):
            del extracted.meta["requirement"]  # a rule's candidate still (a preference), but no requirement
    found[:] = [e for e in found if e.rule not in ("choice", "withdrawal") or stands(e.meta["requirement"])]


def _resolve(scope: Scope, session: str, todo: list[Extracted], turns: list[dict]) -> None:
    standing: dict[str, list[_Standing]] = {}  # this session's and the scope's rules, read when first needed
    earlier: list[_Standing] = []

    def pool() -> list[_Standing]:
        if not standing:
            standing["session"] = _session_standing(scope, session) if session else []
            standing["rules"] = _rules_in_force(scope)
        return [*standing["session"], *earlier, *standing["rules"]]

    def taken(item: _Standing) -> None:  # replaced: nothing later in the event replaces it again
        for items in (standing.get("session"), earlier):
            if items is not None and item in items:
                items.remove(item)

    for extracted in todo:
        requirement = extracted.meta["requirement"]
        corrects = extracted.meta.get("corrects")  # a keyed fact matched by its words (correction.py)
        if corrects:
            requirement["replaces"] = {**corrects, "origin": "rule", "text": None}
        new_values = values_in(extracted.text)
        negated_norms = {(v["sort"], v["norm"]) for v in requirement.get("negated") or ()}
        new_values = [v for v in new_values if (v.sort, v.norm) not in negated_norms]
        if not corrects and not requirement.get("replaces") and (new_values or negated_norms):
            negated = requirement.get("negated") or ()
            fits = [(fit, item) for item in pool() if (fit := _fit(extracted, new_values, negated, item))]
            top = _one_of(fits, extracted, scope, session, turns)
            if len(top) == 1:
                # naming only what it takes back, in a withdrawal's words ("PDF 不用导了"), it withdraws it
                withdraws_it = requirement.get("withdraws") and not new_values
                (_withdraw if withdraws_it else _replace)(extracted, requirement, top[0])
                if requirement.get("type") == "choice" or (
                    requirement.get("type") == "request" and says_a_change(extracted.text)
                ):
                    requirement["type"] = "correction"  # what it changes is now named
                taken(top[0])
            elif top:
                requirement["ambiguous"] = [item.describe() for item in top[:3]]
                if requirement.get("type") == "choice":
                    requirement["type"] = "correction"  # of one of these: the packet says which could be
        words = frozenset(requirement.get("withdraws") or ())
        if words and not requirement.get("replaces") and not requirement.get("ambiguous"):
            # it takes back what it names, asking for nothing in its place (services/retraction.py)
            fits = [(fit, item) for item in pool() if (fit := withdraws(words, item.text, item.values))]
            top = _one_of(fits, extracted, scope, session, turns)
            if len(top) == 1:
                _withdraw(extracted, requirement, top[0])
                taken(top[0])
            elif top:
                requirement["ambiguous"] = [item.describe() for item in top[:3]]
        if not stands(requirement):
            continue  # a bare value or a withdrawal that replaces nothing is no requirement: dropped below
        # A correction, or what replaces a person's rule, would outlast the session; a new request that
        # replaces the session's own earlier one ("now write the description in 110 characters" after "the
        # title in 60") is the next step of the work, in force in its session only.
        replaces = requirement.get("replaces")
        if replaces and (requirement.get("type") == "correction" or replaces.get("origin") == "rule"):
            requirement["lasting"] = True
        if requirement.get("lasting"):
            _already_heard(scope, extracted, requirement)
        earlier.append(
            _Standing(
                None,
                extracted.text,
                new_values,
                extracted.key,
                extracted.kind,
                "session",
                scope.path,
                extracted,
                negated=_negated_of(requirement),
            )
        )


def _one_of(
    fits: list, extracted: Extracted, scope: Scope, session: str, turns: list[dict]
) -> list[_Standing]:
    """Of the standing requirements that fit (fit, item), those that fit best: one, or several when the
    conversation's last round does not tell them apart; none when nothing fits."""
    if not fits:
        return []
    best = max(fit for fit, _ in fits)
    top = [item for fit, item in fits if fit == best]
    if len(top) > 1:
        top = _conversation_about(
            top, _last_round(scope, session, turns, extracted.meta.get("from_ref") or "")
        )
    return top


def _withdraw(extracted: Extracted, requirement: dict, item: _Standing) -> None:
    """`extracted` takes back `item`: it replaces it, and the values of it that it names are named negated."""
    _replace(extracted, requirement, item)
    if requirement.get("type") in ("choice", "request"):
        requirement["type"] = "withdrawal"
    # what it withdrew is what it names negated: asked for again later, that request replaces the withdrawal
    withdrawn = [v for v in item.values if (v.sort, v.norm) not in item.negated]
    norms = {(v.sort, v.norm) for v in withdrawn}
    requirement["values"] = [
        v for v in requirement.get("values") or () if (v["sort"], v["norm"]) not in norms
    ]
    negated = {(v["sort"], v["norm"]): v for v in requirement.get("negated") or ()}
    for v in withdrawn:
        negated.setdefault((v.sort, v.norm), as_dict(v))
    requirement["negated"] = list(negated.values())


def stands(requirement: dict) -> bool:
    """Whether a requirement is one at all: a bare choice or a withdrawal is one only against what it replaces
    (or the requirements it could, when it cannot tell which)."""
    if requirement.get("type") == "choice":
        return False
    if requirement.get("type") == "withdrawal":
        return bool(requirement.get("replaces") or requirement.get("ambiguous"))
    return True


def _already_heard(scope: Scope, extracted: Extracted, requirement: dict) -> None:
    """The same words waiting for review or in force in this scope already: one review item is enough, so
    this one stays its session's (a candidate) and names the one a person decides on."""
    same = (
        Memory.objects.filter(
            scope=scope,
            content_hash=content_hash(extracted.text),
            status__in=(Status.PROPOSED, Status.ACTIVE),
            purged_at__isnull=True,
        )
        .values_list("id", "status")
        .first()
    )
    if same is not None:
        requirement["lasting"] = False
        requirement["decided_as"] = {"memory_id": same[0], "status": same[1]}


def _replace(extracted: Extracted, requirement: dict, item: _Standing) -> None:
    requirement["replaces"] = item.describe()
    if item.extracted is not None:
        requirement["replaces"]["same_event"] = True
        requirement["replaces"]["text"] = item.text
    if item.kind != extracted.kind and item.extracted is None:
        # A correction replaces what it corrects, so it takes its kind: confirmed, it is pinned the same way.
        extracted.meta.setdefault("extracted_kind", extracted.kind)
        extracted.kind = item.kind
    if item.origin == "rule" and item.key and extracted.key is None:
        # Confirming it then supersedes the rule (or overrides an ancestor's) like any keyed correction.
        extracted.key = item.key
        extracted.meta["corrects"] = {"memory_id": item.memory_id, "key": item.key, "scope": item.scope_path}


def requirement_status(extracted: Extracted) -> str:
    """A requirement that would outlive its session waits for a person (proposed); the rest are candidates."""
    requirement = extracted.meta.get("requirement") or {}
    return Status.PROPOSED if requirement.get("lasting") else Status.CANDIDATE


def requirements_link(*, candidates: list[Memory], actor: Principal | None) -> None:
    """After the candidates are written: link each requirement `contradicts` to what it replaces (a
    requirement said earlier in the same event is found among `candidates`), so the review queue shows both
    and the read path sets the replaced one aside in its session."""
    by_text = {m.text: m for m in candidates}
    for memory in candidates:
        replaces = (memory.meta.get("requirement") or {}).get("replaces")
        if not isinstance(replaces, dict) or memory.status not in (Status.CANDIDATE, Status.PROPOSED):
            continue
        if replaces.get("same_event"):
            target = by_text.get(replaces.get("text") or "")
            if target is None or target.pk == memory.pk:
                continue
            replaces["memory_id"] = target.pk
            replaces.pop("same_event", None)
            memory.save(update_fields=["meta", "updated_at"])
        else:
            target = Memory.objects.filter(
                pk=replaces.get("memory_id"), status__in=(Status.ACTIVE, Status.CANDIDATE, Status.PROPOSED)
            ).first()
        if target is None or target.content_hash == memory.content_hash:
            continue
        if memory.key is not None and memory.key == target.key:
            continue  # a keyed correction: conflict detection and corrections_link linked it already
        conflict_queue(
            memory=memory,
            found=[(target, REASON_REPLACES.format(session=memory.session or "-"))],
            actor=actor,
            # what would outlast the session is proposed already (requirement_status); the rest stays its own
            propose=False,
        )
        if "requirement" in (target.meta or {}):
            # Read by the packet of any session that meets the earlier requirement (or the turn it came
            # from): said later by the user, replaced (governance/recall/adjudicate.py, "outdated").
            target.meta["requirement"]["replaced_by"] = {
                "memory_id": memory.pk,
                "session": memory.session,
                "turn": memory.source_ref,
            }
            # What of it this one leaves standing, for what is said next (services/parts.py; the packet
            # reads the same from the requirements that replaced it, recall/session_requirements.py).
            standing = standing_part(target.meta["requirement"].get("standing") or target.text, memory.text)
            if standing:
                target.meta["requirement"]["standing"] = standing
            else:
                target.meta["requirement"].pop("standing", None)
            target.save(update_fields=["meta", "updated_at"])


__all__ = ["requirement_status", "requirements_link", "requirements_resolve", "shares_subject"]
