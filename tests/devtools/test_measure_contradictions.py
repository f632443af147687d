"""`measure_contradictions` on our labelled set of statement pairs in both languages: the one contradiction
test stays precise (a false alarm blocks a person's write under four-eyes) and finds most changes."""

from io import StringIO

from django.core.management import call_command

from devtools.management.commands.measure_contradictions import DEFAULT, measure, rates


def test_the_contradiction_test_is_precise_in_both_languages_and_finds_most_changes():
    found = measure(DEFAULT)
    for lang in ("en", "zh"):
        precision, recall = rates(found["counts"][lang])
        assert precision == 1.0, [p for cell, p in found["wrong"] if cell == "fp"]
        assert recall >= 0.8, [p for cell, p in found["wrong"] if cell == "fn"]


def test_the_report_prints_each_language_and_lists_what_it_got_wrong():
    out = StringIO()
    call_command("measure_contradictions", stdout=out)
    text = out.getvalue()
    assert text.startswith("all ") and "\nen " in text and "\nzh " in text
    assert text.count("missed [") + text.count("false alarm [") == len(measure(DEFAULT)["wrong"])
