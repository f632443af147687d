"""The audit trail of a session override: when a user's correction stated in a session (source kind
`user`, a session) is queued against a rule in force, one audit event `memory.session_override` says who
posted it (an agent's account, or a person's token), which turn, which session and which rules it sets
aside there. The override itself is a reading of the proposal on the read path (governance.recall.session),
so it needs no state of its own: it ends when the proposal is confirmed, rejected or forgotten, and it
never reaches another session, agent or scope."""

from __future__ import annotations

from governance.models import Kind, Memory, Principal, SourceKind, Status
from governance.permissions.sessions import told_by
from governance.services.audit import AuditEntry, audit_record

REASON = "The user's correction in session {session} sets these rules aside there until a reviewer decides."


def session_override_audit(*, memory: Memory, rules: list[Memory], actor: Principal | None) -> None:
    """Call inside the transaction that linked `memory` `contradicts` to `rules`; audits nothing for a
    memory that is not a session correction or rules that are not in force (confirmed)."""
    if (
        not memory.session
        or memory.source_kind != SourceKind.USER
        or memory.kind == Kind.EPISODIC
        or memory.status not in (Status.CANDIDATE, Status.PROPOSED)
    ):
        return
    in_force = [r for r in rules if r.status == Status.ACTIVE and r.confirmed_at is not None]
    if not in_force:
        return
    audit_record(
        actor=actor,
        entry=AuditEntry(
            "memory.session_override",
            "memory",
            str(memory.pk),
            memory.scope.path,
            memory.status,
            memory.status,
            REASON.format(session=memory.session),
            {
                "session": memory.session,
                "turn": memory.source_ref,
                "told_by": told_by(actor.kind if actor is not None else None),
                "sets_aside": [{"memory_id": r.pk, "key": r.key, "revision": r.revision} for r in in_force],
            },
        ),
    )
