"""`measure_paraphrased_contradictions`: the three classes' cosines with the real embedder, the lexical
test's count per class, and the threshold table (docs/governance.md, "Known limits")."""

from io import StringIO

from django.core.management import call_command

from devtools.management.commands.measure_paraphrased_contradictions import CASES, THRESHOLDS


def test_the_report_prints_each_class_and_the_threshold_table():
    out = StringIO()
    call_command("measure_paraphrased_contradictions", stdout=out)
    text = out.getvalue()
    for name in ("contradiction", "compatible", "unrelated"):
        assert f"{name} " in text and "lexical test flags " in text
    # A compatible restatement is never a contradiction for the lexical test (four-eyes would block it).
    assert [line for line in text.splitlines() if line.startswith("compatible")][0].endswith(
        f"flags 0/{len(CASES)}"
    )
    assert all(f"{t:.2f}: " in text for t in THRESHOLDS)
    assert f"/{len(CASES)} cases" in text
