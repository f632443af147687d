"""The done-when's accessibility sweep (issue 51): every page of the dashboard (tests/browser/sweep_pages.py,
held to the routes by tests/memoryui/test_every_route_swept.py) with the demo data, in both themes (set with
the theme switch) and at 1440×900 and 390×844: no page wider than the window, and axe-core finding no
serious or critical violation. One browser page, one sign-in; the run prints its time."""

from __future__ import annotations

import json
import time

from playwright.sync_api import expect

from governance.models import ApiToken, EvaluationRun, Grant, Memory, Workspace
from governance.services.dispute import dispute_propose
from governance.services.invitation import invitation_create
from governance.services.memory import MemoryInput, memory_record
from governance.services.memory.lifecycle import memory_forget
from governance.services.principal import token_issue
from tests.browser.conftest import settle, sign_in
from tests.browser.sweep_pages import PAGES
from tests.browser.test_dashboard_day import AXE, AXE_RUN, DESKTOP, PHONE, _demo


def _active(scope, text):
    item = MemoryInput(scope=scope, kind="semantic", source_kind="user", text=text, status="active")
    return memory_record(item=item, actor=None)


def _world() -> dict:
    demo, slides, unused, turn, _proposals = _demo()
    older, newer = (
        _active(slides, t) for t in ("We host the decks on Dropbox.", "We moved the decks to SharePoint.")
    )
    dispute_propose(newer=newer, older=older, similarity=0.84, reason="another value", cues=["moved … to"])
    gone = _active(slides, "The old office wifi password is on the fridge")
    memory_forget(memory_id=gone.pk, actor=None, reason="asked to forget it")
    token_issue(principal=demo, actor=None, scope=slides, max_role="viewer")
    _invitation, raw = invitation_create(scope=slides, role="viewer", actor=None, note="设计团队")
    run = EvaluationRun.objects.create(
        suite="retrieval:locomo-mini.json",
        seed=0,
        workspace=Workspace.objects.get(slug="demo"),
        state="done",
        task_count=1,
        strategies=["full"],
        results={
            "strategies": {
                "full": {"all": {"questions": 1, "recall@1": 1.0, "recall@5": 1.0, "recall@10": 1.0}}
            },
            "tasks": [],
            "miss_count": 0,
            "misses_kept": 0,
        },
    )
    return {
        "slides": slides,
        "unused": unused,
        "turn": turn,
        "fact": Memory.objects.filter(scope=slides, key__isnull=False, status="active")
        .order_by("-revision")
        .first(),
        "old": Memory.objects.filter(scope=slides, status="superseded").first(),
        "gone": gone,
        "grant": Grant.objects.filter(scope__path="demo/slides").exclude(principal__name="demo").first(),
        "token": ApiToken.objects.filter(principal=demo).latest("pk"),
        "invite": raw,
        "run": run,
        "doomed": _active(slides, "A note to retire in bulk"),
    }


def _check(page, url, found, too_wide, where):
    width = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
    if width[0] > width[1]:
        too_wide[f"{where} {url}"] = width
    violations = page.evaluate(AXE_RUN)
    if violations:
        found[f"{where} {url}"] = violations


def _actions(page, w, found, too_wide, where):
    """What an action shows (sweep_pages.ACTIONS): the link picker's choices, a query tried on the turns
    page, and a bulk action's result."""
    page.goto(f"/memories/{w['fact'].pk}/")
    settle(page)
    page.locator("#link-form summary").click()
    page.locator("#link-search").fill("deck")
    expect(page.locator("#link-choices input[name=target]").first).to_be_attached()
    settle(page)
    _check(page, "GET link choices", found, too_wide, where)
    page.goto("/turns/")
    settle(page)
    page.locator("#try-query summary").click()
    page.locator("#try-query input[name=query]").fill("Which format do we export the deck in?")
    page.locator("#try-query button[type=submit]").click()
    expect(page.locator("#try-result")).not_to_be_empty()
    settle(page)
    _check(page, "POST /turns/try/", found, too_wide, where)
    # The bulk form's answer, posted as the list's form posts it (a real CSRF token from the cookie).
    with page.expect_navigation():
        page.evaluate(
            """([id]) => { const f = document.createElement("form"); f.method = "post"; f.action = "/memories/bulk/";
              const csrf = document.cookie.split("; ").find(c => c.startsWith("csrftoken=")).split("=")[1];
              for (const [k, v] of [["csrfmiddlewaretoken", csrf], ["ids", id], ["action", "retire"],
                                    ["irreversible", "yes"], ["reason", "sweep"]]) {
                const i = document.createElement("input"); i.type = "hidden"; i.name = k; i.value = v; f.append(i); }
              document.body.append(f); f.submit(); }""",
            [str(w["doomed"].pk)],
        )
    settle(page)
    assert page.locator("h1").first.inner_text().lower().startswith("retire")
    _check(page, "POST /memories/bulk/", found, too_wide, where)


def test_every_dashboard_page_in_both_themes_and_widths_fits_and_passes_axe(page, live_server):
    w = _world()
    urls = [u for build in PAGES.values() for u in build(w)]
    started = time.monotonic()
    page.context.add_init_script(path=str(AXE))  # axe in every document, no extra request per page
    sign_in(page, "demo", "demo")
    # The check can fail: text of too little contrast is found (else an empty answer proves nothing).
    page.evaluate("""() => { const p = document.createElement("p"); p.id = "axe-probe"; p.textContent = "probe";
      p.style.cssText = "color:#777;background:#888"; document.querySelector("main").append(p); }""")
    assert any(v.startswith("color-contrast (serious)") for v in page.evaluate(AXE_RUN))
    found: dict[str, list] = {}
    too_wide: dict[str, list] = {}
    visits = 0
    for theme in ("light", "dark"):
        page.set_viewport_size(DESKTOP)
        page.goto("/glossary/")
        with page.expect_navigation():
            page.get_by_label("Theme").select_option(theme)
        expect(page.locator("html")).to_have_attribute("data-theme", theme)
        for size, name in ((DESKTOP, "1440"), (PHONE, "390")):
            page.set_viewport_size(size)
            where = f"{theme}@{name}"
            for url in urls:
                response = page.goto(url)
                assert response is not None and response.status == 200, (url, response and response.status)
                settle(page)
                assert page.evaluate("document.documentElement.dataset.theme") == theme, url
                _check(page, url, found, too_wide, where)
                visits += 1
            _actions(page, w, found, too_wide, where)
            visits += 3
    elapsed = time.monotonic() - started
    print(
        f"\naccessibility sweep: {visits} page visits ({len(urls) + 3} pages × 2 themes × 2 widths) in {elapsed:.1f} s"
    )
    assert (too_wide, found) == ({}, {}), json.dumps([too_wide, found], indent=1, ensure_ascii=False)
