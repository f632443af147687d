"""`manage.py measure_paraphrased_contradictions`: whether the embedding's cosine similarity could let
four-eyes see an unkeyed rule that contradicts a long-term commitment in other words (the lexical test,
services/opposite.contradicts, needs shared content words and an opposite negation).

A small hand-written set (a regression check, not real data): commitments, each with a paraphrased
contradiction, a compatible restatement or refinement (same topic, no conflict) and an unrelated rule of
the same domain. Prints, per class, the cosine percentiles with the configured embedder, how many the
lexical test flags, and for candidate thresholds the share of each class at or above it. A threshold could
only help if contradictions sat above it and compatible restatements below: the figures say whether they
do."""

from __future__ import annotations

import numpy as np
from django.core.management.base import BaseCommand

from governance.embedding.backends import get_embedder
from governance.services.opposite import contradicts

# (commitment, paraphrased contradiction, compatible restatement, unrelated rule of the same domain)
CASES = (
    (
        "Always export the client deck as PDF.",
        "Client decks go out as PowerPoint files from now on.",
        "Send the client deck as a PDF file.",
        "Client decks use the blue template.",
    ),
    (
        "Invoices are paid within 30 days.",
        "Settle invoices the moment they arrive, no waiting period.",
        "Pay each invoice no later than thirty days after receipt.",
        "Invoices carry the project code in the subject.",
    ),
    (
        "Deploy to production only on weekdays.",
        "Saturday and Sunday releases to production are fine.",
        "Production releases happen Monday to Friday.",
        "Production deploys need a green build.",
    ),
    (
        "The team meets every Monday at 9.",
        "Our weekly meeting has moved to Thursday afternoons.",
        "Each Monday morning at nine the team gets together.",
        "Meeting notes go into the shared folder.",
    ),
    (
        "Use British spelling in all documents.",
        "Write every document in American English spelling.",
        "Documents follow UK spelling conventions.",
        "Documents are reviewed by a second person.",
    ),
    (
        "Customer data stays in the EU region.",
        "Store customer records in the US data centre.",
        "Keep all customer data inside European data centres.",
        "Customer data is backed up nightly.",
    ),
    (
        "Code reviews need two approvals.",
        "A single approval is enough to merge a pull request.",
        "Every pull request must be approved by two reviewers.",
        "Code reviews should be done within a day.",
    ),
    (
        "Slides use at most five bullet points.",
        "Pack as many bullets on a slide as the content needs.",
        "Keep each slide to five bullets or fewer.",
        "Slides number their pages at the bottom.",
    ),
    (
        "Support answers tickets within four hours.",
        "Tickets can wait until the next business day for a reply.",
        "Reply to every support ticket in under four hours.",
        "Support tags every ticket with a product area.",
    ),
    (
        "Passwords are rotated every 90 days.",
        "Passwords never have to be changed unless compromised.",
        "Change passwords once a quarter.",
        "Passwords are at least twelve characters long.",
    ),
    (
        "The office is closed on public holidays.",
        "Staff are expected in the office on bank holidays.",
        "No one works at the office on national holidays.",
        "The office opens at eight.",
    ),
    (
        "Reports are written in English.",
        "Write reports in German.",
        "All reports are in the English language.",
        "Reports include an executive summary.",
    ),
)
CLASSES = ("contradiction", "compatible", "unrelated")
THRESHOLDS = (0.70, 0.75, 0.80, 0.85, 0.88, 0.90, 0.92)


class Command(BaseCommand):
    help = "Cosine of paraphrased contradictions vs compatible restatements vs unrelated rules (hand-written set)."

    def handle(self, *args, **options):
        embedder = get_embedder()
        texts = [t for case in CASES for t in case]
        vectors = embedder.embed_memories(texts).reshape(len(CASES), 4, -1)
        cosines = {c: [] for c in CLASSES}
        lexical = {c: 0 for c in CLASSES}
        for i, case in enumerate(CASES):
            for j, name in enumerate(CLASSES, start=1):
                cosines[name].append(float(vectors[i, 0] @ vectors[i, j]))
                lexical[name] += bool(contradicts(case[0], case[j]))
        n = len(CASES)
        self.stdout.write(f"embedder {embedder.name} ({embedder.dimensions} dimensions); {n} commitments")
        for name in CLASSES:
            values = np.array(cosines[name])
            p = np.percentile(values, [0, 25, 50, 75, 100])
            self.stdout.write(
                f"{name:13s} cosine min/p25/median/p75/max {' / '.join(f'{x:.3f}' for x in p)}; "
                f"lexical test flags {lexical[name]}/{n}"
            )
        self.stdout.write("share at or above the threshold (contradiction / compatible / unrelated):")
        for t in THRESHOLDS:
            shares = [sum(v >= t for v in cosines[name]) / n for name in CLASSES]
            self.stdout.write(f"  {t:.2f}: " + " / ".join(f"{s:.2f}" for s in shares))
        wins = sum(c > r for c, r in zip(cosines["contradiction"], cosines["compatible"], strict=True))
        self.stdout.write(
            f"the contradiction is closer to its commitment than the compatible restatement in {wins}/{n} cases"
        )
