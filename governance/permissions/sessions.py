"""Who may set a rule aside for a session, and which rules no session may set aside (DESIGN.md, "Trust
boundaries": the conversation exception). The one place for these rules: the read path
(governance.recall.session) folds POLICY_SQL into its lookup, the review queue reads session_policy().

- `session_overrides` on the scope or above it, the strictest applying: `any` (a user's correction counts
  in its session, also as the agent relayed it), `end_user` (only turns posted with a person's token: the
  end user's own, or a trusted app's), `off`.
- A rule is binding when its key is in `binding_keys` of the scope or above it, when `rules_binding` is
  set there, or when it is a long-term commitment and four-eyes applies (ending one takes two people,
  so one user's word in one conversation cannot set it aside either)."""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db import connection

from governance.models import PrincipalKind, SessionOverrides, Tier

STRICTNESS = {SessionOverrides.ANY: 0, SessionOverrides.END_USER: 1, SessionOverrides.OFF: 2}

WHY_END_USER = (
    "this scope counts only corrections posted with the end user's own token; an agent relayed this one"
)
WHY_OFF = "session overrides are off in this scope"

# The settings in force over the scopes %(visible)s (a scope and its ancestors): one row.
POLICY_SQL = """
  SELECT coalesce(bool_or(s.rules_binding), false) AS all_binding,
         coalesce(bool_or(s.require_two_reviewers), false) AS four_eyes,
         coalesce(array_agg(DISTINCT k.key) FILTER (WHERE k.key IS NOT NULL), '{}') AS binding_keys,
         coalesce(max(CASE s.session_overrides WHEN 'off' THEN 2 WHEN 'end_user' THEN 1 ELSE 0 END), 0)
           AS strictness
    FROM governance_scope s LEFT JOIN LATERAL unnest(s.binding_keys) AS k(key) ON true
   WHERE s.id = ANY(%(visible)s)
"""


@dataclass(frozen=True)
class SessionPolicy:
    all_binding: bool = False
    four_eyes: bool = False
    binding_keys: frozenset[str] = field(default_factory=frozenset)
    strictness: int = 0

    @classmethod
    def of_row(cls, row: dict) -> SessionPolicy:
        return cls(
            all_binding=bool(row.get("all_binding")),
            four_eyes=bool(row.get("four_eyes")),
            binding_keys=frozenset(row.get("binding_keys") or ()),
            strictness=int(row.get("strictness") or 0),
        )


def session_policy(scope_ids) -> SessionPolicy:
    """The settings in force over these scopes (a scope and its ancestors). One query."""
    with connection.cursor() as cursor:
        cursor.execute(POLICY_SQL, {"visible": list(scope_ids)})
        names = [c.name for c in cursor.description]
        row = cursor.fetchone()
    return SessionPolicy.of_row(dict(zip(names, row, strict=True)) if row else {})


def told_by(author_kind: str | None) -> str:
    """`end_user` when a person's token posted the correction, else `agent` (the agent's account of it)."""
    return "end_user" if author_kind == PrincipalKind.USER else "agent"


def binding_reason(policy: SessionPolicy, key: str | None, tier: str | None) -> str | None:
    """Why no session may set this rule aside, or None."""
    if key and key in policy.binding_keys:
        return f"{key} is binding in this scope"
    if policy.all_binding:
        return "every rule of this scope is binding"
    if policy.four_eyes and tier == Tier.LONG:
        return "it is a long-term commitment under four-eyes"
    return None


def override_refused(policy: SessionPolicy, teller: str) -> str | None:
    """Why the scope does not let this correction set a rule aside in its session, or None."""
    if policy.strictness >= STRICTNESS[SessionOverrides.OFF]:
        return WHY_OFF
    if policy.strictness >= STRICTNESS[SessionOverrides.END_USER] and teller != "end_user":
        return WHY_END_USER
    return None
