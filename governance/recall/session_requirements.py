"""The session's requirements in the packet: what the user stated in this session about their task is pinned
here, labelled as the user's and awaiting confirmation; what a later requirement replaced is set aside here,
saying by what; a rule a person put in force after the user spoke decides (recall/session.py's docstring has
the whole story, services/requirements.py decides at write time what each requirement replaces)."""

from __future__ import annotations

from governance.models import Status
from governance.permissions.sessions import SessionPolicy, override_refused
from governance.recall.rank import KEYED_MATCH
from governance.recall.session_rows import LIVE, not_own, said_by, since, turn_of, untangle, who
from governance.recall.state import Hit, RecallState
from governance.services import parts, values
from governance.services.opposite import contradicts
from governance.services.requirements import shares_subject

# A user's turn whose words are this much a requirement's (by length) is that requirement said: when the
# requirement is set aside, the turn is not offered as evidence beside it.
COVERED = 0.8


def requirements_in_force(
    state: RecallState, policy: SessionPolicy, rows: list[dict], spoke: set[int]
) -> int:
    """Pin this session's requirements that still stand; set aside those a later one replaced; say which
    rejected correction brought one back. Returns how many are pinned."""
    if not rows:
        return 0
    rows = sorted(rows, key=lambda r: (r["occurred_at"] or r["created_at"], r["id"]))  # oldest first
    own = [r for r in rows if not_own(state, r) is None and not override_refused(policy, who(r))]
    if not own:
        return 0
    by_id = {r["id"]: r for r in own}
    replaced_by: dict[int, dict] = {}  # an earlier requirement → the later one that replaced it
    replacers: dict[int, list[str]] = {}  # ... and the texts of all that replaced it, oldest first
    rejected: dict[int, dict] = {}  # an earlier requirement → the rejected correction that had replaced it
    for row in own:
        target = _replaces(row)
        if target is None or target not in by_id:
            continue
        if row["status"] == Status.REJECTED:
            rejected[target] = row
        else:
            replaced_by[target] = row
            replacers.setdefault(target, []).append(row["text"])
    held = {h.id for h in state.constraints}
    # A requirement a person confirmed is the scope's rule now (the keyed stage pinned it, for every session);
    # it still sets aside here what it replaced.
    in_force = [
        r
        for r in own
        if r["status"] in LIVE and r["id"] not in replaced_by and r["id"] not in spoke and r["id"] not in held
    ]
    in_force = [r for r in in_force if not _decided_after(state, r)]
    pinned_ids = set()
    for row in in_force:
        hit = state.hits.pop(row["id"], None) or Hit(id=row["id"], row=row, fused=KEYED_MATCH)
        hit.paths.add("session")
        hit.extra["session_requirement"] = _requirement_note(row, by_id, rejected.get(row["id"]))
        hit.extra["pinned_why"] = _pinned_why(row)
        state.constraints.append(hit)
        pinned_ids.add(row["id"])
    for earlier_id in replaced_by:
        earlier, later = by_id[earlier_id], _newest(earlier_id, replaced_by)
        if earlier["status"] not in LIVE:
            continue  # confirmed (the scope's rule: the usual supersede decides) or rejected
        if later["id"] not in pinned_ids and later["id"] not in spoke and later["id"] not in held:
            continue  # set aside only by what is in force here itself
        hit = state.hits.pop(earlier_id, None) or Hit(id=earlier_id, row=earlier, fused=KEYED_MATCH)
        standing = parts.standing_after(earlier["text"], replacers[earlier_id])
        if standing:  # the later ones replaced part of it: the rest stays pinned, the part taken is set aside
            _pin_part(state, earlier, standing, by_id, rejected.get(earlier_id))
            pinned_ids.add(earlier_id)
            hit = Hit(
                id=earlier_id,
                row={**earlier, "text": parts.replaced_part(earlier["text"], standing)},
                fused=KEYED_MATCH,
                extra={"part_of": {"memory_id": earlier_id, "text": earlier["text"], "part": "set aside"}},
            )
        how = _how(later)
        hit.extra["set_aside"] = {
            "session": earlier["session"],
            "why": f"the user {how} it in this session (turn {turn_of(later) or '?'}){_WITH[how]}: "
            f"\"{' '.join(later['text'].split())}\"",
            "by": {
                "memory_id": later["id"],
                "key": later["key"],
                "revision": later["revision"],
                "status": later["status"],
                "text": later["text"],
            },
        }
        state.negative.insert(0, hit)
    _untangle_requirements(state, by_id, replaced_by)
    _episodes_said(state, [*by_id.values()], set(replaced_by), pinned_ids)
    return len(pinned_ids)


def _pin_part(state: RecallState, earlier: dict, standing: str, by_id: dict, rejected: dict | None) -> None:
    """Pin the part of `earlier` that later requirements left standing, as its own block (same memory)."""
    hit = Hit(id=earlier["id"], row={**earlier, "text": standing}, fused=KEYED_MATCH)
    hit.paths.add("session")
    hit.extra["session_requirement"] = _requirement_note(earlier, by_id, rejected)
    hit.extra["part_of"] = {"memory_id": earlier["id"], "text": earlier["text"], "part": "in force"}
    hit.extra["pinned_why"] = f"{_pinned_why(earlier)}; the part of it no later requirement replaced"
    state.constraints.append(hit)


def _decided_after(state: RecallState, row: dict) -> bool:
    """A rule a person put in force after the user said this, and that says otherwise, decides: the
    requirement is what the rule replaced, and it goes to negative context saying so."""
    said = row["occurred_at"] or row["created_at"]
    for rule in [*state.constraints, *state.preferences]:
        decided = rule.row.get("confirmed_at")
        if "session_requirement" in rule.extra or decided is None or said is None or decided <= said:
            continue
        if contradicts(row["text"], rule.row["text"]) or _changes_value(row["text"], rule.row["text"]):
            hit = state.hits.pop(row["id"], None) or Hit(id=row["id"], row=row, fused=KEYED_MATCH)
            hit.extra["set_aside"] = {
                "session": row["session"],
                "why": f"a person put a rule in force after the user said it (memory {rule.id}), and it "
                "decides",
                "by": {
                    "memory_id": rule.id,
                    "key": rule.row["key"],
                    "revision": rule.row["revision"],
                    "status": rule.row["status"],
                    "text": rule.row["text"],
                },
            }
            state.negative.append(hit)
            return True
    return False


def _changes_value(said: str, rule: str) -> bool:
    """The rule names another value of a sort the requirement names, about the same subject."""
    return bool(values.changed(values.values_in(said), values.values_in(rule))) and shares_subject(said, rule)


_WITH = {"replaced": " with", "withdrew": ""}


def _how(later: dict) -> str:
    """What the later requirement did to the earlier one: took it back (services/retraction.py) or replaced it."""
    kind = ((later.get("meta") or {}).get("requirement") or {}).get("type")
    return "withdrew" if kind == "withdrawal" else "replaced"


def _newest(memory_id: int, replaced_by: dict[int, dict]) -> dict:
    """What stands now of a chain of replacements (A replaced by B, B by C: C)."""
    later = replaced_by[memory_id]
    seen = {memory_id}
    while later["id"] in replaced_by and later["id"] not in seen:
        seen.add(later["id"])
        later = replaced_by[later["id"]]
    return later


def _replaces(row: dict) -> int | None:
    replaces = ((row.get("meta") or {}).get("requirement") or {}).get("replaces")
    return replaces.get("memory_id") if isinstance(replaces, dict) else None


def _requirement_note(row: dict, by_id: dict[int, dict], rejected: dict | None) -> dict:
    requirement = (row.get("meta") or {}).get("requirement") or {}
    note = {
        "session": row["session"],
        "turn": turn_of(row),
        "told_by": who(row),
        "since": since(row),
        "type": requirement.get("type"),
        "status": row["status"],
        "awaiting": "a reviewer" if row["status"] == Status.PROPOSED else "this session only",
    }
    target = _replaces(row)
    if target in by_id:
        earlier = by_id[target]
        note["replaces"] = {"memory_id": target, "turn": turn_of(earlier), "text": earlier["text"]}
    ambiguous = requirement.get("ambiguous")
    if ambiguous:
        note["ambiguous"] = [
            {"memory_id": a.get("memory_id"), "text": a.get("text")} for a in ambiguous if isinstance(a, dict)
        ]
    if rejected is not None:
        note["correction_rejected"] = {"memory_id": rejected["id"], "turn": turn_of(rejected)}
    return note


def _pinned_why(row: dict) -> str:
    waiting = (
        f"awaiting a reviewer (memory {row['id']} in the review queue)"
        if row["status"] == Status.PROPOSED
        else "for this session only"
    )
    return f"the user's requirement in this session ({said_by(row)}), in force here, {waiting}"


def _untangle_requirements(state: RecallState, by_id: dict[int, dict], replaced_by: dict[int, dict]) -> None:
    for earlier, later in replaced_by.items():
        untangle(state, later["id"], earlier)


def _episodes_said(state: RecallState, rows: list[dict], set_aside: set[int], pinned: set[int]) -> None:
    """The user's turns that said this session's requirements: a turn that is (nearly) only a requirement
    set aside leaves the evidence and the negative context (the requirement's own block says it), and one
    that is a pinned requirement leaves the evidence (pinned already); in the recent slot a turn stays, as
    the conversation's record, marked when what it asked for was replaced."""
    said: dict[int, list[dict]] = {}
    for row in rows:
        if row.get("episode_id") is not None and (row["id"] in set_aside or row["id"] in pinned):
            said.setdefault(row["episode_id"], []).append(row)
    if not said:
        return
    for hit in [*state.hits.values(), *state.negative, *state.recent]:
        found = said.get(hit.id)
        if not found:
            continue
        covered = sum(len(r["text"]) for r in found) >= COVERED * len(hit.row.get("text") or "")
        aside = [r for r in found if r["id"] in set_aside]
        if aside:
            hit.extra["replaced_in_session"] = [r["id"] for r in aside]
        if covered:
            state.hits.pop(hit.id, None)
            state.negative = [h for h in state.negative if h.id != hit.id]


__all__ = ["requirements_in_force"]
