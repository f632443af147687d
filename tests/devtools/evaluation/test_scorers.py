"""The scorers against hand-made packets: each category's packet that should pass does, and each way
of getting it wrong fails with a reason."""

import pytest

from devtools.evaluation.scorers import Loaded, constraint_retention, score, stale_used
from devtools.evaluation.suite import EvalTask, Expect

IDS = {
    "rule": Loaded(1, "Always export as PDF."),
    "v1": Loaded(2, "Always export as PDF."),
    "v2": Loaded(3, "Always export as PPTX."),
    "dup-sibling": Loaded(4, "Always export as PNG."),
    "tool": Loaded(5, "list_invoices returned 4 open invoices."),
    "doc": Loaded(6, "The brand guide says 20px clear space."),
    "proposal": Loaded(7, "I suggest a change: export as PNG."),
    "winner": Loaded(8, "Headings in Inter."),
    "loser": Loaded(9, "The old style sheet says: headings in Georgia."),
    "trace": Loaded(10, "For this session only, skip the slow tests."),
    "expired": Loaded(11, "Until Friday, deploys are frozen."),
    "v1-turn": Loaded(12, "Quick note for this project: Always export as PDF."),
    "first": Loaded(13, "Quick note for this project: send the report to Bob."),
    "later": Loaded(14, "Change it to Carol instead."),
    "log": Loaded(15, "worker 3 started; export failure E4012; queue depth at 7"),
    "near0": Loaded(16, "Export failure E40120 was a disk quota problem (4 GB)."),
}


def task(category: str, **expect) -> EvalTask:
    return EvalTask(
        id="t", category=category, lang="en", query="q", goal="g", session="s", expect=Expect(**expect)
    )


def b(label: str, *, status="active", source=("user", "ref"), **extra) -> dict:
    return {
        "memory_id": IDS[label].id,
        "kind": "convention",
        "key": None,
        "revision": 1,
        "status": status,
        "text": IDS[label].text,
        "source": {"kind": source[0], "ref": source[1]},
        "score": 0.5,
        "reason": "r",
        **extra,
    }


def packet(**slots) -> dict:
    base = {
        s: []
        for s in (
            "constraints",
            "recent",
            "evidence",
            "preferences",
            "relations",
            "external",
            "negative",
            "skipped",
        )
    }
    base["task"] = [{"memory_id": None, "text": "Goal: g"}]
    return {**base, **slots}


class TestDelayedRecall:
    t = task("delayed_recall", include=("rule",), absent=("dup-sibling",), constraints=("rule",))

    def test_rule_among_constraints_passes(self):
        assert score(self.t, packet(constraints=[b("rule")]), IDS).passed

    def test_rule_missing_fails(self):
        result = score(self.t, packet(evidence=[b("v2")]), IDS)
        assert not result.passed and "rule" in result.failures[0]

    def test_rule_only_in_negative_or_skipped_does_not_count(self):
        assert not score(self.t, packet(negative=[b("rule")]), IDS).passed
        assert not score(self.t, packet(skipped=[b("rule")]), IDS).passed

    def test_retention_counts_usable_constraints(self):
        assert constraint_retention(self.t, packet(constraints=[b("rule")]), IDS) == (1, 1)
        assert constraint_retention(self.t, packet(negative=[b("rule")]), IDS) == (0, 1)


class TestScopeBoundary:
    t = task("scope_boundary", include=("rule",), absent=("dup-sibling",))

    def test_only_own_scope_passes(self):
        assert score(self.t, packet(constraints=[b("rule")]), IDS).passed

    @pytest.mark.parametrize("slot", ["evidence", "negative", "skipped"])
    def test_a_sibling_memory_anywhere_fails(self, slot):
        result = score(self.t, packet(constraints=[b("rule")], **{slot: [b("dup-sibling")]}), IDS)
        assert not result.passed and "must never appear" in result.failures[0]


class TestSourceDistinction:
    t = task(
        "source_distinction",
        include=("rule", "tool", "doc"),
        slots=(("doc", "external"),),
        sources=(
            ("rule", "user", ("turn-1",)),
            ("tool", "tool_result", ("call-1", "turn-9")),
            ("doc", "external_document", ("https://d/1",)),
        ),
        proposals=("proposal",),
    )

    def good(self, **over):
        slots = {
            "constraints": [b("rule", source=("user", "turn-1"))],
            "evidence": [
                b("tool", source=("tool_result", "turn-9")),
                b("proposal", status="candidate", source=("assistant", "p")),
            ],
            "external": [b("doc", source=("external_document", "https://d/1"))],
        }
        return packet(**{**slots, **over})

    def test_each_source_cited_as_stored_passes(self):
        assert score(self.t, self.good(), IDS).passed

    def test_wrong_source_kind_fails(self):
        bad = self.good(evidence=[b("tool", source=("user", "turn-9"))])
        assert any("tool" in f and "cited as" in f for f in score(self.t, bad, IDS).failures)

    def test_document_outside_the_external_slot_fails(self):
        bad = self.good(
            external=[],
            evidence=[
                b("tool", source=("tool_result", "call-1")),
                b("doc", source=("external_document", "https://d/1")),
            ],
        )
        assert any("expected in external" in f for f in score(self.t, bad, IDS).failures)

    @pytest.mark.parametrize("slot,status", [("constraints", "candidate"), ("evidence", "active")])
    def test_a_guess_presented_as_confirmed_fails(self, slot, status):
        over = {
            "constraints": [b("rule", source=("user", "turn-1"))],
            "evidence": [b("tool", source=("tool_result", "call-1"))],
        }
        over[slot] = over[slot] + [b("proposal", status=status, source=("assistant", "p"))]
        assert any("guess" in f for f in score(self.t, self.good(**over), IDS).failures)


class TestRevision:
    t = task("revision", include=("v2",), negative=(("v1", "v2"),), not_in_force=("v1",), stale=("v1",))

    def test_new_value_in_force_and_old_in_negative_naming_it_passes(self):
        good = packet(
            constraints=[b("v2")],
            negative=[b("v1", status="superseded", replaced_by={"memory_id": 3, "text": "x"})],
        )
        assert score(self.t, good, IDS).passed
        assert stale_used(self.t, good, IDS) is False

    def test_negative_that_does_not_say_what_replaced_it_fails(self):
        bad = packet(constraints=[b("v2")], negative=[b("v1", status="superseded")])
        assert any("replaced by" in f for f in score(self.t, bad, IDS).failures)

    def test_negative_naming_the_replacement_by_text_passes(self):
        ok = packet(constraints=[b("v2")], negative=[b("v1", reason=f"replaced by: {IDS['v2'].text}")])
        assert score(self.t, ok, IDS).passed

    def test_old_value_still_in_force_fails_and_counts_as_stale_use(self):
        bad = packet(constraints=[b("v2"), b("v1")], negative=[b("v1", replaced_by={"memory_id": 3})])
        assert any("no longer in force" in f for f in score(self.t, bad, IDS).failures)
        assert stale_used(self.t, bad, IDS) is True

    def test_no_negative_context_fails(self):
        assert not score(self.t, packet(constraints=[b("v2")]), IDS).passed


class TestStaleSuppression:
    t = task("stale_suppression", include=("v2",), not_in_force=("v1",), absent=("expired",))

    def test_current_rule_only_passes(self):
        assert score(self.t, packet(constraints=[b("v2")], negative=[b("v1")]), IDS).passed

    def test_superseded_rule_as_evidence_fails(self):
        assert not score(self.t, packet(constraints=[b("v2")], evidence=[b("v1")]), IDS).passed

    def test_a_retired_or_forgotten_memory_anywhere_fails(self):
        assert not score(self.t, packet(constraints=[b("v2")], negative=[b("expired")]), IDS).passed


class TestEvidenceAttribution:
    t = task("evidence_attribution", include=("tool",), sources=(("tool", "tool_result", ("call-1",)),))

    def test_fact_cited_with_its_call_passes(self):
        assert score(self.t, packet(evidence=[b("tool", source=("tool_result", "call-1"))]), IDS).passed

    def test_fact_without_its_reference_fails(self):
        result = score(self.t, packet(evidence=[b("tool", source=("tool_result", ""))]), IDS)
        assert not result.passed and "cited as" in result.failures[0]


class TestConflictHandling:
    t = task("conflict_handling", include=("winner",), conflicts=(("winner", "loser"),))

    def test_winner_in_force_and_contradiction_said_passes(self):
        good = packet(
            constraints=[b("winner")],
            external=[b("loser", flags=["loses to 8: it is confirmed"])],
            relations=[b("winner", reason="memories 8 and 9 contradict each other; 8 wins")],
        )
        assert score(self.t, good, IDS).passed

    def test_loser_in_negative_context_is_a_said_conflict(self):
        assert score(self.t, packet(constraints=[b("winner")], negative=[b("loser")]), IDS).passed

    def test_unflagged_contradiction_fails(self):
        bad = packet(constraints=[b("winner")], external=[b("loser")])
        assert any("does not flag" in f for f in score(self.t, bad, IDS).failures)

    def test_loser_presented_as_a_rule_fails(self):
        bad = packet(constraints=[b("winner"), b("loser", flags=["contradicts 8"])])
        assert any("presented as a rule" in f for f in score(self.t, bad, IDS).failures)

    def test_the_text_alone_mentioning_conflict_is_not_a_flag(self):
        block = b("loser")
        block["text"] = "a conflict of styles"
        assert not score(self.t, packet(constraints=[b("winner")], external=[block]), IDS).passed


class TestTemporalCommitment:
    t = task(
        "temporal_commitment",
        include=("rule",),
        not_in_force=("trace",),
        absent=("expired",),
        stale=("trace", "expired"),
    )

    def test_commitment_without_old_traces_passes(self):
        good = packet(constraints=[b("rule")])
        assert score(self.t, good, IDS).passed and stale_used(self.t, good, IDS) is False

    @pytest.mark.parametrize("slot", ["evidence", "recent", "preferences"])
    def test_an_old_sessions_trace_presented_as_usable_fails(self, slot):
        bad = packet(constraints=[b("rule")], **{slot: [b("trace", status="active")]})
        assert not score(self.t, bad, IDS).passed
        assert stale_used(self.t, bad, IDS) is True

    def test_an_expired_rule_fails(self):
        assert not score(self.t, packet(constraints=[b("rule"), b("expired")]), IDS).passed


def _outdated(label: str, new: str) -> dict:
    """An episode block as adjudication writes it: in negative, naming what replaced it."""
    replaced = {
        "memory_id": IDS[new].id,
        "key": None,
        "revision": 1,
        "text": IDS[new].text,
        "status": "active",
    }
    return b(label, outdated={"why": "…", "replaced_by": replaced}, replaced_by=replaced)


class TestStaleEpisode:
    t = task(
        "stale_episode",
        include=("v2",),
        negative=(("v1-turn", "v2"),),
        not_in_force=("v1", "v1-turn"),
        stale=("v1", "v1-turn"),
    )

    def test_episode_in_negative_naming_the_new_rule_passes(self):
        result = score(
            self.t, packet(constraints=[b("v2")], negative=[b("v1"), _outdated("v1-turn", "v2")]), IDS
        )
        assert result.passed, result.failures

    def test_episode_presented_as_evidence_fails(self):
        result = score(self.t, packet(constraints=[b("v2")], evidence=[b("v1-turn")]), IDS)
        assert not result.passed
        assert any("v1-turn" in f and "not listed in negative" in f for f in result.failures)
        assert any("v1-turn" in f and "presented in ['evidence']" in f for f in result.failures)
        assert stale_used(self.t, packet(constraints=[b("v2")], evidence=[b("v1-turn")]), IDS) is True

    def test_episode_flagged_in_negative_and_still_shown_as_evidence_fails(self):
        result = score(
            self.t,
            packet(constraints=[b("v2")], negative=[_outdated("v1-turn", "v2")], evidence=[b("v1-turn")]),
            IDS,
        )
        assert not result.passed and "presented in ['evidence']" in result.failures[0]

    def test_episode_in_negative_without_naming_the_replacement_fails(self):
        result = score(self.t, packet(constraints=[b("v2")], negative=[b("v1-turn")]), IDS)
        assert not result.passed and "does not say it was replaced by v2" in result.failures[0]

    def test_episode_left_out_entirely_fails(self):
        # Not saying anything is not the same as saying it is outdated.
        result = score(self.t, packet(constraints=[b("v2")]), IDS)
        assert not result.passed and "not listed in negative context" in result.failures[0]

    def test_new_rule_missing_fails(self):
        assert not score(self.t, packet(negative=[_outdated("v1-turn", "v2")]), IDS).passed


class TestEpisodeCorrection:
    t = task(
        "episode_correction",
        include=("later",),
        negative=(("first", "later"),),
        not_in_force=("first",),
        stale=("first",),
    )

    def test_earlier_message_outdated_by_the_later_one_passes(self):
        result = score(self.t, packet(evidence=[b("later")], negative=[_outdated("first", "later")]), IDS)
        assert result.passed, result.failures

    def test_both_messages_as_evidence_fails(self):
        result = score(self.t, packet(evidence=[b("later"), b("first")]), IDS)
        assert not result.passed and len(result.failures) == 2

    def test_earlier_message_naming_another_replacement_fails(self):
        result = score(self.t, packet(evidence=[b("later")], negative=[_outdated("first", "v2")]), IDS)
        assert not result.passed and "replaced by later" in result.failures[0]


class TestExactTerm:
    t = task("exact_term", include=("log",), absent=("dup-sibling",), evidence=("log",))

    def test_the_log_holding_the_exact_identifier_as_evidence_passes(self):
        assert score(self.t, packet(evidence=[b("near0"), b("log")]), IDS).passed

    def test_only_near_identical_identifiers_fails(self):
        result = score(self.t, packet(evidence=[b("near0")]), IDS)
        assert not result.passed and "log" in result.failures[0]

    def test_the_log_left_out_for_the_budget_fails(self):
        assert not score(self.t, packet(evidence=[b("near0")], skipped=[b("log")]), IDS).passed

    def test_the_same_log_from_a_sibling_scope_fails(self):
        assert not score(self.t, packet(evidence=[b("log"), b("dup-sibling")]), IDS).passed


def test_a_label_that_was_never_loaded_fails_rather_than_passes():
    t = task("delayed_recall", include=("ghost",))
    assert score(t, packet(), IDS).failures == ["ghost: was never loaded"]


def _session_task(how: str) -> EvalTask:
    return task("correction_in_conversation", session=(("v2", "v1", how),))


def test_a_session_override_passes_only_pinned_in_place_with_the_rule_set_aside():
    fix = b("v2", status="proposed", session_override={"replaces": {"memory_id": IDS["v1"].id}})
    rule = b("v1", set_aside={"by": {"memory_id": IDS["v2"].id}})
    assert score(_session_task("overrides"), packet(constraints=[fix], negative=[rule]), IDS).passed
    # The correction only as evidence, or the rule still pinned beside it: fails, saying why.
    as_evidence = score(
        _session_task("overrides"), packet(constraints=[b("v1")], evidence=[b("v2", status="proposed")]), IDS
    )
    assert not as_evidence.passed and any(
        "not pinned as in force for this session" in f for f in as_evidence.failures
    )
    both = score(_session_task("overrides"), packet(constraints=[fix, b("v1")], negative=[rule]), IDS)
    assert any("still pinned" in f for f in both.failures)


@pytest.mark.parametrize(
    ("how", "field"),
    [("binding", "binding_request"), ("rejected", "override_rejected"), ("pending", "pending_changes")],
)
def test_a_rule_that_holds_must_say_why(how, field):
    member = {"memory_id": IDS["v2"].id}
    said = b("v1", **{field: [member] if field == "pending_changes" else member})
    assert score(_session_task(how), packet(constraints=[said]), IDS).passed
    silent = score(_session_task(how), packet(constraints=[b("v1")]), IDS)
    assert not silent.passed and any(f"without saying {how}" in f for f in silent.failures)
    overridden = score(_session_task(how), packet(constraints=[said, b("v2", status="proposed")]), IDS)
    assert any("pinned as in force although the rule holds" in f for f in overridden.failures)


class TestUnkeyedContradiction:
    """first = "send the report to Bob", later = "Change it to Carol instead.": a dispute nobody decided."""

    t = task(
        "unkeyed_contradiction",
        include=("first", "later"),
        disputes=(("later", "first"),),
        undisputed=("rule",),
    )

    @staticmethod
    def marked(label: str, other: str, newer: str = "later", **extra) -> dict:
        dispute = {"with": {"memory_id": IDS[other].id, "text": IDS[other].text}, "newer": IDS[newer].id}
        return b(label, in_dispute=dispute, **extra)

    def test_both_usable_and_marked_naming_the_newer_passes(self):
        p = packet(evidence=[self.marked("first", "later"), self.marked("later", "first"), b("rule")])
        assert score(self.t, p, IDS).passed

    def test_an_unmarked_side_fails(self):
        result = score(self.t, packet(evidence=[self.marked("first", "later"), b("later")]), IDS)
        assert not result.passed and "not marked in dispute" in result.failures[0]

    def test_the_wrong_newer_fails(self):
        p = packet(evidence=[self.marked("first", "later", newer="first"), self.marked("later", "first")])
        assert not score(self.t, p, IDS).passed

    def test_a_side_moved_to_negative_fails_while_undecided(self):
        p = packet(evidence=[self.marked("later", "first")], negative=[self.marked("first", "later")])
        assert not score(self.t, p, IDS).passed

    def test_marking_what_contradicts_nothing_fails(self):
        p = packet(
            evidence=[
                self.marked("first", "later"),
                self.marked("later", "first"),
                self.marked("rule", "later"),
            ]
        )
        result = score(self.t, p, IDS)
        assert not result.passed and "contradicts nothing" in result.failures[-1]
