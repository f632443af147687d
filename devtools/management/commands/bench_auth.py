"""What a token's bound costs on the hot path: `python manage.py bench_auth [--rounds 2000]`.

Authenticates a bound and an unbound token of the same agent, interleaved, and reads the caller's access to
a task scope (`permissions.scope_access`, what /context and /recall do before their stages); prints p50/p95
of each. Runs in the bench database (default `memory_bench`, as bench_context), never in real data."""

from __future__ import annotations

import os
import time
from datetime import timedelta

from django.core.management.base import BaseCommand
from django.utils import timezone
from rest_framework.test import APIRequestFactory

from devtools.benchmarks.stats import percentile
from devtools.management.commands.bench_context import use_database
from governance.api.auth import TokenAuthentication
from governance.models import ApiToken, Role
from governance.permissions import scope_access
from governance.services.principal import grant_add, principal_ensure, token_issue
from governance.services.scope import scope_ensure

WARMUP = 200


class Command(BaseCommand):
    help = "Token authentication + scope access, bound vs unbound token, p50/p95 (own database)."

    def add_arguments(self, parser):
        parser.add_argument("--rounds", type=int, default=2000)
        parser.add_argument("--database", default="memory_bench")

    def handle(self, *args, rounds, database, **options):
        use_database(database)
        root = scope_ensure(path="bench-auth", actor=None)
        task = scope_ensure(path="bench-auth/project/task", actor=None)
        agent = principal_ensure(name="bench-auth-agent", kind="agent", actor=None)
        grant_add(principal=agent, scope=root, role=Role.AGENT, actor=None)
        raws = {
            "unbound": token_issue(principal=agent, actor=None),
            "bound": token_issue(principal=agent, scope=root, max_role=Role.AGENT, actor=None),
        }
        # Recorded use in the future: no `last_used_at` write, so only the reads are timed.
        ApiToken.objects.filter(principal=agent).update(last_used_at=timezone.now() + timedelta(hours=1))
        factory, auth = APIRequestFactory(), TokenAuthentication()
        times: dict[str, list[float]] = {kind: [] for kind in raws}
        for _ in range(WARMUP + rounds):
            for kind, raw in raws.items():
                request = factory.get("/", HTTP_AUTHORIZATION=f"Token {raw}")
                start = time.perf_counter()
                principal = auth.authenticate(request)[1].principal
                access = scope_access(principal, task.path)
                times[kind].append((time.perf_counter() - start) * 1000)
                assert access is not None and access.roles == {Role.AGENT}
        ApiToken.objects.filter(principal=agent).update(revoked_at=timezone.now())
        self.stdout.write(
            f"load average {os.getloadavg()[0]:.1f}; {rounds} rounds after {WARMUP} warm-up, "
            "bound and unbound interleaved"
        )
        for kind, values in times.items():
            measured = values[WARMUP:]
            self.stdout.write(
                f"{kind:8s} auth + scope_access  p50 {percentile(measured, 0.5):.3f} ms"
                f"  p95 {percentile(measured, 0.95):.3f} ms"
            )
