"""`manage.py bench_webhooks`: what outbound events cost.

1. the write path: memory_record of a keyed, confirmed memory with no subscription anywhere, then with one
   (the difference is the one `exists` query and the frozen event specs outbox_emit adds);
2. sending: per event, the `webhooks` store's fan-out plus one signed POST to a real receiver on loopback
   plus the delivery log update (Celery in eager mode, so the figure is the work, not the queue).

Runs in a workspace of its own (`benchwh<time>`), allows loopback targets for its own run only, and
deletes what it wrote (memories, outbox rows, the subscription and its log, the scopes; the audit events
stay: the log is append-only). The receiver is the tests' (tests/webhook_receiver.py), so run it from a
checkout. The figures are only as good as the CPU is idle.
"""

from __future__ import annotations

import os
import statistics
import time

from django.core.management.base import BaseCommand
from django.db import transaction
from django.test.utils import override_settings

from devtools.benchmarks.stats import percentile
from governance.models import Memory, Outbox, Scope, WebhookDelivery, Workspace
from governance.propagation import HANDLERS
from governance.services.memory import MemoryInput, memory_record
from governance.services.scope import scope_ensure
from governance.services.webhook import webhook_create


class Command(BaseCommand):
    help = "Measure the cost of outbound events: the write path with and without a subscription, and sending."

    def add_arguments(self, parser):
        parser.add_argument(
            "--events", type=int, default=200, help="memories written per phase (default 200)"
        )

    def handle(self, *args, **opts):
        from memoryui.celery import app
        from tests.webhook_receiver import WebhookReceiver

        n = opts["events"]
        workspace = f"benchwh{int(time.time())}"
        scope = scope_ensure(path=f"{workspace}/run", actor=None)
        eager = app.conf.task_always_eager
        try:
            with override_settings(WEBHOOK_ALLOW_PRIVATE=True), WebhookReceiver() as receiver:
                without = self._writes(scope, n, "a")
                webhook_create(
                    workspace=scope.workspace, url=receiver.url, event_types=["memory.confirmed"], actor=None
                )
                with_sub = self._writes(scope, n, "b")
                app.conf.task_always_eager = True  # only now: the writes above must not propagate inline
                sends = self._sends(scope, n)
                received = len(receiver.received)
        finally:
            app.conf.task_always_eager = eager
            self._cleanup(scope)
        load = os.getloadavg()[0]
        self.stdout.write(
            f"write path (memory_record, keyed, confirmed), {n} writes each, load average {load:.1f}:"
        )
        self.stdout.write(
            f"  no subscription:  median {statistics.median(without):.2f} ms, "
            f"p95 {percentile(without, 95):.2f} ms"
        )
        self.stdout.write(
            f"  one subscription: median {statistics.median(with_sub):.2f} ms, "
            f"p95 {percentile(with_sub, 95):.2f} ms"
        )
        self.stdout.write(
            f"sending ({n} events, fan-out + signed POST to a loopback receiver + log update): "
            f"median {statistics.median(sends):.2f} ms, p95 {percentile(sends, 95):.2f} ms, "
            f"{n / (sum(sends) / 1000):.0f} events/s on one thread; received {received}"
        )

    def _writes(self, scope: Scope, n: int, tag: str) -> list[float]:
        times = []
        for i in range(n):
            item = MemoryInput(
                scope=scope,
                kind="convention",
                key=f"bench_{tag}_{i}",
                text=f"Bench rule {tag} {i}",
                source_kind="user",
                status="active",
            )
            started = time.perf_counter()
            memory_record(item=item, actor=None)
            times.append((time.perf_counter() - started) * 1000)
        return times

    def _sends(self, scope: Scope, n: int) -> list[float]:
        rows = Outbox.objects.filter(
            memory__scope=scope, topic="memory.created", payload__has_key="webhook_events"
        ).order_by("pk")[:n]
        times = []
        for outbox in rows:
            started = time.perf_counter()
            HANDLERS["webhooks"](outbox)  # not in a transaction: its on_commit sends at once (eager)
            times.append((time.perf_counter() - started) * 1000)
        delivered = WebhookDelivery.objects.filter(
            subscription__workspace=scope.workspace, state="delivered"
        ).count()
        if delivered != len(times):
            self.stderr.write(f"only {delivered} of {len(times)} deliveries were delivered")
        return times

    def _cleanup(self, scope: Scope) -> None:
        workspace = scope.workspace
        with transaction.atomic():
            ids = list(Memory.objects.filter(scope__workspace=workspace).values_list("pk", flat=True))
            Outbox.objects.filter(memory_id__in=ids).delete()
            Memory.objects.filter(pk__in=ids).delete()
            workspace.webhooks.all().delete()
            for s in Scope.objects.filter(workspace=workspace).order_by("-path"):
                s.grants.all().delete()
                s.delete()
            Workspace.objects.filter(pk=workspace.pk).delete()
