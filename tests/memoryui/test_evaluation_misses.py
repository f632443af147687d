"""An uploaded file's run keeps its misses for study (issue 51): per missed question its gold answer, its
evidence turns with the rank each reached (or that none did) and the top hits with rank and score, after
the run's own workspace is gone; only while the run (and its workspace) exists; never the words of a
memory the workspace has forgotten, English or Chinese; seen by whoever may see the run, nobody else."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from governance.evaluation.misses import MISSES_KEPT, TURN_TEXT, kept_misses
from governance.evaluation.runs import evaluation_request, evaluation_run_retrieval
from governance.models import EvaluationMiss, EvaluationRun, Memory, Scope, Workspace, content_hash
from governance.propagation.turns import REDACTED
from governance.services.memory import memory_forget
from governance.services.scope import scope_ensure
from tests.memoryui.conftest import remember, signed_in

# Two conversations where a question's evidence turn shares no word with it, buried under many turns
# that echo the question: the top 10 the full path ranks holds fillers, not the evidence.
EN_EVIDENCE = "Finally treated myself to a new ride last weekend, it is a bright teal one."
ZH_EVIDENCE = "上周末终于给自己换了个新坐骑，亮青色的，特别显眼。"
EN_FILLER = "Caroline asked again which colour the bicycle she bought should be, option {n} of the shop list."
ZH_QUESTION = "卡罗琳买的自行车到底是什么颜色呢？"
ZH_FILLER = "卡罗琳又问她买的自行车应该是什么颜色，这是店里清单上的第{n}个选项。"


def _sample(sample_id, speaker, evidence, filler, question, answer):
    turns = [{"speaker": speaker, "dia_id": "D1:1", "text": evidence}] + [
        {"speaker": speaker, "dia_id": f"D1:{n}", "text": filler.format(n=n)} for n in range(2, 26)
    ]
    return {
        "sample_id": sample_id,
        "conversation": {
            "speaker_a": speaker,
            "speaker_b": "Melanie",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": turns,
        },
        "qa": [
            {"question": question, "answer": answer, "evidence": ["D1:1"], "category": 4},
            # Found: its evidence is one of the turns that echo it (in a conversation of 25, among 10).
            {"question": filler.format(n=7), "answer": "option 7", "evidence": ["D1:7"], "category": 2},
        ],
    }


FILE = [
    _sample(
        "conv-en",
        "Caroline",
        EN_EVIDENCE,
        EN_FILLER,
        "What colour is the bicycle Caroline bought?",
        "Teal",
    ),
    _sample("conv-zh", "卡罗琳", ZH_EVIDENCE, ZH_FILLER, ZH_QUESTION, "亮青色"),
]


def _run(owner, data=FILE) -> EvaluationRun:
    acme = Workspace.objects.get(slug="acme")
    run = evaluation_request(
        workspace=acme, name="misses.json", content=json.dumps(data).encode(), fmt=None, actor=owner
    )
    return evaluation_run_retrieval(run_id=run.pk)


@pytest.fixture
def measured(owner, project_scope):
    """A real run of the two conversations; before it, the team forgot (soft) a memory whose words are
    those of one filler turn, which the run's hits then hold."""
    for text in (EN_FILLER.format(n=3), ZH_QUESTION):
        forgotten = remember(project_scope, text, kind="episodic", status="active")
        memory_forget(memory_id=forgotten.pk, actor=owner, reason="asked to forget")
    run = _run(owner)
    assert run.state == "done", run.error
    return run


def test_a_real_run_keeps_each_miss_with_its_answer_evidence_ranks_and_top_hits(measured, owner):
    run = measured
    # The run's own workspace is gone, the misses stay.
    assert not Workspace.objects.filter(slug=run.sandbox).exists()
    assert not Memory.objects.filter(scope__path__startswith=f"{run.sandbox}/").exists()
    misses = {m.question_id: m for m in EvaluationMiss.objects.filter(run=run).order_by("position")}
    tasks = run.results["tasks"]
    assert set(misses) == {t["id"] for t in tasks if not t["passed"]}
    assert run.results["miss_count"] == run.results["misses_kept"] == len(misses)
    for ident, question, answer, evidence in (
        ("eval-run-{}/conv_en#0", "What colour is the bicycle Caroline bought?", "Teal", EN_EVIDENCE),
        ("eval-run-{}/conv_zh#0", REDACTED, "亮青色", ZH_EVIDENCE),  # the team forgot these words
    ):
        miss = misses[ident.format(run.pk)]
        assert (miss.question, miss.answer, miss.category) == (question, answer, "4 single-hop")
        assert miss.recall["recall@10"] == 0.0
        assert miss.evidence == [
            {
                "ref": "D1:1",
                "speaker": miss.evidence[0]["speaker"],
                "text": evidence,
                "hash": content_hash(evidence),
                "cut": False,
                "rank": None,
            }
        ]
        assert miss.evidence[0]["speaker"] in ("Caroline", "卡罗琳")
        assert [h["rank"] for h in miss.hits] == list(range(1, 11))
        assert all(isinstance(h["score"], float) and h["memory_id"] for h in miss.hits)
        assert all(h["ref"].startswith("D1:") and not h["evidence"] for h in miss.hits)
        assert all(h["text"] for h in miss.hits)
    # The results keep each question's verdict, never its texts.
    assert not any({"answer", "hits", "expected_texts", "ranked_texts"} & set(t) for t in tasks)
    # A filler the team forgot before the run is a hit of the English miss: its words are not kept.
    english = misses[f"eval-run-{run.pk}/conv_en#0"]
    stored = json.dumps([m.hits for m in misses.values()], ensure_ascii=False)
    assert EN_FILLER.format(n=3) not in stored
    assert english.redacted and next(h for h in english.hits if h["ref"] == "D1:3")["text"] == REDACTED
    assert ZH_QUESTION not in json.dumps(run.results, ensure_ascii=False)

    page = signed_in(owner, "pw-olivia").get(f"/evaluation/runs/{run.pk}/").content.decode()
    assert 'id="run-misses"' in page and "4 single-hop" in page
    for text in ("What colour is the bicycle Caroline bought?", "Teal", EN_EVIDENCE, ZH_EVIDENCE, "亮青色"):
        assert text in page
    assert "evidence not in the top 10" in page and "score " in page
    assert EN_FILLER.format(n=3) not in page and ZH_QUESTION not in page


def test_at_most_a_bound_of_misses_is_kept_with_a_share_of_every_category():
    tasks = [{"id": f"a{i}", "category": "a", "recall@10": 0.0} for i in range(MISSES_KEPT + 50)]
    tasks += [{"id": f"b{i}", "category": "b", "recall@10": 0.5} for i in range(3)]
    tasks += [{"id": "c0", "category": "c", "recall@10": 1.0}]  # found: not a miss
    kept = kept_misses(tasks)
    assert len(kept) == MISSES_KEPT and [t["id"] for t in kept if t["category"] == "b"] == ["b0", "b1", "b2"]
    assert [t["category"] for t in kept] == sorted(t["category"] for t in kept) and "c0" not in {
        t["id"] for t in kept
    }


def _miss(run, *, evidence, hits=(), question="Which format?", answer="PDF", position=0):
    def turn(text, **kw):
        return {"ref": kw.pop("ref", "D1:1"), "speaker": "", "text": text, "hash": "", "cut": False, **kw}

    return EvaluationMiss.objects.create(
        run=run,
        position=position,
        question_id=f"q{position}",
        category="4 single-hop",
        question=question,
        answer=answer,
        recall={"recall@1": 0.0, "recall@5": 0.0, "recall@10": 0.0},
        evidence=[turn(t, rank=None) if isinstance(t, str) else turn(**t, rank=None) for t in evidence],
        hits=[
            {
                **turn(t, ref=f"D1:{i + 2}"),
                "rank": i + 1,
                "memory_id": 900 + i,
                "score": 0.5,
                "evidence": False,
            }
            for i, t in enumerate(hits)
        ],
    )


def _stored_run(workspace, **results):
    return EvaluationRun.objects.create(
        suite="retrieval:x.json",
        seed=0,
        workspace=workspace,
        state="done",
        task_count=1,
        strategies=["full"],
        results={"strategies": {}, "tasks": [], **results},
    )


WORDS = {
    "en": ("Always export the slides as PDF for the board.", "We met on Monday. "),
    "zh": ("给董事会的幻灯片一律导出为PDF格式。", "我们周一见过面。"),
}


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("hard", [False, True])
def test_forgetting_a_memory_takes_its_words_out_of_the_stored_misses(
    lang, hard, owner, curator, project_scope, other_workspace_scope
):
    sentence, before = WORDS[lang]
    acme, globex = project_scope.workspace, other_workspace_scope.workspace
    long_turn = (before * 40)[: TURN_TEXT + 80]  # longer than a quote keeps: found by its hash
    run = _stored_run(acme, tasks=[{"id": "q0", "question": sentence, "passed": False}])
    miss = _miss(
        run,
        evidence=[sentence, {"text": long_turn[:TURN_TEXT], "hash": content_hash(long_turn), "cut": True}],
        hits=[before + sentence, "Nothing to do with it.", (before * 40)[: TURN_TEXT - 5] + sentence[:8]],
        answer=sentence,
    )
    other = _miss(_stored_run(globex), evidence=[sentence])  # another workspace's run: not reached
    memory = remember(project_scope, sentence, kind="semantic", status="active")
    actor = owner if hard else curator  # a hard forget is the owner's
    forgotten = memory_forget(memory_id=memory.pk, actor=actor, reason="asked", hard=hard)
    assert {"place": "evaluation_misses", "state": "rewritten", "count": 2} in forgotten.reached
    miss.refresh_from_db()
    assert miss.redacted and miss.answer == REDACTED and miss.question == "Which format?"
    assert [e["text"] for e in miss.evidence] == [REDACTED, long_turn[:TURN_TEXT]]
    assert [h["text"] for h in miss.hits][:2] == [REDACTED, "Nothing to do with it."]
    assert sentence not in json.dumps(miss.evidence + miss.hits, ensure_ascii=False)
    assert EvaluationRun.objects.get(pk=run.pk).results["tasks"][0]["question"] == REDACTED
    other.refresh_from_db()
    assert not other.redacted and other.evidence[0]["text"] == sentence
    # The long turn, forgotten whole, is found by the hash of its whole text.
    whole = remember(project_scope, long_turn, kind="episodic", status="active")
    memory_forget(memory_id=whole.pk, actor=actor, reason="asked", hard=hard)
    miss.refresh_from_db()
    assert miss.evidence[1]["text"] == REDACTED and miss.evidence[1]["hash"] == ""
    page = signed_in(owner, "pw-olivia").get(f"/evaluation/runs/{run.pk}/").content.decode()
    assert sentence not in page and "words forgotten" in page and "Nothing to do with it." in page


def test_a_cut_quote_that_ends_inside_the_forgotten_words_loses_them(owner, project_scope):
    sentence = "The launch code for the demo is orange-falcon-42."
    run = _stored_run(project_scope.workspace)
    quote = ("x" * (TURN_TEXT - 20)) + sentence[:20]
    miss = _miss(run, evidence=[{"text": quote, "cut": True}, {"text": quote, "cut": False}])
    memory = remember(project_scope, sentence, kind="semantic", status="active")
    memory_forget(memory_id=memory.pk, actor=owner, reason="asked", hard=True)
    miss.refresh_from_db()
    # Cut through the words: they began before the cut. Not cut: the quote is the whole turn, not them.
    assert [e["text"] for e in miss.evidence] == [REDACTED, quote]


def test_the_misses_go_with_their_run_and_with_its_workspace(db):
    root = scope_ensure(path="initech", actor=None)
    run = _stored_run(root.workspace)
    _miss(run, evidence=["The printer jams on Mondays."])
    kept = _stored_run(root.workspace)
    _miss(kept, evidence=["打印机周一总卡纸。"])
    run.delete()
    assert EvaluationMiss.objects.filter(run=kept).count() == 1 and EvaluationMiss.objects.count() == 1
    Scope.objects.filter(pk=root.pk).delete()
    root.workspace.delete()
    assert not EvaluationMiss.objects.exists() and not EvaluationRun.objects.exists()


def test_the_misses_are_seen_by_whoever_may_see_the_run_and_nobody_else(
    owner, curator, reviewer, outsider, agent, project_scope
):
    run = _stored_run(project_scope.workspace)
    _miss(run, evidence=["Export the slides as PDF."], hits=["幻灯片导出为PDF。"])
    url = f"/evaluation/runs/{run.pk}/"
    for principal, password in ((owner, "pw-olivia"), (curator, "pw-cora"), (reviewer, "pw-rami")):
        page = signed_in(principal, password).get(url)
        assert page.status_code == 200 and "Export the slides as PDF." in page.content.decode()
        assert "幻灯片导出为PDF。" in page.content.decode()
    stranger = signed_in(outsider, "pw-otto")
    for path in (url, f"{url}?page=2", f"{url}?show=all"):
        assert stranger.get(path).status_code == 404
    anonymous = Client().get(url)
    assert anonymous.status_code == 302 and "/login" in anonymous["Location"]
    from tests.conftest import token_client

    agent_page = token_client(agent).get(url)  # an agent's token is no dashboard session
    assert agent_page.status_code == 302 and b"Export the slides" not in agent_page.content
    assert signed_in(owner, "pw-olivia").get("/evaluation/runs/999999/").status_code == 404
    assert signed_in(owner, "pw-olivia").get(url, {"page": "x"}).status_code == 400


def test_a_run_stored_before_kept_its_texts_in_the_results_and_they_move_into_misses(
    owner_client, workspace_scope
):
    """The migration's step (0058): a failing question's texts leave the results for a miss row, where a
    forget reaches them; the page shows them as before."""
    from importlib import import_module

    from django.apps import apps

    run = _stored_run(
        workspace_scope.workspace,
        tasks=[
            {
                "id": "q1",
                "scope": "s",
                "question": "What did Melanie paint?",
                "category": "4 single-hop",
                "expected": ["D1:5"],
                "ranked": ["D1:4", "D1:5"],
                "recall@1": 0.0,
                "recall@5": 1.0,
                "recall@10": 1.0,
                "passed": False,
                "expected_texts": [{"ref": "D1:5", "text": "Melanie: a painting of a sunset"}],
                "ranked_texts": [
                    {"ref": "D1:4", "text": "Melanie: Wow, a support group!", "evidence": False}
                ],
            },
            {"id": "q2", "question": "Where did Caroline go?", "category": "2 temporal", "passed": True},
        ],
    )
    import_module("governance.migrations.0058_evaluation_miss").move_texts(apps, None)
    run.refresh_from_db()
    assert "expected_texts" not in json.dumps(run.results) and "a painting of a sunset" not in json.dumps(
        run.results
    )
    miss = EvaluationMiss.objects.get(run=run)
    assert miss.evidence[0] == {
        "ref": "D1:5",
        "speaker": "",
        "text": "Melanie: a painting of a sunset",
        "hash": "",
        "cut": False,
        "rank": 2,
    }
    assert [(h["rank"], h["ref"], h["evidence"]) for h in miss.hits] == [
        (1, "D1:4", False),
        (2, "D1:5", True),
    ]
    page = owner_client.get(f"/evaluation/runs/{run.pk}/").content.decode()
    assert "a painting of a sunset" in page and "Wow, a support group!" in page and "rank 2" in page
    assert "Where did Caroline go?" not in page
    assert (
        "Where did Caroline go?"
        in owner_client.get(f"/evaluation/runs/{run.pk}/", {"show": "all"}).content.decode()
    )


def test_a_forget_on_the_dashboard_says_it_rewrote_the_kept_misses(curator_client, reviewer, project_scope):
    from django.urls import reverse

    sentence = "给董事会的幻灯片一律导出为PDF格式。"
    run = _stored_run(project_scope.workspace)
    miss = _miss(run, evidence=["无关的一句话。"], hits=[sentence])
    memory = remember(project_scope, sentence, kind="semantic", status="active")
    answer = curator_client.post(
        reverse("dashboard:memory-act", args=[memory.pk]),
        {"action": "forget", "reason": "asked to", "irreversible": "yes"},
        follow=True,
    )
    assert "1 evaluation record (kept misses) rewritten" in answer.content.decode()
    miss.refresh_from_db()
    assert miss.hits[0]["text"] == REDACTED and miss.evidence[0]["text"] == "无关的一句话。"
    page = signed_in(reviewer, "pw-rami").get(f"/evaluation/runs/{run.pk}/").content.decode()
    assert sentence not in page and "无关的一句话。" in page


def test_a_page_of_misses_and_its_category_counts_take_three_queries(
    workspace_scope, django_assert_max_num_queries
):
    from governance.selectors.dashboard.evaluation import run_miss_categories, run_misses_page

    run = _stored_run(workspace_scope.workspace)
    for position in range(60):
        _miss(run, evidence=[f"turn {position}"], position=position)
    with django_assert_max_num_queries(3):  # the count, the rows, the categories
        misses = run_misses_page(run, 2)
        rows = [(m.question_id, m.evidence[0]["text"]) for m in misses.object_list]
        counts = run_miss_categories(run)
    assert len(rows) == 10 and rows[0] == ("q50", "turn 50") and counts == {"4 single-hop": 60}
