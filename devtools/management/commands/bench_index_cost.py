"""`manage.py bench_index_cost --file F [--format locomo|longmemeval] [--conversations ID ...] [--samples N]`:
what each index of an import costs per turn, on a published file's own turns (issue 49).

The import of a conversation does two things per turn: it writes the turn (the row, its keyword and
trigram columns, the candidates read from it, the outbox), and it embeds texts. This command times each
part on its own, one after the other, on the same turns:

1. **write**: the import's writes (`conversation_import.ingest_claimed`, chunk by chunk: the rows, their
   keyword and trigram columns, the candidates, the outbox), into scopes of its own under `bench-index/…`,
   the rows claimed for embedding as the import claims them (the embedding worker leaves them alone);
2. **embedding**, in the pipeline's batches (EMBEDDING_BATCH_SIZE texts), of each kind of text the
   embedding store gives the model for those rows (governance/propagation/embedding.py):
   - `turn alone`: each turn as "speaker: text" (what a store embedding one text per turn embeds, e.g.
     Mem0 with `infer=False` in `bench_peer`);
   - `turn with the turn before`: what the vector index holds for a turn (lexical.in_context), minus the
     turn alone: the context's cost;
   - `passages`: the sentences of a person's multi-sentence turns (lexical.passage_texts);
   - `candidates`: the memories read from the turns (embedded like any memory).

It prints, per part, the texts, their characters and the milliseconds per turn, and the sum; the import
runs the embedding on its own thread beside the writes, so on a machine with cores to spare the import's
time per turn is less than the sum. Everything it wrote is deleted at the end. A quiet machine only.
"""

from __future__ import annotations

import json
import time
from itertools import groupby
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand
from django.db import transaction
from django.utils import timezone

from devtools.benchmarks import peer

PARTS = ("write", "turn alone", "context (the turn before, in the turn's vector)", "passages", "candidates")


class Command(BaseCommand):
    help = "What each index of an import costs per turn (write, turn vector, context, passages, candidates)."

    def add_arguments(self, parser):
        parser.add_argument("--file", required=True, help="a LoCoMo or LongMemEval file as published")
        parser.add_argument("--format", dest="fmt", choices=("locomo", "longmemeval"), default=None)
        parser.add_argument("--conversations", nargs="+", default=None, help="only these conversations")
        parser.add_argument("--samples", type=int, default=None, help="only the first N conversations")
        parser.add_argument("--json", dest="json_out", default=None, help="write the figures to this file")

    def handle(self, *args, file, fmt, conversations, samples, json_out, **options):
        from governance.embedding.backends import get_embedder

        path = Path(file)
        prefix = f"bench-index/run-{timezone.now():%Y%m%d-%H%M%S}"
        turns = peer.load_file(path, fmt, conversations, samples, prefix).turns
        embedder = get_embedder()
        embedder.embed_memories(["warm-up"])
        self.stdout.write(f"load average at the start: {peer.load_average()}; embedder {embedder.name}")
        try:
            figures = self._measure(embedder, turns, prefix)
        finally:
            _cleanup(prefix)
        n = len(turns)
        self.stdout.write(
            f"\n{path.name}: {n} turns\n\npart | texts | characters | ms per turn | share\n--- | --- | --- | --- | ---"
        )
        total = sum(f["seconds"] for f in figures.values())
        for part in PARTS:
            f = figures[part]
            self.stdout.write(
                f"{part} | {f['texts']} | {f['chars']} | {f['seconds'] * 1000 / n:.1f} | "
                f"{f['seconds'] / total:.0%}"
            )
        self.stdout.write(f"sum | | | {total * 1000 / n:.1f} | 100%")
        self.stdout.write(f"load average at the end: {peer.load_average()}")
        if json_out:
            Path(json_out).write_text(json.dumps({"file": str(path), "turns": n, "parts": figures}, indent=2))

    def _measure(self, embedder, turns: list[dict], prefix: str) -> dict:
        from governance.models import Memory
        from governance.models.lexical import searchable_text
        from governance.propagation.embedding import (
            embedding_input,
            hold_rows,
            passage_inputs,
            turn_context,
        )
        from governance.services.conversation_import import BATCH_TURNS, ingest_claimed
        from governance.services.scope import scope_ensure

        began = time.perf_counter()
        # The import's own writes (services/conversation_import.py), each chunk's rows claimed for embedding
        # in its transaction as the import claims them, so the embedding worker leaves them to this command.
        for (scope_path, session), group in groupby(turns, key=lambda t: (t["scope"], t["session"])):
            scope = scope_ensure(path=scope_path, actor=None)
            group = list(group)
            for start in range(0, len(group), BATCH_TURNS):
                chunk = [
                    {k: t.get(k) for k in ("role", "speaker", "content", "ref", "call_id", "at")}
                    for t in group[start : start + BATCH_TURNS]
                ]
                ingest_claimed(scope=scope, session=session, turns=chunk, embed=True)
        write = time.perf_counter() - began
        rows = list(
            Memory.objects.filter(scope__path__startswith=prefix + "/")
            .exclude(meta__contains={"small_talk": True})  # never embedded
            .values("pk", "text", "speaker", "kind", "session", "source_kind")
            .order_by("pk")
        )
        episodes = [r for r in rows if r["kind"] == "episodic"]
        context = turn_context(episodes)
        texts = {
            "turn alone": [searchable_text(r["text"], r["speaker"]) for r in episodes],
            "turn with context": [embedding_input(r, context) for r in episodes],
            "passages": [p for r in episodes for p in passage_inputs(r)],
            "candidates": [embedding_input(r, {}) for r in rows if r["kind"] != "episodic"],
        }
        timed = {}
        for name, batch in texts.items():
            hold_rows([r["pk"] for r in rows])  # still this command's while it embeds (a lease of minutes)
            timed[name] = self._embed(embedder, batch)
        alone, with_context = timed["turn alone"], timed["turn with context"]
        return {
            "write": {"texts": len(turns), "chars": sum(len(t["content"]) for t in turns), "seconds": write},
            "turn alone": alone,
            PARTS[2]: {
                "texts": with_context["texts"],
                "chars": with_context["chars"] - alone["chars"],
                "seconds": max(0.0, with_context["seconds"] - alone["seconds"]),
            },
            "passages": timed["passages"],
            "candidates": timed["candidates"],
        }

    @staticmethod
    def _embed(embedder, texts: list[str]) -> dict:
        size = settings.EMBEDDING_BATCH_SIZE
        began = time.perf_counter()
        for start in range(0, len(texts), size):
            embedder.embed_memories(texts[start : start + size])
        return {"texts": len(texts), "chars": sum(map(len, texts)), "seconds": time.perf_counter() - began}


def _cleanup(prefix: str) -> None:
    """Delete what the run wrote: its memories, their outbox rows, its scopes (audit events stay)."""
    from governance.models import Memory, Outbox, Scope

    scopes = list(Scope.objects.filter(path__startswith=prefix))
    ids = list(Memory.objects.filter(scope__in=scopes).values_list("pk", flat=True))
    with transaction.atomic():
        Outbox.objects.filter(memory_id__in=ids).delete()
        Memory.objects.filter(pk__in=ids).delete()
    for scope in sorted(scopes, key=lambda s: -s.path.count("/")):
        scope.grants.all().delete()
        scope.delete()
