"""`manage.py bench_turn_retention`: the cost of turn retention at --turns stored turns (10,000) in one
scope (`bench/turns`): each round writes the turns (clones of one real packet assembled there, with its
citations, spread over a year), then times the pruning task's work for a policy under which nothing is due
(the steady-state cost of a beat run), and for one that archives and deletes the older half. Each turn
cites 30 memories (the template's own citations, filled up with the scope's other memories: a packet of a
real project cites about that many), so the archive's cited-id arrays and the TurnMemory deletes are real. Prints the
median over --rounds, ms per 1,000 pruned turns, and the archive's size on disk. Its rows are removed at
the end of each round. Run it on a database of its own (DATABASE_URL=postgresql://…/memory_bench); the
figures are only as good as the CPU is idle (the machine may be shared)."""

from __future__ import annotations

import statistics
import time

from django.core.management.base import BaseCommand, CommandError
from django.db import connection
from django.utils import timezone

from governance.models import Memory, RetentionPolicy, Role, Turn, TurnArchive, TurnMemory
from governance.services.memory import MemoryInput, memory_record
from governance.services.principal import grant_add, principal_ensure
from governance.services.retention import retention_policy_set
from governance.services.scope import scope_ensure
from governance.services.turn_retention import turns_prune

PATH = "bench/turns"
FACTS = [
    "The Q3 deck is exported as PPTX",
    "Invoices are sent on the first working day",
    "The report template uses the grey theme",
    "Refunds above 500 EUR need a second approval",
    "The client reviews drafts on Thursdays",
    "Charts use the company palette",
]


class Command(BaseCommand):
    help = "Benchmark turn retention (archive + delete) at N stored turns in one scope; prints medians."

    def add_arguments(self, parser):
        parser.add_argument("--turns", type=int, default=10_000)
        parser.add_argument("--rounds", type=int, default=3)

    def handle(self, *args, turns, rounds, **options):
        if turns < 2 or rounds < 1:
            raise CommandError("--turns is at least 2 and --rounds at least 1.")
        scope = scope_ensure(path=PATH, actor=None)
        owner = principal_ensure(name="bench-owner", kind="user", actor=None)
        grant_add(principal=owner, scope=scope, role=Role.OWNER, actor=None)
        template = self._template(scope, owner)
        idle, prune, sizes = [], [], []
        for i in range(rounds):
            self._seed(scope, template, turns)
            policy = retention_policy_set(scope=scope, actor=owner, turns_max_age_days=400)
            started = time.perf_counter()
            nothing = turns_prune(policy=policy)
            idle.append((time.perf_counter() - started) * 1000)
            if nothing["pruned"]:
                raise CommandError("the nothing-due policy pruned turns")
            policy = retention_policy_set(scope=scope, actor=owner, turns_max_age_days=183)
            started = time.perf_counter()
            done = turns_prune(policy=policy)
            prune.append(((time.perf_counter() - started) * 1000, done["pruned"]))
            if done["archived"] != done["pruned"] or not done["pruned"]:
                raise CommandError(f"expected every pruned turn archived: {done}")
            sizes.append(self._archive_bytes())
            self.stdout.write(
                f"  round {i + 1}: nothing due {idle[-1]:.1f} ms; pruned {done['pruned']} "
                f"in {prune[-1][0]:.0f} ms"
            )
            self._clear(scope)
        ms = statistics.median(p[0] for p in prune)
        n = statistics.median(p[1] for p in prune)
        self.stdout.write(
            f"\n{turns} stored turns in {PATH} (clones of one real packet, {len(template['cited'])} citations "
            f"each), median of {rounds} rounds:\n"
            f"  beat run with nothing due     {statistics.median(idle):8.1f} ms\n"
            f"  archive + delete {int(n):>6} turns {ms:8.1f} ms  ({ms / n * 1000:.1f} ms per 1,000 turns, "
            f"{n / ms * 1000:.0f} turns/s)\n"
            f"  archive on disk                {statistics.median(sizes) / 1e6:8.1f} MB for {int(n)} turns"
        )

    def _template(self, scope, owner) -> dict:
        from governance.recall.packet import assemble_context

        if not Memory.objects.filter(scope=scope).exists():
            for i in range(30):
                memory_record(
                    item=MemoryInput(
                        scope=scope,
                        kind="semantic",
                        status="active",
                        source_kind="user",
                        text=f"{FACTS[i % len(FACTS)]} (note {i})",
                    ),
                    actor=owner,
                )
        result = assemble_context(
            principal=owner, scope=scope, query="how is the Q3 deck exported?", budget_tokens=1500, store=True
        )
        turn = Turn.objects.get(pk=result["turn_id"])
        cited = list(TurnMemory.objects.filter(turn=turn).values_list("memory_id", "slot", "included"))
        others = Memory.objects.filter(scope=scope).exclude(pk__in=[c[0] for c in cited]).order_by("pk")
        cited += [
            (pk, "evidence", False) for pk in others.values_list("pk", flat=True)[: max(0, 30 - len(cited))]
        ]
        template = {
            "query": turn.query,
            "request": turn.request,
            "packet": turn.packet,
            "text": turn.text,
            "trace": turn.trace,
            "cited": cited,
        }
        turn.delete()
        return template

    def _seed(self, scope, template: dict, n: int) -> None:
        now = timezone.now()
        rows = Turn.objects.bulk_create(
            [
                Turn(
                    scope=scope,
                    session=f"s{i % 50}",
                    query=template["query"],
                    request=template["request"],
                    packet=template["packet"],
                    text=template["text"],
                    trace=template["trace"],
                )
                for i in range(n)
            ],
            batch_size=1000,
        )
        with connection.cursor() as cur:
            # Spread over a year, oldest first.
            cur.execute(
                "UPDATE governance_turn SET created_at = %s - (interval '1 day' * 365 * (1 - (id - %s)::float / %s))"
                " WHERE id BETWEEN %s AND %s",
                [now, rows[0].pk, n, rows[0].pk, rows[-1].pk],
            )
        TurnMemory.objects.bulk_create(
            [
                TurnMemory(turn=t, memory_id=m, slot=slot, included=inc)
                for t in rows
                for m, slot, inc in template["cited"]
            ],
            batch_size=5000,
        )

    def _archive_bytes(self) -> int:
        with connection.cursor() as cur:
            cur.execute("SELECT pg_total_relation_size('governance_turnarchive')")
            return int(cur.fetchone()[0])

    def _clear(self, scope) -> None:
        Turn.objects.filter(scope=scope).delete()
        TurnArchive.objects.filter(scope=scope).delete()
        RetentionPolicy.objects.filter(scope=scope).update(turns_max_age_days=None)
