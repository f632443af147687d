"""`manage.py bench_load --users N --seconds S [--fault worker-kill|web-kill|redis-restart|db-drop|web-reload|all] [--tarpit K] [--replica]`

Starts the team topology (devtools/topology.py: PostgreSQL and Redis on TCP, gunicorn, three Celery
workers, beat; production settings and environment variables only) under a temporary folder, drives it
with locust (headless, loopback only, bounded in users and time; devtools/benchmarks/locustfile.py) with a mix of
context packets, recall, event ingestion, writes, proposals confirmed by the owner, hard forgets and
dashboard pages, injects the faults asked for, and then checks the data:

- every accepted write is stored exactly once (ids and texts tracked client-side); a write whose answer
  was lost (5xx, connection reset) is stored at most once; a refused one (4xx) not at all;
- every accepted forget reached every store (row purged, vector and keyword terms gone, no stored turn
  and no Redis value holds the text, all its deliveries done);
- the audit chain verifies;
- no packet or recall answer held a memory outside the caller's scopes, nor a text whose hard forget had
  been accepted before the request was sent.

`--tarpit K` subscribes K webhook receivers that answer one byte at a time (devtools/benchmarks/tarpit.py, in this
process, on loopback) to every event of the workspace: a slow receiver must hold only the webhook workers,
so the forget propagation figure should stay within 2x of a run without them (docs/webhooks.md).

`--replica` adds a streaming replica of PostgreSQL (DATABASE_REPLICA_URL): the run then also prints the
share of packets and recalls the replica answered and its replay lag (pg_stat_replication, sampled).

It prints throughput, p50/p95/p99 per request kind and the error rate, forget propagation p50/p95 (an
accepted hard forget's outbox row until its last delivery but the embedding's), the time each fault's backlog took
to drain, and as its last line: requests/s, error rate, and whether every data check held (exit code 1
when one did not). The topology is stopped and its folder deleted at the end (`--keep` keeps it).
"""

from __future__ import annotations

import contextlib
import csv
import importlib.util
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
import uuid
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from devtools.benchmarks.tarpit import Tarpit
from governance.services.audit import CHAIN_LOCK

FAULTS = ("worker-kill", "web-kill", "redis-restart", "db-drop")
# Not part of `all` (which stays the four faults above, comparable between runs): a graceful reload of
# every web worker (SIGHUP to the gunicorn master), which should fail no request.
EXTRA_FAULTS = ("web-reload",)
LOCUSTFILE = Path(__file__).resolve().parents[2] / "benchmarks" / "locustfile.py"
DRAIN_TIMEOUT = 240.0
# Operators keep 30 s (docs/operations.md); shorter here so a fault's backlog drains within the run.
RECOVERY_ENV = {
    "RECONCILE_EVERY_SECONDS": "5",
    "RECONCILE_STALE_AFTER_SECONDS": "10",
    "OUTBOX_LEASE_SECONDS": "20",
    # The messages a killed worker held are queued again after this (operators keep 120 s); without it
    # the post-fault drains of the runs after queued_at took 85-140 s.
    "RECONCILE_REQUEUE_AFTER_SECONDS": "20",
}

SETUP = """
import json
from governance.models import Role
from governance.services.principal import grant_add, principal_ensure, token_issue, user_ensure
from governance.services.scope import scope_ensure
n, password = {n}, {password!r}
workspace = scope_ensure(path="acme", actor=None)
out = {{"workspace": "acme", "teams": {{}}, "dashboard_user": "bench-owner", "dashboard_password": password}}
for team in "ab":
    scope = scope_ensure(path=f"acme/team-{{team}}", actor=None)
    agent = principal_ensure(name=f"bench-agent-{{team}}", kind="agent", actor=None)
    grant_add(principal=agent, scope=scope, role=Role.AGENT, actor=None)
    out["teams"][team] = {{"scope": scope.path, "agent_tokens": [
        token_issue(principal=agent, scope=scope, max_role=Role.AGENT, actor=None) for _ in range(n)]}}
owner = user_ensure(username="bench-owner", password=password, actor=None)
grant_add(principal=owner, scope=workspace, role=Role.OWNER, actor=None)
out["owner_tokens"] = [token_issue(principal=owner, scope=workspace, max_role=Role.OWNER, actor=None) for _ in range(n)]
from governance.models import EventType, Workspace
from governance.services.webhook import webhook_create
for url in {tarpits!r}:
    webhook_create(workspace=Workspace.objects.get(slug="acme"), url=url, event_types=list(EventType.values),
                   actor=None, description="bench_load tarpit")
print("BENCH-SETUP " + json.dumps(out))
"""


def percentile_table(stats_csv: Path) -> tuple[list[dict], dict]:
    with open(stats_csv) as f:
        rows = list(csv.DictReader(f))
    kinds = [r for r in rows if r["Name"] != "Aggregated"]
    total = next(r for r in rows if r["Name"] == "Aggregated")
    return kinds, total


class Drain(threading.Thread):
    """After a fault: how long until every outbox row that existed at the fault is done, first counting
    every store but embedding (the propagation queue: forgets, caches, turns), then all of them."""

    def __init__(self, topology, fault: str, at: float) -> None:
        super().__init__(daemon=True)
        self.topology, self.fault, self.at = topology, fault, at
        self.propagation_s: float | None = None
        self.all_s: float | None = None
        with topology.connect() as db:
            self.max_id = db.execute("SELECT coalesce(max(id), 0) FROM governance_outbox").fetchone()[0]

    def run(self) -> None:
        deadline = self.at + DRAIN_TIMEOUT
        while time.time() < deadline:
            try:
                with self.topology.connect() as db:
                    while time.time() < deadline:
                        other, embedding = db.execute(
                            "SELECT count(*) FILTER (WHERE d.store <> 'embedding'), count(*) FILTER (WHERE d.store = "
                            "'embedding') FROM governance_outboxdelivery d WHERE d.outbox_id <= %s AND d.state <> 'done'",
                            [self.max_id],
                        ).fetchone()
                        now = time.time() - self.at
                        if other == 0 and self.propagation_s is None:
                            self.propagation_s = now
                        if other == 0 and embedding == 0:
                            self.all_s = now
                            return
                        time.sleep(0.5)
            except Exception:  # the database-drop fault ends this connection too
                time.sleep(0.5)


class Sampler(threading.Thread):
    """Every 0.5 s on the primary: how many backends wait for the audit chain's advisory lock (the write
    ceiling of one database, docs/scaling.md), and with a replica its replay lag (pg_stat_replication)."""

    def __init__(self, topology) -> None:
        super().__init__(daemon=True)
        self.topology, self.stop = topology, threading.Event()
        self.lag: list[float] = []
        self.chain_waits: list[int] = []

    def run(self) -> None:
        while not self.stop.wait(0.5):
            try:
                with self.topology.connect() as db:
                    while not self.stop.wait(0.5):
                        # A bigint advisory key shows in pg_locks as classid (high half) and objid (low).
                        self.chain_waits.append(
                            db.execute(
                                "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"
                                " AND objsubid = 1 AND classid = %s AND objid = %s",
                                [CHAIN_LOCK >> 32, CHAIN_LOCK & 0xFFFFFFFF],
                            ).fetchone()[0]
                        )
                        if self.topology.replica:
                            row = db.execute(
                                "SELECT extract(epoch FROM replay_lag) * 1000 FROM pg_stat_replication LIMIT 1"
                            ).fetchone()
                            # NULL: nothing to replay for a while (the replica is caught up).
                            self.lag.append(float(row[0]) if row and row[0] is not None else 0.0)
            except Exception:  # the database-drop fault ends this connection too
                continue


class Command(BaseCommand):
    help = "Load-test the team topology with locust, inject faults, and check that nothing accepted was lost."

    def add_arguments(self, parser):
        parser.add_argument("--users", type=int, default=2)
        parser.add_argument("--seconds", type=int, default=60)
        parser.add_argument(
            "--fault",
            action="append",
            choices=[*FAULTS, *EXTRA_FAULTS, "all"],
            default=[],
            help="inject this fault during the run (repeatable; `all`: each once, spread out)",
        )
        parser.add_argument("--web-workers", type=int, default=3)
        parser.add_argument("--replica", action="store_true", help="add a streaming replica for the reads")
        parser.add_argument("--keep", action="store_true", help="keep the topology's folder (logs, data)")
        parser.add_argument(
            "--tarpit",
            type=int,
            default=0,
            help="subscribe this many one-byte-at-a-time webhook receivers to every event",
        )

    def handle(self, *args, users, seconds, fault, web_workers, keep, tarpit=0, replica=False, **options):
        if users < 1 or seconds < 5:
            raise CommandError("--users must be at least 1 and --seconds at least 5.")
        # Only looked up, never imported here: importing locust monkey-patches this process for gevent.
        if importlib.util.find_spec("locust") is None:
            raise CommandError("locust is not installed: pip install -e '.[test]'")
        from devtools.topology import Topology

        faults = list(FAULTS) if "all" in fault else list(dict.fromkeys(fault))
        root = Path(tempfile.mkdtemp(prefix="memory-bench-"))
        # The tarpits listen on loopback, which production settings refuse unless told.
        extra = {**RECOVERY_ENV, **({"WEBHOOK_ALLOW_PRIVATE": "1"} if tarpit else {})}
        topology = Topology(root, web_workers=web_workers, extra_env=extra, replica=replica)
        self.stdout.write(
            f"· starting the topology under {root} (gunicorn {web_workers} workers, three Celery workers, beat)"
        )
        started = time.monotonic()
        # A TERM (a CI timeout, `kill`) stops the topology as Ctrl-C does, instead of leaving its servers
        # running with their folder gone.
        signal.signal(signal.SIGTERM, _stop_on_term)
        topology.start()
        ok = False
        try:
            self.stdout.write(f"  up in {time.monotonic() - started:.0f} s at {topology.base_url}")
            with contextlib.ExitStack() as stack:
                self.tarpits = [stack.enter_context(Tarpit(interval=0.5)) for _ in range(max(tarpit, 0))]
                ok = self._run(topology, root, users=users, seconds=seconds, faults=faults)
                if self.tarpits:
                    self.stdout.write(
                        f"  tarpits: {len(self.tarpits)} receivers got "
                        f"{sum(t.requests for t in self.tarpits)} requests"
                    )
        finally:
            topology.stop()
            if not keep:
                shutil.rmtree(root, ignore_errors=True)
        if not ok:
            sys.exit(1)

    # ------------------------------------------------------------------------------------------------------
    def _run(self, topology, root: Path, *, users: int, seconds: int, faults: list[str]) -> bool:
        run = uuid.uuid4().hex[:10]
        out = topology.manage(
            "shell",
            "-c",
            SETUP.format(
                n=max(users, 1),
                password=secrets.token_urlsafe(16),
                tarpits=[t.url for t in getattr(self, "tarpits", [])],
            ),
        )
        config = json.loads(out.split("BENCH-SETUP ", 1)[1])
        config["run"] = run
        (root / "bench-config.json").write_text(json.dumps(config))
        env = {
            **os.environ,
            "BENCH_CONFIG": str(root / "bench-config.json"),
            "BENCH_RECORD": str(root / "bench-record.json"),
        }
        argv = [
            sys.executable,
            "-m",
            "locust",
            "-f",
            str(LOCUSTFILE),
            "--headless",
            "-u",
            str(users),
            "-r",
            str(users),
            "-t",
            f"{seconds}s",
            "--host",
            topology.base_url,
            "--csv",
            str(root / "stats"),
            "--only-summary",
            "--stop-timeout",
            "10",
            "--loglevel",
            "WARNING",
        ]
        self.stdout.write(
            f"· load: {users} users for {seconds} s (run {run}); faults: {', '.join(faults) or 'none'}"
        )
        t0 = time.time()
        with open(root / "locust.log", "w") as log:
            locust = subprocess.Popen(argv, env=env, stdout=log, stderr=subprocess.STDOUT)
            sampler = Sampler(topology)
            sampler.start()
            drains = self._inject(topology, faults, t0, seconds)
            locust.wait(seconds + 120)
            sampler.stop.set()
        if not (root / "bench-record.json").exists():
            raise CommandError(
                f"locust ended without its record:\n{(root / 'locust.log').read_text()[-3000:]}"
            )
        for drain in drains:
            drain.join(DRAIN_TIMEOUT)
        record = json.loads((root / "bench-record.json").read_text())
        kinds, total = percentile_table(root / "stats_stats.csv")
        self._print_stats(kinds, total, seconds)
        self._print_failures(record, topology)
        if not record["failures"]:
            self._print_database_errors(topology)
        self._print_faults(drains, record)
        waits = sampler.chain_waits
        if waits:
            self.stdout.write(
                f"  audit chain lock: a request waited for it in {sum(1 for w in waits if w)} of {len(waits)} "
                f"samples (at most {max(waits)} at once)"
            )
        if topology.replica:
            self._print_replica(record, sampler, topology)
        problems = self._check(topology, run, record)
        self._print_forget_propagation(topology)
        requests = int(total["Request Count"])
        crashed = (root / "locust.log").read_text(errors="replace").count("Traceback")
        if not requests or crashed:
            problems.append(
                f"the load itself failed: {requests} requests, {crashed} tracebacks in {root / 'locust.log'}"
            )
            self.stdout.write(f"  FAIL  {problems[-1]}")
        failures = int(total["Failure Count"])
        rate = float(total["Requests/s"])
        error_rate = failures / requests if requests else 0.0
        verdict = "every data check held" if not problems else f"DATA CHECKS FAILED ({len(problems)})"
        self.stdout.write(
            f"users={users} seconds={seconds} faults={','.join(faults) or 'none'}: "
            f"{rate:.1f} requests/s, error rate {error_rate:.2%}, {verdict}"
        )
        return not problems

    def _inject(self, topology, faults: list[str], t0: float, seconds: int) -> list[Drain]:
        """Each fault at an even share of the run; returns the drain watchers."""
        drains = []
        for i, fault in enumerate(faults):
            at = t0 + seconds * (i + 1) / (len(faults) + 1)
            time.sleep(max(0.0, at - time.time()))
            drain = Drain(topology, fault, time.time())
            if fault == "worker-kill":
                topology.kill_worker("worker")
            elif fault == "web-kill":
                topology.kill_web_worker()
            elif fault == "web-reload":
                topology.reload_web()
            elif fault == "redis-restart":
                topology.restart_redis(down_seconds=2.0)
            elif fault == "db-drop":
                topology.drop_database_connections()
            self.stdout.write(f"  {time.time() - t0:5.1f} s  fault: {fault}")
            drain.start()
            drains.append(drain)
        return drains

    def _print_stats(self, kinds: list[dict], total: dict, seconds: int) -> None:
        self.stdout.write("")
        self.stdout.write(
            f"{'request kind':<22}{'count':>7}{'errors':>7}{'req/s':>8}{'p50 ms':>8}{'p95 ms':>8}{'p99 ms':>8}"
        )
        for row in sorted(kinds, key=lambda r: -int(r["Request Count"])):
            self.stdout.write(
                f"{row['Name']:<22}{row['Request Count']:>7}{row['Failure Count']:>7}"
                f"{float(row['Requests/s']):>8.1f}{row['50%']:>8}{row['95%']:>8}{row['99%']:>8}"
            )
        self.stdout.write(
            f"{'all':<22}{total['Request Count']:>7}{total['Failure Count']:>7}"
            f"{float(total['Requests/s']):>8.1f}{total['50%']:>8}{total['95%']:>8}{total['99%']:>8}"
        )

    def _print_replica(self, record: dict, sampler: Sampler, topology) -> None:
        from devtools.benchmarks.stats import percentile

        served = record.get("served_by", {})
        by_replica = sum(n for k, n in served.items() if k.endswith(" replica"))
        reads = sum(served.values())
        share = by_replica / reads if reads else 0.0
        self.stdout.write(
            f"  replica: answered {by_replica} of {reads} packets and recalls ({share:.0%}; "
            + ", ".join(f"{k} {n}" for k, n in sorted(served.items()))
            + ")"
        )
        try:  # why the others went to the primary: the web processes' counter (loopback may scrape)
            with urllib.request.urlopen(f"{topology.base_url}/metrics", timeout=10) as response:
                lines = response.read().decode().splitlines()
            outcomes = []
            for line in lines:
                if line.startswith("memory_replica_reads_total{"):
                    label = line.split('outcome="', 1)[1].split('"', 1)[0]
                    outcomes.append(f"{label} {float(line.rsplit(' ', 1)[1]):.0f}")
            self.stdout.write("  routed reads by outcome (all kinds): " + (", ".join(outcomes) or "none"))
        except (OSError, ValueError, IndexError):
            pass
        values = sorted(sampler.lag)
        if values:
            self.stdout.write(
                f"  replica replay lag (pg_stat_replication, {len(values)} samples): p50 "
                f"{percentile(values, 0.5):.1f} ms, p95 {percentile(values, 0.95):.1f} ms, max {values[-1]:.1f} ms"
            )

    def _print_failures(self, record: dict, topology) -> None:
        """Which requests failed and how, and the exceptions behind the server's 5xx (from the JSON logs of
        gunicorn: class and last frame only, the logs never hold memory text)."""
        counts: dict[str, int] = {}
        for _, name, status in record["failures"]:
            counts[f"{name} {status}"] = counts.get(f"{name} {status}", 0) + 1
        if not counts:
            return
        self.stdout.write("failed requests: " + ", ".join(f"{k} ×{v}" for k, v in sorted(counts.items())))
        causes: dict[str, int] = {}
        try:
            lines = (topology.logs / "web.log").read_text(errors="replace").splitlines()
        except OSError:
            lines = []
        for line in lines:
            if '"exc_info"' not in line:
                continue
            try:
                trace = json.loads(line)["exc_info"].strip().splitlines()
            except (ValueError, KeyError):
                continue
            cause = trace[-1].split(":", 1)[0] if trace else "?"
            causes[cause] = causes.get(cause, 0) + 1
        if causes:
            self.stdout.write(
                "server exceptions: " + ", ".join(f"{k} ×{v}" for k, v in sorted(causes.items()))
            )
        self._print_database_errors(topology)

    def _print_database_errors(self, topology) -> None:
        """PostgreSQL's ERROR lines by message (deadlocks, lock timeouts, unique violations); its log holds
        no statement and no detail (docs/operations.md), so no memory text."""
        errors: dict[str, int] = {}
        try:
            lines = (topology.pgdata / "server.log").read_text(errors="replace").splitlines()
        except OSError:
            return
        for line in lines:
            if "ERROR:" in line:
                message = line.split("ERROR:", 1)[1].strip()[:80]
                errors[message] = errors.get(message, 0) + 1
        if errors:
            self.stdout.write(
                "PostgreSQL errors: " + ", ".join(f"{k} ×{v}" for k, v in sorted(errors.items()))
            )

    def _print_faults(self, drains: list[Drain], record: dict) -> None:
        if not drains:
            return
        self.stdout.write("")
        for i, drain in enumerate(drains):
            # Up to 15 s after the fault, and never into the next fault's window.
            until = min(drain.at + 15, drains[i + 1].at - 1) if i + 1 < len(drains) else drain.at + 15
            near = [f for f in record["failures"] if drain.at - 1 <= f[0] <= until]
            by_status: dict[str, int] = {}
            for _, name, status in near:
                by_status[f"{name} {status}"] = by_status.get(f"{name} {status}", 0) + 1
            failed = ", ".join(f"{k}: {v}" for k, v in sorted(by_status.items())) or "none"
            prop = (
                f"{drain.propagation_s:.1f} s"
                if drain.propagation_s is not None
                else f"not within {DRAIN_TIMEOUT:.0f} s"
            )
            every = f"{drain.all_s:.1f} s" if drain.all_s is not None else f"not within {DRAIN_TIMEOUT:.0f} s"
            self.stdout.write(
                f"fault {drain.fault}: backlog at the fault drained in {prop} (all stores but "
                f"embedding), {every} (with embedding); failed requests until {until - drain.at:.0f} s after: {failed}"
            )

    # --- the data checks ---------------------------------------------------------------------------------
    def _check(self, topology, run: str, record: dict) -> list[str]:
        problems: list[str] = []
        self.stdout.write("")
        waited = self._wait_settled(topology)
        self.stdout.write(f"· after the load: outbox and embeddings settled in {waited}")
        with topology.connect() as db:
            stored: dict[str, list[int]] = {}
            episodes: dict[str, list[int]] = {}
            by_id: dict[int, tuple] = {}
            for memory_id, text, status, purged, scope, kind in db.execute(
                "SELECT m.id, m.text, m.status, m.purged_at IS NOT NULL, s.path, m.kind FROM governance_memory m "
                "JOIN governance_scope s ON s.id = m.scope_id "
                "WHERE m.source_ref = %s OR m.source_ref LIKE %s OR m.session LIKE %s",
                [run, f"{run}-%", f"bench-{run}%"],
            ):
                stored.setdefault(text, []).append(memory_id)
                if kind == "episodic":
                    episodes.setdefault(text, []).append(memory_id)
                by_id[memory_id] = (text, status, purged, scope)
            forgotten_ids = {f[0] for f in record["forgotten"]}
            writes = record["writes"]
            missing = [i for i, _ in writes["accepted"] if i not in by_id]
            # A hard forget whose answer was lost (its web worker killed after the commit) purged its memory
            # without being recorded as accepted: that row is there, forgotten, its text gone. Allowed for
            # at most as many rows as forgets failed; any other count but one is a write lost or doubled.
            lost_forgets = sum(1 for f in record["failures"] if f[1] == "forget")
            purged_unrecorded = [
                i
                for i, _ in writes["accepted"]
                if i not in forgotten_ids and by_id.get(i, (None, None, False))[2]
            ]
            doubled = [
                t
                for i, t in writes["accepted"]
                if i not in forgotten_ids
                and len(stored.get(t, [])) != 1
                and not (i in purged_unrecorded and len(purged_unrecorded) <= lost_forgets)
            ]
            ambiguous_twice = [t for (t,) in writes["ambiguous"] if len(stored.get(t, [])) > 1]
            refused_stored = [t for (t,) in writes["rejected"] if stored.get(t)]
            ambiguous_landed = sum(1 for (t,) in writes["ambiguous"] if stored.get(t))
            self._report(
                problems,
                not (missing or doubled or ambiguous_twice or refused_stored),
                f"writes: {len(writes['accepted'])} accepted, each stored once; {len(writes['ambiguous'])} "
                f"without an answer ({ambiguous_landed} of them stored, none twice); "
                f"{len(writes['rejected'])} refused, none stored",
                f"writes: missing {missing[:5]}, not exactly once {len(doubled)}, ambiguous twice "
                f"{len(ambiguous_twice)}, refused but stored {len(refused_stored)}",
            )
            ev = record["events"]
            ev_missing = [ids for ids, _ in ev["accepted"] if any(i not in by_id for i in ids)]
            # One episode per user turn (the extractor may add a candidate rule with the same text: by design).
            ev_doubled = [
                (said[:40], ids, episodes.get(said, []))
                for ids, said in ev["accepted"]
                if len(episodes.get(said, [])) != 1 and not set(ids) & forgotten_ids
            ]
            self._report(
                problems,
                not (ev_missing or ev_doubled),
                f"events: {len(ev['accepted'])} accepted, every memory they created stored, each user turn one episode",
                f"events: {len(ev_missing)} with a created memory missing, {len(ev_doubled)} user turns not "
                f"stored once (text, ids answered, ids stored: {ev_doubled[:3]})",
            )
            # Per key, the latest confirmed revision is in force and every earlier one superseded by it.
            latest: dict[str, int] = {}
            for memory_id, key in record["confirmed"]:
                latest[key] = max(latest.get(key, 0), memory_id)
            wrong = [
                (i, by_id.get(i, (None, None))[1])
                for i, key in record["confirmed"]
                if by_id.get(i, (None, None))[1] != ("active" if latest[key] == i else "superseded")
            ]
            self._report(
                problems,
                not wrong,
                f"confirms: {len(record['confirmed'])} over {len(latest)} keys, the latest of each key "
                "active and every earlier one superseded",
                f"confirms: {len(wrong)} confirmed memories in the wrong state, e.g. {wrong[:3]}",
            )
            self._check_forgets(db, topology, record, by_id, problems)
            self._check_reads(db, record, problems)
        try:
            audit = topology.manage("verify_audit").strip()
            self._report(problems, True, audit, "")
        except Exception as exc:
            self._report(problems, False, "", f"audit: {exc}")
        return problems

    def _wait_settled(self, topology) -> str:
        started = time.time()
        while time.time() - started < DRAIN_TIMEOUT:
            with topology.connect() as db:
                pending = db.execute(
                    "SELECT count(*) FROM governance_outboxdelivery WHERE state <> 'done'"
                ).fetchone()[0]
                unembedded = db.execute(
                    "SELECT count(*) FROM governance_memory WHERE embedding IS NULL AND "
                    "purged_at IS NULL AND status NOT IN ('forgotten', 'rejected')"
                ).fetchone()[0]
            if pending == 0 and unembedded == 0:
                return f"{time.time() - started:.1f} s"
            time.sleep(1)
        return f"NOT within {DRAIN_TIMEOUT:.0f} s ({pending} deliveries, {unembedded} embeddings pending)"

    def _print_forget_propagation(self, topology) -> None:
        """Forget propagation: each hard forget's outbox row, from its creation until its last delivery but
        the embedding's (that one runs on its own queue) was done; p50 and p95 over the run."""
        from devtools.benchmarks.stats import percentile

        with topology.connect() as db:
            rows = db.execute(
                "SELECT extract(epoch FROM max(d.done_at) - o.created_at) * 1000 FROM governance_outbox o"
                " JOIN governance_outboxdelivery d ON d.outbox_id = o.id AND d.store <> 'embedding'"
                " WHERE o.topic = 'memory.forgotten' GROUP BY o.id HAVING bool_and(d.state = 'done')"
            ).fetchall()
        values = sorted(float(r[0]) for r in rows)
        if not values:
            self.stdout.write("  forget propagation: no hard forget in this run")
            return
        self.stdout.write(
            f"  forget propagation: {len(values)} forgets, p50 {percentile(values, 0.5):.0f} ms, "
            f"p95 {percentile(values, 0.95):.0f} ms, max {values[-1]:.0f} ms"
        )

    def _check_forgets(self, db, topology, record: dict, by_id: dict, problems: list[str]) -> None:
        import redis

        forgotten = record["forgotten"]
        client = redis.Redis(host="127.0.0.1", port=topology.redis_port)
        values = []
        for key in client.scan_iter(count=1000):
            if client.type(key) == b"string":
                values.append(client.get(key) or b"")
        bad = []
        for memory_id, text, _at in forgotten:
            row = db.execute(
                "SELECT status, text, lexical, embedding IS NULL, purged_at IS NOT NULL FROM governance_memory "
                "WHERE id = %s",
                [memory_id],
            ).fetchone()
            pending = db.execute(
                "SELECT count(*) FROM governance_outboxdelivery d JOIN governance_outbox o ON "
                "o.id = d.outbox_id WHERE o.memory_id = %s AND d.state <> 'done'",
                [memory_id],
            ).fetchone()[0]
            in_turns = db.execute(
                "SELECT count(*) FROM governance_turn t WHERE CAST(t.* AS text) LIKE %s", [f"%{text}%"]
            ).fetchone()[0]
            in_redis = sum(1 for v in values if text.encode() in v)
            if row != ("forgotten", "", "", True, True) or pending or in_turns or in_redis:
                bad.append((memory_id, row, pending, in_turns, in_redis))
        self._report(
            problems,
            not bad,
            f"forgets: {len(forgotten)} hard forgets, each purged from the row, vector, keyword terms, stored "
            "turns and Redis, every delivery done",
            f"forgets: {len(bad)} not propagated everywhere, e.g. {bad[:3]}",
        )

    def _check_reads(self, db, record: dict, problems: list[str]) -> None:
        readable = {"a": {"acme", "acme/team-a"}, "b": {"acme", "acme/team-b"}}
        ids = sorted({i for _, _, found in record["reads"] for i in found})
        scope_of = (
            dict(
                db.execute(
                    "SELECT m.id, s.path FROM governance_memory m JOIN governance_scope s ON "
                    "s.id = m.scope_id WHERE m.id = ANY(%s)",
                    [ids],
                ).fetchall()
            )
            if ids
            else {}
        )
        outside = [
            (team, kind, i, scope_of.get(i))
            for team, kind, found in record["reads"]
            for i in found
            if scope_of.get(i) not in readable[team]
        ]
        leaks = record["leaks"]
        self._report(
            problems,
            not outside and not leaks,
            f"reads: {len(record['reads'])} packets and recall answers, none held another team's memory or "
            "a forgotten text",
            f"reads: {len(outside)} memories outside the caller's scopes (e.g. {outside[:3]}), "
            f"{len(leaks)} forgotten texts returned (e.g. {leaks[:3]})",
        )

    def _report(self, problems: list[str], ok: bool, good: str, bad: str) -> None:
        if ok:
            self.stdout.write(f"  ok    {good}")
        else:
            problems.append(bad)
            self.stdout.write(f"  FAIL  {bad}")


def _stop_on_term(signum, frame):
    raise SystemExit(128 + signum)
