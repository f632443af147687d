import re

import pytest

from devtools.evaluation.generator import SUITES, generate
from devtools.evaluation.suite import CATEGORIES

CJK = re.compile(r"[\u4e00-\u9fff]")
DIGITS = re.compile(r"\d+")


def test_same_suite_and_seed_generate_identical_tasks():
    a, b = generate("standard", 11), generate("standard", 11)
    assert [t.to_dict() for t in a.tasks] == [t.to_dict() for t in b.tasks]
    assert a.fingerprint() == b.fingerprint()


def test_another_seed_generates_other_tasks():
    a, b = generate("standard", 11), generate("standard", 12)
    assert a.fingerprint() != b.fingerprint()
    assert (
        sum(x.query != y.query or x.memories != y.memories for x, y in zip(a.tasks, b.tasks, strict=True))
        > 100
    )


def test_a_category_subset_draws_the_same_tasks_as_the_whole_suite():
    whole = {t.id: t for t in generate("smoke", 5).tasks}
    part = generate("smoke", 5, categories=("revision",)).tasks
    assert part and all(t.category == "revision" and t == whole[t.id] for t in part)


def test_standard_suite_has_hundreds_of_tasks_in_every_category_and_both_languages():
    suite = generate("standard", 0)
    assert len(suite.tasks) == len(CATEGORIES) * 2 * SUITES["standard"] >= 200
    cells = {(t.category, t.lang) for t in suite.tasks}
    assert cells == {(c, lang) for c in CATEGORIES for lang in ("en", "zh")}
    for task in suite.tasks:
        has_cjk = bool(CJK.search(task.query))
        assert has_cjk == (task.lang == "zh"), task.id


def test_every_task_carries_noise_and_near_duplicates_it_must_never_show():
    for task in generate("standard", 3).tasks:
        noise = [e for e in task.events if e.session.startswith("s-noise")]
        assert len(noise) >= 8, task.id
        foreign = [m for m in task.memories if m.place in ("sibling", "foreign")]
        assert {m.place for m in foreign} == {"sibling", "foreign"}, task.id
        assert {m.label for m in foreign} <= set(task.expect.absent), task.id
        # Near-duplicates: the same requirement (key) or the same sentence with other numbers as
        # something the task's own scope holds.
        own = [m for m in task.memories if m.place == "task"] + [
            t for e in task.events for t in e.turns if t.role in ("tool", "user")
        ]
        own_keys = {m.key for m in own if getattr(m, "key", None)}
        own_shapes = {DIGITS.sub("#", getattr(m, "text", None) or m.content) for m in own}
        assert any(m.key in own_keys or DIGITS.sub("#", m.text) in own_shapes for m in foreign), task.id


def test_questions_paraphrase_rather_than_repeat_what_was_stored():
    for task in generate("standard", 4).tasks:
        if task.category == "stale_suppression":
            continue  # that category quotes the stale wording on purpose
        stored = [m.text for m in task.memories] + [t.content for e in task.events for t in e.turns]
        assert not any(text in task.query for text in stored), task.id


def test_unknown_suite_or_category_is_refused():
    with pytest.raises(ValueError, match="Unknown suite"):
        generate("nope", 0)
    with pytest.raises(ValueError, match="Unknown category"):
        generate("smoke", 0, categories=("telepathy",))


def test_task_ids_are_unique_so_no_two_tasks_share_their_draws():
    ids = [t.id for t in generate("standard", 0).tasks]
    assert len(ids) == len(set(ids))


def test_stale_episode_tasks_link_the_rule_to_the_turn_it_was_learned_from():
    for task in generate("standard", 2, categories=("stale_episode",)).tasks:
        rule = next(m for m in task.memories if m.label == "v1")
        refs = {t.ref for e in task.events for t in e.turns}
        assert rule.source_ref in refs, task.id  # the rule cites the user's turn
        assert task.expect.negative == (("v1-turn", "v2"),)
        assert rule.source_ref == f"{task.id}-v1-turn"


def test_exact_term_questions_name_an_identifier_only_the_target_log_holds_exactly():
    for task in generate("standard", 5, categories=("exact_term",)).tasks:
        ident = re.search(r"E\d{4}|ledger_\d{4}_q\d\.xlsx", task.query).group(0)
        whole = re.compile(rf"(?<![\w.]){re.escape(ident)}(?![\w])")
        target = next(m for m in task.memories if m.label == "log")
        near = [m for m in task.memories if m.label.startswith("near")]
        assert whole.search(target.text), task.id
        assert len(near) == 20 and not any(whole.search(m.text) for m in near), task.id
