#!/usr/bin/env python
"""EXPLAIN ANALYZE of the governance tabs' queries on a large audit log and outbox, inside one transaction
that is rolled back (nothing stays in the database, the audit chain is untouched).

    python devtools/benchmarks/explain_governance_tabs.py [--events 200000] [--deliveries 500000]

It writes a workspace of 60 project scopes, N audit events over a year (20 actors, 12 actions; one actor
rare), M outbox deliveries (1% failed, 0.2% pending), ANALYZEs, and prints for each query of the audit and
propagation tabs its plan's top node, the index it uses, and the execution time.
"""

import argparse
import os
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryui.settings.dev")


class Rollback(Exception):
    pass


def main() -> None:
    import django

    django.setup()
    from datetime import timedelta

    from django.db import connection, transaction
    from django.utils import timezone

    from governance.models import Role
    from governance.selectors import dashboard as sel
    from governance.services.principal import grant_add, user_ensure
    from governance.services.scope import scope_ensure

    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=200_000)
    parser.add_argument("--deliveries", type=int, default=500_000)
    parser.add_argument("-v", action="store_true", help="print the whole plans")
    args = parser.parse_args()

    def explain(title: str, qs) -> None:
        sql, params = qs if isinstance(qs, tuple) else qs.query.sql_with_params()
        with connection.cursor() as cursor:
            cursor.execute("EXPLAIN (ANALYZE, BUFFERS, FORMAT TEXT) " + sql, params)
            lines = [r[0] for r in cursor.fetchall()]
        indexes = sorted(
            set(
                re.findall(
                    r"(?:Index|Index Only|Bitmap Index) Scan (?:Backward )?(?:using|on) (\w+)",
                    "\n".join(lines),
                )
            )
        )
        seq = sorted(set(re.findall(r"Seq Scan on (\w+)", "\n".join(lines))))
        total = next((ln for ln in lines if ln.startswith("Execution Time")), "")
        if "-v" in sys.argv:
            print("\n".join(lines))
        print(
            f"{title:58} {total:28} indexes: {', '.join(indexes) or '-'}"
            f"{'; seq scan: ' + ', '.join(seq) if seq else ''}"
        )

    try:
        with transaction.atomic():
            ws = scope_ensure(path="explainws", actor=None)
            projects = [scope_ensure(path=f"explainws/p{i}", actor=None) for i in range(60)]
            owner = user_ensure(username="explain-owner", password="x" * 12, actor=None)
            grant_add(principal=owner, scope=ws, role=Role.OWNER, actor=None)
            reviewer = user_ensure(username="explain-reviewer", password="x" * 12, actor=None)
            grant_add(principal=reviewer, scope=projects[7], role=Role.REVIEWER, actor=None)
            with connection.cursor() as cursor:
                # Bulk rows straight in SQL (the hashes are placeholders; this data is rolled back).
                cursor.execute(
                    """
                    INSERT INTO governance_auditevent (at, actor_name, action, target_type, target_id, scope_path,
                        before_status, after_status, reason, data, prev_hash, hash)
                    SELECT now() - (365.0 * (%(n)s - g) / %(n)s) * interval '1 day',
                           CASE WHEN g %% 200 = 0 THEN 'rare-auditor' ELSE 'user' || (g %% 19) END,
                           (ARRAY['memory.record','memory.confirm','memory.reject','memory.supersede','memory.retire',
                                  'memory.forget','memory.reinforce','grant.add','grant.revoke','memory.propose',
                                  'memory.approve','token.issue'])[1 + g %% 12],
                           'memory', g::text, 'explainws/p' || (g %% 60), '', '', '', '{}', '', md5(g::text) || md5('x' || g)
                    FROM generate_series(1, %(n)s) g""",
                    {"n": args.events},
                )
                cursor.execute(
                    """
                    WITH o AS (
                        INSERT INTO governance_outbox (topic, memory_id, payload, state, attempts, created_at)
                        SELECT 'memory.status', NULL, jsonb_build_object('scope_id', %(sid)s), 'done', 1,
                               now() - (g || ' seconds')::interval
                        FROM generate_series(1, %(n)s / 5) g RETURNING id)
                    INSERT INTO governance_outboxdelivery (outbox_id, store, state, error, attempts)
                    SELECT o.id, s, CASE WHEN random() < 0.01 THEN 'failed' WHEN random() < 0.002 THEN 'pending'
                                         ELSE 'done' END, 'connection refused', 1
                    FROM o, unnest(ARRAY['embedding','keyword','cache','summaries','turns']) s""",
                    {"n": args.deliveries, "sid": projects[7].pk},
                )
                cursor.execute("ANALYZE governance_auditevent")
                cursor.execute("ANALYZE governance_outbox")
                cursor.execute("ANALYZE governance_outboxdelivery")
            first = sel.AuditFilters()
            mid = sel.audit_queryset(owner, ws).order_by("pk").values_list("pk", flat=True)[args.events // 2]
            today = timezone.localdate()

            def page(principal, filters, before=None):
                """The page's query as audit_page builds it (its id bounds for a date range included)."""
                captured = []
                with connection.execute_wrapper(
                    lambda run, sql, params, many, ctx: (
                        captured.append((sql, params)) or run(sql, params, many, ctx)
                    )
                ):
                    sel.audit_page(principal, ws if principal == owner else None, filters, before=before)
                return captured[-1]

            print(f"{args.events} audit events, {args.deliveries} deliveries (rolled back afterwards)\n")
            explain("audit, workspace, first page", page(owner, first))
            explain("audit, workspace, deep page (before = the middle id)", page(owner, first, mid))
            explain(
                "audit, action filter, deep page", page(owner, sel.AuditFilters(action="grant.revoke"), mid)
            )
            explain(
                "audit, rare actor (0.5% of events), deep page",
                page(owner, sel.AuditFilters(actor="rare-auditor"), mid),
            )
            week = sel.AuditFilters(
                since=timezone.now() - timedelta(days=120), until=timezone.now() - timedelta(days=113)
            )
            explain("audit, a week 4 months ago", page(owner, week))
            both = sel.AuditFilters(
                action="memory.confirm",
                actor="user3",
                since=timezone.now() - timedelta(days=200),
                until=timezone.now(),
            )
            explain("audit, action + actor + 200 days", page(owner, both))
            explain("audit, reviewer of one project (1/60 of events)", page(reviewer, first))
            from django.db.models import Count, Min

            from governance.models import OutboxDelivery

            open_qs = (
                OutboxDelivery.objects.filter(state__in=["pending", "failed"])
                .order_by()
                .values_list("store", "state")
                .annotate(n=Count("*"), first=Min("outbox_id"))
            )
            explain("propagation, open deliveries per store", open_qs)
            failed = (
                OutboxDelivery.objects.select_related("outbox")
                .annotate(first_memory=sel.audit._first_memory())
                .filter(sel.audit._readable_change(reviewer, None, "outbox__"), state="failed")
                .order_by("-outbox_id", "store")[:50]
            )
            explain("propagation, failed deliveries the reviewer may read", failed)
            del today
            raise Rollback
    except Rollback:
        print("\n(rolled back)")


if __name__ == "__main__":
    main()
