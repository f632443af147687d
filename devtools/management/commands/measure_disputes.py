"""`manage.py measure_disputes --scope-prefix P`: how many unkeyed contradictions the dispute rule
(governance/recall/disputes.py, governance.services.conflict.unkeyed_contradiction) would propose on
memories already imported and embedded under scope prefix P, and which: every pair is printed so a person
can judge it (precision is counted by hand on real data: there is no label for "these two disagree").
Nothing is written unless `--propose`. On chit-chat (LoCoMo) a good rule proposes almost nothing."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from governance.models import RECALLABLE, Memory, Scope
from governance.recall.disputes import DISPUTED_KINDS, candidate_pairs, is_statement, propose_disputes


class Command(BaseCommand):
    help = "Count (and list) the disputes the unkeyed-contradiction rule would propose under a scope prefix."

    def add_arguments(self, parser):
        parser.add_argument("--scope-prefix", help="memories imported under this prefix (real data)")
        parser.add_argument(
            "--suite-cases",
            type=int,
            default=0,
            help="instead: load N unkeyed_contradiction tasks per language of the replay suite (rolled back) "
            "and count the disputes proposed against the one pair each task holds",
        )
        parser.add_argument(
            "--propose", action="store_true", help="Write the proposals (default: count only)."
        )

    def handle(self, *args, scope_prefix, propose, suite_cases, **options):
        if suite_cases:
            return self._suite(suite_cases)
        if not scope_prefix:
            raise CommandError("give --scope-prefix or --suite-cases")
        scopes = list(Scope.objects.filter(path__startswith=scope_prefix.strip("/")))
        if not scopes:
            raise CommandError(f"no scope under {scope_prefix!r}: import the conversations first")
        memories = list(
            Memory.objects.filter(
                scope__in=scopes,
                status__in=RECALLABLE,
                kind__in=DISPUTED_KINDS,
                purged_at__isnull=True,
                embedding__isnull=False,
            ).order_by("pk")
        )
        checked, pairs = 0, {}
        for memory in memories:
            if not is_statement(memory):
                continue
            checked += 1
            for other_id, similarity, (reason, cues), newer in candidate_pairs(memory, memory.embedding):
                pair = (memory.pk, other_id) if newer else (other_id, memory.pk)
                pairs.setdefault(pair, (similarity, reason, cues))
        texts = dict(Memory.objects.filter(pk__in={i for p in pairs for i in p}).values_list("pk", "text"))
        for (newer, older), (similarity, _reason, cues) in sorted(pairs.items()):
            self.stdout.write(f"#{newer} vs #{older}  cos {similarity:.3f}  {', '.join(cues)}")
            self.stdout.write(f"    older: {texts[older][:160]}")
            self.stdout.write(f"    newer: {texts[newer][:160]}")
        rate = 1000 * len(pairs) / checked if checked else 0.0
        self.stdout.write(
            f"memories under {scope_prefix}: {len(memories)}; statements checked: {checked}; "
            f"disputes it would propose: {len(pairs)} ({rate:.1f} per 1,000 statements)"
        )
        if propose:
            self.stdout.write(f"proposed: {propose_disputes([m.pk for m in memories])}")

    def _suite(self, per_cell: int) -> None:
        """Precision and recall of the proposals on the suite's own cases: each task holds one true pair
        (said → changed), a same-subject statement that changes nothing, a change of something else and
        small talk; any other dispute in its scopes is a false one."""
        from django.db import transaction

        from devtools.evaluation.generator import generate
        from devtools.evaluation.loader import ensure_principals, load_task
        from governance.models import Dispute

        suite = generate("standard", per_cell=per_cell, categories=("unkeyed_contradiction",))
        proposed = correct = expected = 0
        for task in suite.tasks:
            with transaction.atomic():
                root = f"measure-disputes-{task.id.lower()}"
                loaded = load_task(task, root=root, principals=ensure_principals(root))
                labels = {v.id: k for k, v in loaded.ids.items()}
                found = list(
                    Dispute.objects.filter(newer__scope__path__startswith=root).values_list(
                        "newer_id", "older_id"
                    )
                )
                expected += 1
                if not any((labels.get(n), labels.get(o)) == ("changed", "said") for n, o in found):
                    said, changed = loaded.ids["said"], loaded.ids["changed"]
                    self.stdout.write(f"{task.id}: missed {changed.text!r} → {said.text!r}")
                for newer, older in found:
                    right = (labels.get(newer), labels.get(older)) == ("changed", "said")
                    proposed += 1
                    correct += right
                    if not right:
                        texts = dict(Memory.objects.filter(pk__in=(newer, older)).values_list("pk", "text"))
                        self.stdout.write(
                            f"{task.id}: false dispute {labels.get(newer)} {texts[newer]!r} → "
                            f"{labels.get(older)} {texts[older]!r}"
                        )
                transaction.set_rollback(True)
        precision = correct / proposed if proposed else float("nan")
        self.stdout.write(
            f"suite cases: {len(suite.tasks)}; disputes proposed: {proposed}; right: {correct}; "
            f"precision {precision:.3f}; recall {correct / expected:.3f}"
        )
