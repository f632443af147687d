"""Turn retention: stored turns (the context packets /context keeps with their request and trace) older
than a policy's `turns_max_age_days`, or beyond the newest `turns_max_count` of a scope, are copied into
the turn archive and deleted from the hot table, a batch per statement. Kept whatever their age: a turn a
proposal waiting for review was seen in (its origin turn), a turn an audit event names, a turn someone
replayed. The archive keeps the ids of the memories each turn cited, so a hard forget redacts archived
copies too (governance/propagation/turns.py). Applying a policy is the system's act: one audit event per
batch, counts only (never a text)."""

from __future__ import annotations

from datetime import timedelta

from django.db import connection, transaction
from django.db.models import F
from django.utils import timezone

from governance.models import Memory, RetentionPolicy, Scope, Status
from governance.selectors.review import origin_turn
from governance.services.audit import AuditEntry, audit_record

BATCH = 1000
MAX_BATCHES = 50  # per policy and run: beat comes back for the rest

# Columns copied one for one from governance_turn into governance_turnarchive.
_COPIED = (
    "scope_id",
    "principal_id",
    "session",
    "query",
    "strategy",
    "as_of",
    "request",
    "packet",
    "text",
    "budget_limit",
    "budget_used",
    "token_counter",
    "trace",
    "replay_of_id",
    "created_at",
)

# A turn someone points to stays: replayed, or named by an audit event.
_NOT_POINTED_TO = """NOT EXISTS (SELECT 1 FROM governance_turn r WHERE r.replay_of_id = t.id)
               AND NOT EXISTS (SELECT 1 FROM governance_auditevent a
                                WHERE a.target_type = 'turn' AND a.target_id = t.id::text)"""

# Claim, archive and delete one batch in one statement (the keep rules checked again at the claim, so a
# turn pointed to since the run read what is due stays): rows locked by another run are skipped, the
# cited-memory ids are read from turnmemory as the statement starts (every CTE sees the same snapshot), the
# rows that point at the turn (turnmemory, reinforcement events) go with it. Foreign keys are deferred.
_PRUNE_SQL = f"""
    WITH doomed AS (SELECT t.id FROM governance_turn t
                     WHERE t.id = ANY(%(ids)s) AND NOT (t.id = ANY(%(kept)s::bigint[])) AND {_NOT_POINTED_TO}
                     FOR UPDATE SKIP LOCKED),
    gone AS (DELETE FROM governance_turn t USING doomed d WHERE t.id = d.id RETURNING t.*),
    archived AS (
        INSERT INTO governance_turnarchive (turn_id, {", ".join(_COPIED)}, cited, archived_at)
        SELECT g.id, {", ".join("g." + c for c in _COPIED)},
               coalesce((SELECT array_agg(DISTINCT tm.memory_id ORDER BY tm.memory_id)
                           FROM governance_turnmemory tm WHERE tm.turn_id = g.id), '{{}}'),
               %(now)s
          FROM gone g WHERE %(archive)s
        ON CONFLICT (turn_id) DO NOTHING RETURNING 1),
    cited AS (DELETE FROM governance_turnmemory tm USING gone g WHERE tm.turn_id = g.id RETURNING 1),
    reinforced AS (UPDATE governance_reinforcementevent r SET turn_id = NULL FROM gone g WHERE r.turn_id = g.id
                   RETURNING 1)
    SELECT (SELECT count(*) FROM gone), (SELECT count(*) FROM archived), (SELECT min(id) FROM gone),
           (SELECT max(id) FROM gone), (SELECT count(*) FROM cited), (SELECT count(*) FROM reinforced)
"""


def kept_turn_ids(scope_ids: list[int]) -> list[int]:
    """Turns of these scopes a person still needs: the origin turn of every proposal waiting for review."""
    return sorted(
        {
            pk
            for pk in Memory.objects.filter(status=Status.PROPOSED, scope_id__in=scope_ids)
            .exclude(session="")
            .annotate(origin=origin_turn())
            .values_list("origin", flat=True)
            if pk is not None
        }
    )


def _due_turn_ids(
    policy: RetentionPolicy, scope_ids: list[int], kept: list[int], now, limit: int
) -> list[int]:
    """Ids of the turns the policy prunes now, oldest first, at most `limit`."""
    due, params = [], {"scopes": scope_ids, "kept": kept, "limit": limit}
    if policy.turns_max_age_days:
        due.append("t.created_at < %(cutoff)s")
        params["cutoff"] = now - timedelta(days=policy.turns_max_age_days)
    if policy.turns_max_count:
        # Per scope, everything past its newest N (a turn that is kept still takes one of the N places).
        due.append("""t.id IN (SELECT id FROM (SELECT id, row_number() OVER (PARTITION BY scope_id
                                                   ORDER BY created_at DESC, id DESC) AS rn
                                                FROM governance_turn WHERE scope_id = ANY(%(scopes)s)) AS ranked
                               WHERE rn > %(count)s)""")
        params["count"] = policy.turns_max_count
    if not due:
        return []
    with connection.cursor() as cur:
        cur.execute(
            f"""
            SELECT t.id FROM governance_turn t
             WHERE t.scope_id = ANY(%(scopes)s) AND NOT (t.id = ANY(%(kept)s::bigint[]))
               AND ({" OR ".join(due)}) AND {_NOT_POINTED_TO}
             ORDER BY t.id LIMIT %(limit)s
            """,
            params,
        )
        return [row[0] for row in cur.fetchall()]


def turns_prune(*, policy: RetentionPolicy, now=None, batch: int = BATCH) -> dict:
    """Apply the policy's turn limits now: archive (unless `archive_turns` is off) and delete what is due.
    Idempotent; returns {"pruned", "archived"} for this run."""
    now = now or timezone.now()
    totals = {"pruned": 0, "archived": 0}
    if not (policy.turns_max_age_days or policy.turns_max_count):
        return totals
    scope_ids = list(Scope.objects.subtree_of(policy.scope).values_list("pk", flat=True))
    # What is due is read once per run (the count limit ranks every turn of the subtree: once, not per
    # batch); each batch then claims its rows, skipping any a concurrent run holds.
    due = _due_turn_ids(policy, scope_ids, kept_turn_ids(scope_ids), now, batch * MAX_BATCHES)
    for start in range(0, len(due), batch):
        ids = due[start : start + batch]
        with transaction.atomic():
            with connection.cursor() as cur:
                cur.execute(
                    _PRUNE_SQL,
                    {
                        "ids": ids,
                        "kept": kept_turn_ids(scope_ids),
                        "now": now,
                        "archive": policy.archive_turns,
                    },
                )
                pruned, archived, first, last, _cited, _reinforced = cur.fetchone()
            if not pruned:
                continue
            RetentionPolicy.objects.filter(pk=policy.pk).update(
                turns_pruned=F("turns_pruned") + pruned, turns_archived=F("turns_archived") + archived
            )
            audit_record(
                actor=None,
                entry=AuditEntry(
                    "turns.prune",
                    "retention_policy",
                    str(policy.pk),
                    policy.scope.path,
                    "",
                    "",
                    _reason(policy),
                    {"pruned": pruned, "archived": archived, "first_turn": first, "last_turn": last},
                ),
            )
        totals["pruned"] += pruned
        totals["archived"] += archived
    return totals


def _reason(policy: RetentionPolicy) -> str:
    parts = []
    if policy.turns_max_age_days:
        parts.append(f"older than {policy.turns_max_age_days} days")
    if policy.turns_max_count:
        parts.append(f"beyond the newest {policy.turns_max_count} of a scope")
    return "turn retention: " + " or ".join(parts)


def turns_prune_all(*, now=None) -> dict:
    """Every enabled policy with a turn limit (beat)."""
    totals = {"policies": 0, "pruned": 0, "archived": 0}
    for policy in (
        RetentionPolicy.objects.filter(enabled=True)
        .select_related("scope")
        .exclude(turns_max_age_days__isnull=True, turns_max_count__isnull=True)
    ):
        result = turns_prune(policy=policy, now=now)
        totals["policies"] += 1
        totals["pruned"] += result["pruned"]
        totals["archived"] += result["archived"]
    return totals
