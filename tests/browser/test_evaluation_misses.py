"""An evaluation run's misses in Chromium (issue 51): each miss opens (a <details>) onto its question, gold
answer, evidence turns with the rank each reached and the top hits with rank and score, in English and
Chinese; at 1440 and at 390 px no wider than the window, axe-core finding no serious or critical
violation, in the light and the dark theme."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from governance.models import EvaluationMiss, EvaluationRun
from tests.browser.conftest import settle, sign_in
from tests.browser.test_dashboard_day import AXE, AXE_RUN, DESKTOP, PHONE


def _turn(ref, text, rank=None, **kw):
    return {
        "ref": ref,
        "speaker": kw.pop("speaker", "Caroline"),
        "text": text,
        "hash": "",
        "cut": False,
        "rank": rank,
        **kw,
    }


def _world(workspace):
    run = EvaluationRun.objects.create(
        suite="retrieval:locomo-mini.json",
        seed=0,
        workspace=workspace,
        state="done",
        task_count=3,
        strategies=["full"],
        results={
            "strategies": {
                "full": {
                    "all": {"questions": 3, "recall@1": 0.0, "recall@5": 0.333, "recall@10": 0.5},
                    "categories": {
                        "2 temporal": {"questions": 1, "recall@1": 0.0, "recall@5": 0.0, "recall@10": 0.5},
                        "4 single-hop": {"questions": 2, "recall@1": 0.0, "recall@5": 0.5, "recall@10": 0.5},
                    },
                }
            },
            "tasks": [],
            "miss_count": 2,
            "misses_kept": 2,
        },
    )
    long_hit = (
        "I spent the whole afternoon talking about bicycles, frames, gears and every colour the shop had. "
        * 3
    )
    EvaluationMiss.objects.create(
        run=run,
        position=0,
        question_id="conv-26#4",
        category="2 temporal",
        question="When did Caroline buy the teal bicycle, and which shop was it from?",
        answer="The weekend before 8 May 2023, at the shop on Elm Street",
        recall={"recall@1": 0.0, "recall@5": 0.0, "recall@10": 0.5},
        evidence=[
            _turn("D1:1", "Finally treated myself to a new ride last weekend, a bright teal one."),
            _turn("D1:9", "It came from the little place on Elm Street.", rank=7),
        ],
        hits=[
            {
                **_turn(f"D1:{n}", long_hit[:300], cut=True),
                "rank": n - 1,
                "memory_id": 100 + n,
                "score": 0.8 - n / 100,
                "evidence": False,
            }
            for n in range(2, 8)
        ]
        + [
            {
                **_turn("D1:9", "It came from the little place on Elm Street.", rank=7),
                "memory_id": 109,
                "score": 0.61,
                "evidence": True,
            }
        ],
    )
    EvaluationMiss.objects.create(
        run=run,
        position=1,
        question_id="conv-zh#0",
        category="4 single-hop",
        question="卡罗琳买的自行车是什么颜色？",
        answer="亮青色",
        recall={"recall@1": 0.0, "recall@5": 0.0, "recall@10": 0.0},
        evidence=[_turn("D1:1", "上周末终于给自己换了个新坐骑，亮青色的。", speaker="卡罗琳")],
        hits=[
            {
                **_turn(f"D1:{n}", f"卡罗琳又问她买的自行车应该是什么颜色，第{n}个选项。", speaker="卡罗琳"),
                "rank": n - 1,
                "memory_id": 200 + n,
                "score": 0.7,
                "evidence": False,
            }
            for n in range(2, 12)
        ],
        redacted=True,
    )
    return run


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_a_runs_misses_open_onto_their_evidence_and_hits_on_a_phone_and_a_desktop(
    page, owner, workspace_scope, scheme
):
    run = _world(workspace_scope.workspace)
    page.emulate_media(color_scheme=scheme)
    sign_in(page, "olivia", "pw-olivia")
    for size in (DESKTOP, PHONE):
        page.set_viewport_size(size)
        page.goto(f"/evaluation/runs/{run.pk}/")
        settle(page)
        misses = page.locator("#run-misses details.miss")
        expect(misses).to_have_count(2)
        expect(page.locator("#run-misses h3.miss-category")).to_have_count(2)
        first = misses.first
        expect(first.locator("dd").first).not_to_be_visible()  # closed until asked
        first.locator("summary").click()
        expect(first.get_by_text("The weekend before 8 May 2023, at the shop on Elm Street")).to_be_visible()
        expect(first.locator(".miss-evidence li").nth(0)).to_contain_text("not in the top")
        expect(first.locator(".miss-evidence li").nth(1)).to_contain_text("rank 7")
        expect(first.locator(".miss-hits li")).to_have_count(7)
        expect(first.locator(".miss-hits li").last).to_contain_text("evidence")
        expect(first.locator(".miss-hits li").first).to_contain_text("score 0.7800")
        chinese = misses.nth(1)
        chinese.locator("summary").press("Enter")  # the keyboard opens it too
        expect(chinese.get_by_text("亮青色", exact=True)).to_be_visible()
        expect(chinese.locator("summary")).to_contain_text("evidence not in the top 10")
        width = page.evaluate("() => [document.documentElement.scrollWidth, window.innerWidth]")
        assert width[0] <= width[1], f"{size['width']} px: the page is {width[0]} px wide"
        page.add_script_tag(path=str(AXE))
        assert page.evaluate(AXE_RUN) == [], f"{scheme} at {size['width']} px"
