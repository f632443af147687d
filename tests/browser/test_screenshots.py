"""Screenshots of the main pages with the demo workspace, at 1440 px and (`phone-*.png`) at 390 px. Also a smoke test: every page loads in Chromium
without a JavaScript error and its charts draw.

The shots go to a temporary folder, so a test run leaves the checkout clean; with UPDATE_SCREENSHOTS=1
they replace docs/screenshots/ (used in the README): `UPDATE_SCREENSHOTS=1 make test` or
`UPDATE_SCREENSHOTS=1 python -m pytest tests/browser/test_screenshots.py`."""

import os
from pathlib import Path

from django.conf import settings

from devtools.demo import ensure_demo_user, load_demo
from devtools.evaluation.generator import SUITES
from devtools.evaluation.runner import store_run
from governance.models import Memory, Outbox, Scope
from governance.recall import assemble_context
from tests.browser.conftest import settle, sign_in
from tests.conftest import wait_for

DOCS = Path(settings.BASE_DIR) / "docs" / "screenshots"


def test_screenshots_of_the_main_pages(smoke_suite_run, page, celery_worker, tmp_path):
    OUT = DOCS if os.environ.get("UPDATE_SCREENSHOTS") == "1" else tmp_path  # noqa: N806
    load_demo()
    demo = ensure_demo_user()
    slides = Scope.objects.get(path="demo/slides")
    for query in ("export the deck for the client", "export the deck again, final version"):
        turn = assemble_context(
            principal=demo, scope=slides, query=query, budget_tokens=300, session="demo-s1"
        )
    # The real worker carries every change to the derived stores, so the pages show a settled system.
    wait_for(lambda: not Outbox.objects.filter(state="pending").exists(), timeout=300)
    # A real (small) run of the evaluation suite, so the evaluation page shows what it is for: the session's
    # smoke run (every strategy, through the real pipeline; tests/conftest.py), stored as `evaluate` does.
    store_run(smoke_suite_run[0], per_cell=SUITES["smoke"])
    fact = (
        Memory.objects.filter(scope=slides, key__isnull=False, status="active").order_by("-revision").first()
    )
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    sign_in(page, "demo", "demo")
    OUT.mkdir(parents=True, exist_ok=True)
    shots = {
        "overview": "/",
        "memories": "/memories/?scope=demo",
        "memory": f"/memories/{fact.pk}/",
        "timeline": "/timeline/?scope=demo&days=30",
        "graph": "/graph/?scope=demo",
        "turns": "/turns/?scope=demo",
        "turn": f"/turns/{turn['turn_id']}/",
        "review": "/review/?scope=demo",
        "governance": "/governance/?scope=demo",
        "governance-audit": "/governance/audit/?scope=demo",
        "governance-propagation": "/governance/propagation/?scope=demo",
        "glossary": "/glossary/",
        "evaluation": "/evaluation/",
        "members": "/workspaces/demo/members/",
        "scope-settings": f"/scopes/{slides.pk}/settings/",
    }
    for name, url in shots.items():
        page.goto(url)
        settle(page)
        for chart in page.locator(".chart[data-src], .chart[data-inline]").all():
            if chart.is_visible():
                chart.page.wait_for_function(
                    "el => el.dataset.ready === '1' || el.hidden", arg=chart.element_handle()
                )
        if name == "turn":
            page.get_by_role("button", name="Replay now").click()
            page.locator("#replay .replay-result").wait_for()
        if name == "review":
            # The first item current (j), its similar memories in force loaded inline.
            page.keyboard.press("j")
            page.wait_for_function(
                "(b => !b || !/Loading|Not loaded/.test(b.textContent))"
                "(document.querySelector('.review-item.current .similar-body'))"
            )
        page.screenshot(path=str(OUT / f"{name}.png"), full_page=True)
        assert (OUT / f"{name}.png").stat().st_size > 10_000
    # The same pages on a phone (390 px): cards instead of tables, the header folded into its menu.
    page.set_viewport_size({"width": 390, "height": 844})
    for name in ("overview", "memories", "turns", "turn", "review", "governance", "members"):
        page.goto(shots[name])
        settle(page)
        page.screenshot(path=str(OUT / f"phone-{name}.png"), full_page=True)
        assert (OUT / f"phone-{name}.png").stat().st_size > 10_000
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    assert errors == []
