"""`manage.py measure_near_duplicates --scope-prefix P`: the cosine similarity of true near-duplicates
against that of distinct memories, on conversations already imported (and embedded) under scope prefix P,
to choose a near-duplicate threshold from data rather than by guess.

- near-duplicates: each extracted candidate and the turn it was read from (its `derived_from` link): the
  same content in two surface forms ("I prefer PDF, thanks" / "I prefer PDF");
- distinct: each turn's nearest other turn of its own conversation (recall's vector search, the one
  similarity query, over the scope), leaving out exact repeats (same content hash): the hardest pairs
  that are not the same memory.

Prints percentiles of both and, for candidate thresholds, the share of near-duplicates at or above it
and of distinct turns at or above it (a merge there would be wrong)."""

from __future__ import annotations

import numpy as np
from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from governance.models import Kind, Memory, Relation, RelationKind, Scope, Status
from governance.recall.eligible import WITHOUT_SUPERSEDED, Eligibility
from governance.recall.vector import nearest

THRESHOLDS = (0.85, 0.88, 0.90, 0.92, 0.94, 0.95, 0.96, 0.97, 0.98)


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
        self.stdout.write(f"{len(scopes)} scopes under {scope_prefix}: {len(dup)} candidate/source-turn pairs, "
                          f"{len(distinct)} turns with their nearest other turn")
        self.stdout.write(f"\n{'':<28} {'min':>6} {'p1':>6} {'p5':>6} {'p50':>6} {'p95':>6} {'p99':>6} {'max':>6}")
        for name, values in (("near-duplicates", dup), ("distinct (nearest other)", distinct)):
            cells = [min(values), *(_pct(values, q) for q in (1, 5, 50, 95, 99)), max(values)]
            self.stdout.write(f"{name:<28} " + " ".join(f"{v:6.3f}" for v in cells))
        self.stdout.write(f"\n{'threshold':>9} {'near-dups >= t':>15} {'distinct >= t':>14}")
        for t in THRESHOLDS:
            self.stdout.write(f"{t:9.2f} {sum(v >= t for v in dup) / len(dup):15.3f} "
                              f"{sum(v >= t for v in distinct) / len(distinct):14.3f}")

    def _derived_pairs(self, scope_ids: list[int]) -> list[float]:
        links = list(Relation.objects.filter(kind=RelationKind.DERIVED_FROM, source__scope_id__in=scope_ids,
                                             source__embedding__isnull=False, target__embedding__isnull=False)
                     .values_list("source__embedding", "target__embedding"))
        return [float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b))) for a, b in links]

    def _nearest_turns(self, scopes: list[Scope]) -> list[float]:
        out = []
        now = timezone.now()
        for scope in scopes:
            eligibility = Eligibility(scope_ids=(scope.pk,), statuses=WITHOUT_SUPERSEDED, at=now)
            turns = list(Memory.objects.filter(scope=scope, kind=Kind.EPISODIC, embedding__isnull=False)
                         .exclude(status__in=[Status.FORGOTTEN, Status.REJECTED])
                         .values_list("pk", "embedding", "content_hash"))
            hashes = {pk: h for pk, _, h in turns}
            for pk, vector, digest in turns:
                for other, similarity in nearest(eligibility, list(vector), 6):
                    if other != pk and other in hashes and hashes[other] != digest:
                        out.append(similarity)
                        break
        return out
