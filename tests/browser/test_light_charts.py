"""Charts after the weight cut (issue 51), in Chromium against the live server: the server-drawn SVG charts
and the partial plotly bundle still draw; on a phone no toolbar, no names at the lines' ends and the
evaluation legend under its plot; the evaluation page's scroll boxes reached by the keyboard, and axe-core
finding no serious or critical violation there."""

from __future__ import annotations

from django.apps import apps
from playwright.sync_api import expect

from governance.services.memory import memory_reinforce
from tests.browser.conftest import settle, sign_in
from tests.browser.test_dashboard_day import AXE, AXE_RUN
from tests.memoryui.conftest import remember

PHONE = {"width": 390, "height": 844}


def _world(project_scope):
    memories = [
        remember(project_scope, f"Fact number {i} about the slides", kind="semantic") for i in range(3)
    ]
    memory_reinforce(memory_ids=[memories[0].pk], weight=0.8, reason="recall", actor=None)
    apps.get_model("governance", "EvaluationRun").objects.create(
        suite="replay",
        seed=7,
        strategies=["recent_only", "vector_only", "full"],
        results={
            "strategies": {
                name: {
                    "overall": score,
                    "categories": {c: score for c in ("keyed", "supersede", "contradict", "scope", "budget")},
                    "metrics": {"p50_ms": 3.0, "p95_ms": 9.0, "recall": score, "precision": score},
                }
                for name, score in (("recent_only", 0.4), ("vector_only", 0.6), ("full", 0.9))
            }
        },
    )
    return memories


def test_the_charts_draw_without_the_whole_library(page, owner, project_scope):
    memories = _world(project_scope)
    sign_in(page, "olivia", "pw-olivia")
    scripts = []
    page.on("request", lambda r: scripts.append(r.url) if r.resource_type == "script" else None)
    page.goto("/")
    expect(page.locator("#activation-histogram[data-ready] svg rect.bar").first).to_be_attached()
    page.goto(f"/memories/{memories[0].pk}/")
    expect(page.locator("#activation-curve[data-ready] svg path.dot")).to_have_count(1)
    assert not [s for s in scripts if "plotly" in s]  # two pages with a chart, no chart library
    for path, chart in (("/timeline/", "#timeline-chart"), ("/evaluation/", "#evaluation-chart")):
        page.goto(path)
        expect(page.locator(f"{chart}[data-ready] .main-svg").first).to_be_attached()
    plotly = {s.rsplit("/", 1)[1] for s in scripts if "plotly" in s}
    assert len(plotly) == 1 and plotly.pop().startswith("plotly-basic-4.1.1.min.")


def test_on_a_phone_charts_have_no_toolbar_no_end_labels_and_the_legend_under_the_plot(
    page, owner, project_scope
):
    _world(project_scope)
    page.set_viewport_size(PHONE)
    sign_in(page, "olivia", "pw-olivia")
    page.goto("/timeline/")
    chart = page.locator("#timeline-chart[data-ready]")
    expect(chart).to_have_count(1)
    assert page.locator("#timeline-chart .modebar").count() == 0
    annotations = page.evaluate(
        "document.getElementById('timeline-chart').layout.annotations.map(a => a.text)"
    )
    assert annotations == ["cold threshold"]
    page.goto("/evaluation/")
    expect(page.locator("#evaluation-chart[data-ready]")).to_have_count(1)
    assert page.locator("#evaluation-chart .modebar").count() == 0
    plot, legend = (
        page.locator(f"#evaluation-chart {sel}").first.bounding_box() for sel in (".bglayer", ".legend")
    )
    assert legend["y"] >= plot["y"] + plot["height"]  # under the plot, not over it
    # wide: names at the lines' ends and the toolbar are back
    page.set_viewport_size({"width": 1440, "height": 900})
    page.goto("/timeline/")
    expect(page.locator("#timeline-chart[data-ready]")).to_have_count(1)
    assert len(page.evaluate("document.getElementById('timeline-chart').layout.annotations")) > 1


def test_the_evaluation_scroll_boxes_are_reached_by_the_keyboard_and_axe_finds_nothing_serious(
    page, owner, project_scope
):
    _world(project_scope)
    page.set_viewport_size(PHONE)
    sign_in(page, "olivia", "pw-olivia")
    page.goto("/evaluation/")
    settle(page)
    boxes = page.locator("main div.scroll")
    assert boxes.count() >= 2
    for i in range(boxes.count()):
        box = boxes.nth(i)
        assert box.get_attribute("tabindex") == "0" and box.get_attribute("role") == "region"
        assert box.get_attribute("aria-label")
    # Tab from the page's top reaches the first box
    page.locator("h1").first.click()
    for _ in range(60):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.classList.contains('scroll')"):
            break
    else:
        raise AssertionError("Tab never reached a scroll box")
    page.add_script_tag(path=str(AXE))
    assert page.evaluate(AXE_RUN) == []
