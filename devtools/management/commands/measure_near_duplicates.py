"""`manage.py measure_near_duplicates --scope-prefix P`: the cosine similarity of true near-duplicates
against that of distinct memories, on conversations already imported (and embedded) under scope prefix P,
to choose a near-duplicate threshold from data rather than by guess.

- near-duplicates: each extracted candidate and the turn it was read from (its `derived_from` link): the
  same content in two surface forms ("I prefer PDF, thanks" / "I prefer PDF");
- distinct: each turn's nearest other turn of its own conversation (recall's vector search, the one
  similarity query, over the scope), leaving out exact repeats (same content hash): the hardest pairs
  that are not the same memory.

Prints percentiles of both, of their cosine and of their word overlap (the share of the shorter text's
keyword terms, governance.models.lexical, found in the other), and for candidate thresholds on each and on both
together, the share of near-duplicates at or above it and of distinct turns at or above it (a merge
there would be wrong)."""

from __future__ import annotations

import numpy as np
from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from governance.models import Kind, Memory, Relation, RelationKind, Scope, Status, lexical
from governance.recall.eligible import WITHOUT_SUPERSEDED, Eligibility
from governance.recall.vector import nearest

# Paraphrases: the same statement in other words (what a lexical rule cannot see), English and Chinese.
PARAPHRASES = (
    ("The client wants PPTX.", "Client prefers PPTX files."),
    ("Export the deck as PDF.", "The slides should be delivered in PDF format."),
    ("Deploy to production only on Fridays.", "Production releases happen on Fridays and at no other time."),
    ("Use the Inter font for every heading.", "Headings must be set in Inter."),
    ("All amounts in the report must be in euros.", "Report every figure in EUR."),
    ("Caroline went to a support group yesterday.", "Yesterday Caroline attended a support group meeting."),
    ("Melanie is into pottery.", "Melanie enjoys making pottery."),
    ("My sister moved to Lisbon last spring.", "Last spring my sister relocated to Lisbon."),
    ("Please copy the finance team on invoices.", "Invoices should cc the finance team."),
    ("I'm allergic to peanuts.", "Peanuts give me an allergic reaction."),
    ("幻灯片一律导出为PDF格式。", "演示文稿用PDF交付。"),
    ("只能在周五部署到生产环境。", "生产发布只安排在周五。"),
    ("所有标题都使用Inter字体。", "标题必须用Inter排版。"),
    ("客户想要PPTX。", "客户更喜欢PPTX文件。"),
)
THRESHOLDS = (0.85, 0.88, 0.90, 0.92, 0.94, 0.95, 0.96, 0.97, 0.98)
OVERLAPS = (0.5, 0.6, 0.7, 0.8, 0.9)


def overlap(a: str, b: str) -> float:
    """Share of the shorter text's keyword terms found in the other (1.0: one says nothing the other does not)."""
    ta, tb = set(lexical.terms(a)), set(lexical.terms(b))
    if not ta or not tb:
        return 0.0
    return len(ta & tb) / min(len(ta), len(tb))


def _share(pairs: list[tuple[float, float]], cosine: float, words: float) -> float:
    return sum(c >= cosine and o >= words for c, o in pairs) / len(pairs)


def _pct(values: list[float], q: float) -> float:
    return float(np.percentile(values, q)) if values else float("nan")


class Command(BaseCommand):
    help = "Similarity of true near-duplicates vs distinct memories on imported conversations."

    def add_arguments(self, parser):
        parser.add_argument("--scope-prefix", required=True)

    def handle(self, *args, scope_prefix, **options):
        scopes = list(Scope.objects.filter(path__startswith=scope_prefix.strip("/")))
        if not scopes:
            raise CommandError(f"no scope under {scope_prefix!r}: import the conversations first")
        scope_ids = [s.pk for s in scopes]
        dup = self._derived_pairs(scope_ids)
        distinct = self._nearest_turns(scopes)
        if not dup or not distinct:
            raise CommandError("no embedded pairs: embed the imported memories first")
        self.stdout.write(
            f"{len(scopes)} scopes under {scope_prefix}: {len(dup)} candidate/source-turn pairs, "
            f"{len(distinct)} turns with their nearest other turn"
        )
        self.stdout.write(
            f"\n{'':<34} {'min':>6} {'p1':>6} {'p5':>6} {'p50':>6} {'p95':>6} {'p99':>6} {'max':>6}"
        )
        for name, pairs in (("near-duplicates", dup), ("distinct (nearest other)", distinct)):
            for what, values in (("cosine", [c for c, _ in pairs]), ("word overlap", [o for _, o in pairs])):
                cells = [min(values), *(_pct(values, q) for q in (1, 5, 50, 95, 99)), max(values)]
                self.stdout.write(f"{name + ' ' + what:<34} " + " ".join(f"{v:6.3f}" for v in cells))
        self.stdout.write(
            f"\n{'cosine >=':>9} {'near-dups':>10} {'distinct':>9}   share at or above, alone and with a word "
            "overlap of at least " + ", ".join(f"{o:.1f}" for o in OVERLAPS) + " (near-dups/distinct)"
        )
        for t in THRESHOLDS:
            both = "  ".join(f"{_share(dup, t, o):.3f}/{_share(distinct, t, o):.3f}" for o in OVERLAPS)
            self.stdout.write(f"{t:9.2f} {_share(dup, t, 0):10.3f} {_share(distinct, t, 0):9.3f}   {both}")
        self._paraphrases(distinct)

    def _paraphrases(self, distinct: list[tuple[float, float]]) -> None:
        """Each paraphrase pair's cosine and word overlap, and the share of distinct LoCoMo pairs at or
        above that cosine (what a threshold catching the paraphrase would merge)."""
        from governance.embedding import get_embedder

        vectors = get_embedder().embed_memories([t for pair in PARAPHRASES for t in pair])
        self.stdout.write(
            f"\nparaphrases ({len(PARAPHRASES)} pairs, other words): cosine, word overlap, share of distinct "
            "nearest pairs at or above that cosine"
        )
        cosines = []
        for i, (a, b) in enumerate(PARAPHRASES):
            va, vb = vectors[2 * i], vectors[2 * i + 1]
            cosine = float(np.dot(va, vb) / (np.linalg.norm(va) * np.linalg.norm(vb)))
            cosines.append(cosine)
            self.stdout.write(
                f"  {cosine:.3f}  {overlap(a, b):.2f}  {_share(distinct, cosine, 0):.3f}  {a} / {b}"
            )
        self.stdout.write(
            f"  paraphrase cosine p50 {_pct(cosines, 50):.3f}, max {max(cosines):.3f}; distinct nearest pairs at "
            f"or above the paraphrases' median: {_share(distinct, _pct(cosines, 50), 0):.3f}"
        )

    def _derived_pairs(self, scope_ids: list[int]) -> list[tuple[float, float]]:
        links = list(
            Relation.objects.filter(
                kind=RelationKind.DERIVED_FROM,
                source__scope_id__in=scope_ids,
                source__embedding__isnull=False,
                target__embedding__isnull=False,
            ).values_list("source__embedding", "target__embedding", "source__text", "target__text")
        )
        return [
            (float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b))), overlap(ta, tb))
            for a, b, ta, tb in links
        ]

    def _nearest_turns(self, scopes: list[Scope]) -> list[tuple[float, float]]:
        out = []
        now = timezone.now()
        for scope in scopes:
            eligibility = Eligibility(scope_ids=(scope.pk,), statuses=WITHOUT_SUPERSEDED, at=now)
            turns = list(
                Memory.objects.filter(scope=scope, kind=Kind.EPISODIC, embedding__isnull=False)
                .exclude(status__in=[Status.FORGOTTEN, Status.REJECTED])
                .values_list("pk", "embedding", "content_hash", "text")
            )
            hashes = {pk: h for pk, _, h, _ in turns}
            texts = {pk: t for pk, _, _, t in turns}
            for pk, vector, digest, text in turns:
                for other, similarity in nearest(eligibility, list(vector), 6):
                    if other != pk and other in hashes and hashes[other] != digest:
                        out.append((similarity, overlap(text, texts[other])))
                        break
        return out
