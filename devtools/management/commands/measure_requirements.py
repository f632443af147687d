"""`manage.py measure_requirements --file F --format locomo|longmemeval [--sample 50] [--seed 0] [--show TYPE]`: what the
requirement reading (services/extraction.py, services/requirements.py) makes of a real conversation file.

Every distinct session of the file is recorded through `event_ingest`, as an agent relays it (the turns of a
session in order, in events of at most MAX_TURNS), into one scratch scope inside a transaction that is rolled
back at the end: nothing is kept, nothing is embedded. It prints, per 1,000 turns, the requirements pinned in
their session (by type) and the items sent to the review queue (the lasting ones: standing instructions,
boundaries said in conversation, corrections that replace something), and a seeded sample of the review
items with the turn each came from, to be read by hand: is each one a requirement a person would want to
decide on? (docs/evaluation.md, "The user's requirements on the real files".)"""

from __future__ import annotations

import json
import random
import time
from collections import Counter
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from governance.evaluation.conversations import detect_format, load
from governance.models import Memory, Status
from governance.services.events import MAX_TURNS, event_ingest
from governance.services.scope import scope_ensure

SCOPE = "measure-requirements"


class _Undo(Exception):
    pass


class Command(BaseCommand):
    help = "Requirements read from a conversation file: per 1,000 turns, and a sample of review items."

    def add_arguments(self, parser):
        parser.add_argument("--file", required=True)
        parser.add_argument("--format", dest="fmt", choices=("locomo", "longmemeval"), default=None)
        parser.add_argument("--sample", type=int, default=50, help="review items printed for reading")
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--json", dest="json_out", default=None, help="write every review item here")
        parser.add_argument(
            "--show",
            action="append",
            default=[],
            metavar="TYPE",
            help="also print every requirement of this type (withdrawal, correction, …) with what it replaces",
        )

    def handle(self, *args, **opts):
        path = Path(opts["file"])
        if not path.exists():
            raise CommandError(f"{path}: no such file.")
        fmt = opts["fmt"] or detect_format(path)
        loaded = load(path, fmt, prefix=SCOPE)
        sessions: dict[str, list[dict]] = {}
        for turn in loaded.turns:
            # LongMemEval's haystacks share sessions: each distinct one is read once. LoCoMo's conversations
            # each number their sessions from 1: a session is named within its conversation.
            name = turn["session"] if fmt == "longmemeval" else f"{turn['scope']}/{turn['session']}"
            sessions.setdefault(name, []).append(turn)
        for turns in sessions.values():
            turns.sort(key=lambda t: t["at"])
        started = time.perf_counter()
        try:
            with transaction.atomic():
                report = self._measure(sessions)
                raise _Undo
        except _Undo:
            pass
        report["seconds"] = round(time.perf_counter() - started, 1)
        self._print(report, opts)

    def _measure(self, sessions: dict[str, list[dict]]) -> dict:
        scope = scope_ensure(path=SCOPE, actor=None)
        turns = user_turns = 0
        for session, said in sessions.items():
            for start in range(0, len(said), MAX_TURNS):
                chunk = said[start : start + MAX_TURNS]
                event_ingest(
                    scope=scope,
                    session=session,
                    at=chunk[0]["at"],
                    actor=None,
                    turns=[
                        {
                            "role": t["role"],
                            "content": t["content"],
                            "ref": t["ref"],
                            "speaker": t.get("speaker", ""),
                            "at": t["at"],
                        }
                        for t in chunk
                    ],
                )
            turns += len(said)
            user_turns += sum(1 for t in said if t["role"] == "user")
        found = list(
            Memory.objects.filter(scope=scope, meta__has_key="requirement")
            .exclude(kind="episodic")
            .order_by("pk")
            .values("pk", "text", "status", "session", "source_ref", "meta")
        )
        by_ref = {
            (m["session"], m["source_ref"]): m["text"]
            for m in Memory.objects.filter(scope=scope, kind="episodic").values(
                "session", "source_ref", "text"
            )
        }
        texts = {m["pk"]: m["text"] for m in found}

        def item(m: dict) -> dict:
            replaces = m["meta"]["requirement"].get("replaces") or {}
            return {
                "id": m["pk"],
                "type": m["meta"]["requirement"]["type"],
                "text": m["text"],
                "status": m["status"],
                "session": m["session"],
                "turn": by_ref.get((m["session"], m["source_ref"]), ""),
                "replaces": replaces.get("text") or texts.get(replaces.get("memory_id")),
            }

        every = [item(m) for m in found]
        items = [i for i in every if i["status"] == Status.PROPOSED]
        return {
            "sessions": len(sessions),
            "turns": turns,
            "user_turns": user_turns,
            "pinned": Counter(m["meta"]["requirement"]["type"] for m in found),
            "review": Counter(i["type"] for i in items),
            "items": items,
            "every": every,
        }

    def _print(self, report: dict, opts: dict) -> None:
        per = 1000 / max(report["turns"], 1)
        out = self.stdout
        out.write(
            f"{report['sessions']} sessions, {report['turns']:,} turns ({report['user_turns']:,} by the user), "
            f"read in {report['seconds']} s"
        )
        pinned = sum(report["pinned"].values())
        review = sum(report["review"].values())
        out.write(f"requirements pinned in their session: {pinned} ({pinned * per:.2f} per 1,000 turns)")
        for kind, n in sorted(report["pinned"].items()):
            out.write(f"  {kind}: {n}")
        out.write(f"review items: {review} ({review * per:.2f} per 1,000 turns)")
        for kind, n in sorted(report["review"].items()):
            out.write(f"  {kind}: {n}")
        sample = random.Random(opts["seed"]).sample(
            report["items"], min(opts["sample"], len(report["items"]))
        )
        out.write(f"\nA sample of {len(sample)} review items (seed {opts['seed']}), to read by hand:")
        for n, item in enumerate(sample, start=1):
            turn = " ".join(item["turn"].split())
            turn = turn if len(turn) <= 220 else turn[:219] + "…"
            out.write(f"{n:3}. [{item['type']}] {item['text']}")
            if item["replaces"]:
                out.write(f"     replaces: {item['replaces']}")
            out.write(f"     turn: {turn}")
        for kind in opts["show"]:
            shown = [i for i in report["every"] if i["type"] == kind]
            out.write(f"\nEvery {kind} ({len(shown)}):")
            for n, item in enumerate(shown, start=1):
                out.write(f"{n:3}. [{item['status']}] {item['text']}")
                out.write(f"     replaces: {item['replaces'] or '-'}")
        if opts["json_out"]:
            Path(opts["json_out"]).write_text(
                json.dumps(
                    {
                        **{k: v for k, v in report.items() if k != "every"},
                        "pinned": dict(report["pinned"]),
                        "review": dict(report["review"]),
                    },
                    ensure_ascii=False,
                    indent=1,
                )
            )
