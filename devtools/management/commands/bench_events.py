"""`manage.py bench_events --file F --format locomo|longmemeval [--limit N] [--round]`: what `POST
/api/v1/events` costs an agent that relays a real conversation as it happens.

Every turn of the file (or every round: a user turn and what answered it, with `--round`) is posted in order
with an agent's token through the API, in process (Django's test client: no socket, so the figure is the
service's own), into a new scope of its own; the embedding is the worker's and is not waited for. It prints
the requests' p50, p95 and mean in milliseconds and the turns per second. Run it twice on one machine state
to compare two versions of the code (docs/benchmarks.md, "Recording a conversation"); the scope and its
memories are left in the database it ran against (a scratch or development database)."""

from __future__ import annotations

import statistics
import time
import uuid
from datetime import timedelta
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from django.test import Client
from django.utils import timezone

from governance.evaluation.conversations import detect_format, load
from governance.models import Role
from governance.services.principal import grant_add, principal_ensure, token_issue
from governance.services.scope import scope_ensure


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(share * (len(ordered) - 1))))]


class Command(BaseCommand):
    help = "POST /api/v1/events latency for a real conversation file, relayed turn by turn by an agent."

    def add_arguments(self, parser):
        parser.add_argument("--file", required=True)
        parser.add_argument("--format", dest="fmt", choices=("locomo", "longmemeval"), default=None)
        parser.add_argument("--limit", type=int, default=None, help="only the first N events")
        parser.add_argument("--round", action="store_true", help="one event per round, not per turn")

    def handle(self, *args, **opts):
        path = Path(opts["file"])
        if not path.exists():
            raise CommandError(f"{path}: no such file.")
        root = f"bench-events-{uuid.uuid4().hex[:8]}"
        loaded = load(path, opts["fmt"] or detect_format(path), prefix=root)
        events = _events(loaded.turns, by_round=opts["round"])[: opts["limit"]]
        scope = scope_ensure(path=root, actor=None)
        agent = principal_ensure(name=f"{root}-agent", kind="agent", actor=None)
        grant_add(principal=agent, scope=scope, role=Role.AGENT, actor=None)
        token = token_issue(principal=agent, actor=None, expires_at=timezone.now() + timedelta(hours=6))
        # The host the service answers on by default (ALLOWED_HOSTS), not the test client's "testserver".
        client = Client(HTTP_AUTHORIZATION=f"Token {token}", HTTP_HOST="127.0.0.1")
        for scope_path in {e["scope"] for e in events}:
            scope_ensure(path=scope_path, actor=None)
        took: list[float] = []
        turns = 0
        for event in events:
            start = time.perf_counter()
            answer = client.post("/api/v1/events", event, content_type="application/json")
            took.append((time.perf_counter() - start) * 1000)
            if answer.status_code != 201:
                raise CommandError(f"{answer.status_code}: {answer.content[:300]!r}")
            turns += len(event["turns"])
        seconds = sum(took) / 1000
        self.stdout.write(
            f"{len(took)} events, {turns} turns in {seconds:.1f} s ({turns / seconds:.1f} turns/s); "
            f"per event ms: p50 {statistics.median(took):.2f}, p95 {_percentile(took, 0.95):.2f}, "
            f"mean {statistics.fmean(took):.2f}, max {max(took):.2f}"
        )


def _events(turns: list[dict], *, by_round: bool) -> list[dict]:
    """The file's turns as the events an agent posts: one per turn, or one per round (a user turn and the
    turns after it until the next user turn of the same session)."""
    events: list[dict] = []
    for turn in turns:
        body = {
            "role": turn["role"],
            "content": turn["content"],
            "ref": turn["ref"],
            "speaker": turn.get("speaker", ""),
        }
        same = events and events[-1]["scope"] == turn["scope"] and events[-1]["session"] == turn["session"]
        if by_round and same and turn["role"] != "user":
            events[-1]["turns"].append(body)
            continue
        events.append(
            {
                "scope": turn["scope"],
                "session": turn["session"],
                "at": turn["at"].isoformat(),
                "turns": [body],
            }
        )
    return events
