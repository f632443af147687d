"""The packet as text for the model. Rendered only from the packet's blocks, so a packet whose blocks
were redacted (a hard forget) renders again without the forgotten text."""

from __future__ import annotations

SLOTS: tuple[tuple[str, str], ...] = (
    ("task", "Current task"),
    ("handoff", "Hand-off"),
    ("constraints", "Constraints in force"),
    ("negative", "No longer in force"),
    ("preferences", "Preferences"),
    ("recent", "Recent interaction"),
    ("evidence", "Evidence"),
    ("relations", "Relations"),
    ("external", "External evidence"),
)
SLOT_NAMES = tuple(name for name, _ in SLOTS)
UNCONFIRMED = "unconfirmed {status}, not a confirmed fact"
# An active memory no person confirmed (written active by an agent before in force meant confirmed).
UNCONFIRMED_ACTIVE = "unconfirmed: not confirmed by a person, not in force"


def _one_line(text: str) -> str:
    return " ".join((text or "").split())


def render_block(slot: str, block: dict) -> str:
    return _render_block(slot, block) + _digest_note(block) + _dispute_note(block) + session_notes(block)


def _digest_note(block: dict) -> str:
    """A digest says it is one, how long the whole text is, and where to read it (governance/recall/digest.py)."""
    locator = block.get("digest")
    if not isinstance(locator, dict):
        return ""
    where = [f"memory {locator.get('memory_id')}"]
    if locator.get("call_id"):
        where.append(f"call {locator['call_id']}")
    if locator.get("turn"):
        where.append(f"turn {locator['turn']}")
    return f" [digest of {locator.get('chars', 0):,} characters; the whole text: {', '.join(where)}]"


# How a block names who said it, in the evidence (docs/api.md, `said_by`): the agent must never read an
# assistant's suggestion or a tool's output as the user's rule.
SAID_BY_WORDS = {
    "user": "the user said",
    "assistant": "the assistant said",
    "tool": "a tool's output",
    "person": "a person of the workspace",
    "document": "an external document",
    "model": "a model's inference",
    "summary": "a summary",
}


def _said_by(block: dict) -> str:
    words = SAID_BY_WORDS.get(block.get("said_by") or "")
    if not words:
        return ""
    if block.get("speaker") and block.get("said_by") == "user":
        words = f"{block['speaker']} said"
    return f" ({words})"


def _dispute_note(block: dict) -> str:
    """A proposed contradiction no person has decided (governance/recall/disputes.py): both sides stay
    evidence; the model is told they disagree and which was said later."""
    dispute = block.get("in_dispute")
    if not isinstance(dispute, dict):
        return ""
    other = _one_line((dispute.get("with") or {}).get("text", ""))
    newer = dispute.get("newer") == block.get("memory_id")
    when = "this one is newer" if newer else "that one is newer"
    return f' (IN DISPUTE, not decided by a person, with: "{other}"; {when})'


def _render_block(slot: str, block: dict) -> str:
    text = _one_line(block.get("text", ""))
    if block.get("session_override"):
        return render_override(block)
    if block.get("session_requirement") and slot == "constraints":
        return render_requirement(block)
    if slot == "negative" and block.get("set_aside"):
        return render_set_aside(block)
    if slot == "handoff":
        return render_handoff(block)
    if slot == "relations" and isinstance(block.get("contradicted"), dict):
        # A contradiction carries each side in a block of its own id: the line is "W (contradicts: L)".
        text = f"{text} (contradicts: {_one_line(block['contradicted'].get('text', ''))})"
    if slot == "constraints" and block.get("key"):
        return f"- {text} [{block['key']} r{block.get('revision', 1)}]" + _part_note(block)
    if slot == "negative" and block.get("outdated"):
        return render_outdated(block)
    if slot == "negative":
        line = f"- NO LONGER IN FORCE: {text}"
        replaced = block.get("replaced_by")
        if replaced:
            line += f" → replaced by: {_one_line(replaced.get('text', ''))}"
        return line
    if slot == "recent":
        who = block.get("role") or block.get("source", {}).get("kind", "")
        if block.get("call_id"):
            who = f"{who} {block['call_id']}"
        line = f"- {who}: {text}"
        if block.get("replaced_in_session"):
            line += " (replaced later in this session: see No longer in force)"
        return line
    if slot == "external":
        ref = block.get("source", {}).get("ref")
        return f"- {text}" + (f" (source: {ref})" if ref else "") + _supports(block)
    line = f"- {text}"
    if block.get("status") not in (None, "active"):
        line += f" ({UNCONFIRMED.format(status=block['status'])})"
    elif block.get("unconfirmed"):
        line += f" ({UNCONFIRMED_ACTIVE})"
    if block.get("call_id") and slot == "evidence":
        line = f"- {block.get('role', 'tool')} {block['call_id']}: {text}"
    elif slot == "evidence":
        line += _said_by(block)
    line += _supports(block)
    # The loser of a contradiction may still be shown; the model must see that it lost, and to what.
    lost = [f for f in block.get("flags") or [] if f.startswith("loses to ")]
    if lost:
        line += f" (CONTRADICTED by memory {lost[0][len('loses to ') :]})"
    return line


def render_handoff(block: dict) -> str:
    """A hand-off line (governance/recall/handoff.py): its section, what it is, its text, what replaced it."""
    line = (
        f"- [{block.get('section', '')}] ({block.get('nature') or 'note'}) {_one_line(block.get('text', ''))}"
    )
    replaced = block.get("replaced_by")
    if isinstance(replaced, dict):
        line += f" → replaced by: {_one_line(replaced.get('text', ''))}"
    ids = block.get("memory_ids") or []
    return line + (f" [{', '.join(f'm{i}' for i in ids)}]" if ids else "")


def _supports(block: dict) -> str:
    """The fact a supporter was brought in for, by id only (its text is in its own block)."""
    return f" (supports memory {block['supports']})" if block.get("supports") else ""


def render_outdated(block: dict) -> str:
    """An earlier message whose request is out of force: said as such, with what replaced it, so the model
    never reads the old wording as a live instruction."""
    outdated = block["outdated"]
    who = block.get("role") or block.get("source", {}).get("kind", "") or "message"
    if outdated.get("status") == "forgotten":
        # Never quote a message to say what it asked for was forgotten: the quote would be the words.
        key, revision = outdated.get("key"), outdated.get("revision")
        what = f"{key} r{revision}" if key else f"memory {outdated.get('memory_id')}"
        return (
            f"- OUTDATED: a {who} message (memory {block.get('memory_id')}) asked for something since"
            f" forgotten ({what}); its words are not shown: do not act on it"
        )
    line = f"- OUTDATED: this {who} message asked: \"{_one_line(block.get('text', ''))}\"; {outdated.get('why', '')}"
    replaced = outdated.get("replaced_by")
    if replaced:
        later = outdated.get("link") in ("supersedes", "contradicts", "replaced")
        line += (
            f" → {'the later message' if later else 'now in force'}: {_one_line(replaced.get('text', ''))}"
        )
    return line


def _label(block: dict) -> str:
    return (
        f"{block['key']} r{block.get('revision', 1)}"
        if block.get("key")
        else f"memory {block.get('memory_id')}"
    )


def _said(member: dict) -> str:
    return f"the user, turn {member['turn']}" if member.get("turn") else "the user"


def render_override(block: dict) -> str:
    """A user's correction in force for this session only (governance/recall/session.py)."""
    override = block["session_override"]
    replaces = override.get("replaces") or {}
    key = f"{block['key']}: " if block.get("key") else ""
    return (
        f"- {_one_line(block.get('text', ''))} [{key}in force for this session ({_said(override)}), "
        f"awaiting confirmation; sets aside {_label(replaces)}]"
    )


def render_set_aside(block: dict) -> str:
    set_aside = block["set_aside"]
    label = _label(block) if block.get("key") or not block.get("session") else _said_block(block)
    line = f"- NO LONGER IN FORCE for this session: {_one_line(block.get('text', ''))} [{label}] ({set_aside['why']})"
    return line + _part_note(block)


def _part_note(block: dict) -> str:
    """A requirement a later one replaced in part (services/parts.py): which whole it is part of."""
    part = block.get("part_of")
    if not isinstance(part, dict):
        return ""
    # Not the whole text: the agent would read the part set aside among the constraints, and the reverse.
    if part.get("part") == "set aside":
        return " (part of one requirement: the rest of it stays in force, see Constraints in force)"
    return " (part of one requirement: the rest of it was replaced, see No longer in force)"


def _said_block(block: dict) -> str:
    ref = (block.get("source") or {}).get("ref")
    return f"the user's requirement, turn {ref}" if ref else "the user's requirement"


def render_requirement(block: dict) -> str:
    """A requirement the user stated in this session, in force here (governance/recall/session.py)."""
    note = block["session_requirement"]
    said = _said(note)
    if note.get("status") == "proposed":
        waiting = f"awaiting a reviewer (memory {block.get('memory_id')})"
    else:
        waiting = "this session only"
    parts = [f"{said}: in force for this session, {waiting}"]
    replaces = note.get("replaces")
    if replaces:
        turn = f" (turn {replaces['turn']})" if replaces.get("turn") else ""
        how = "withdraws" if note.get("type") == "withdrawal" else "replaces"
        parts.append(f"{how} the user's earlier requirement{turn}")
    rejected = note.get("correction_rejected")
    if rejected:
        parts.append(f"a correction of it (memory {rejected.get('memory_id')}) was rejected by a reviewer")
    line = f"- {_one_line(block.get('text', ''))} [{'; '.join(parts)}]"
    ambiguous = note.get("ambiguous") or []
    if len(ambiguous) > 1:
        options = " or ".join(f"\"{_one_line(a.get('text') or '')}\"" for a in ambiguous)
        line += f" (AMBIGUOUS: it could replace {options}; ask the user which one it changes)"
    return line + _part_note(block)


def session_notes(block: dict) -> str:
    """What this session's corrections say about a rule that stays in force: a binding rule the user asked
    to change, a correction a reviewer rejected, changes proposed elsewhere that wait for a reviewer."""
    notes = []
    asked = block.get("binding_request")
    if asked:
        what = block.get("key") or "this rule"
        notes.append(
            f"BINDING: the user asked in this session ({_said(asked)}): \"{_one_line(asked.get('text', ''))}\";"
            f" {asked['why']}, so a session cannot change it: ask a reviewer to decide on {what};"
            " until then this rule holds"
        )
    rejected = block.get("override_rejected")
    if rejected:
        notes.append(
            f"the user's correction in this session ({_said(rejected)}), "
            f"\"{_one_line(rejected.get('text', ''))}\", was rejected by a reviewer: this rule is in force again"
        )
    pending = block.get("pending_changes") or []
    if pending:
        # By id only: the change was relayed outside this conversation, and its words are an agent's.
        first = pending[0]
        why = f"; {first['why_not_in_force']}" if first.get("why_not_in_force") else ""
        more = f" (and {block['pending_more']} more)" if block.get("pending_more") else ""
        notes.append(
            f"a change awaits a reviewer: memory {first.get('memory_id')} ({first.get('status')}{why})"
            f"{more}; until it is confirmed this rule holds"
        )
    return "".join(f" ({n})" for n in notes)


def slot_header(slot: str) -> str:
    return f"## {dict(SLOTS)[slot]}"


def render_packet_text(packet: dict) -> str:
    lines: list[str] = []
    for slot, _title in SLOTS:
        blocks = packet.get(slot) or []
        if not blocks:
            continue
        lines.append(slot_header(slot))
        lines.extend(render_block(slot, block) for block in blocks)
    return "\n".join(lines)
