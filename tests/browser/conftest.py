"""Browser tests: Playwright (sync API) driving Debian's Chromium against pytest-django's live server."""

from __future__ import annotations

import os
import shutil

import pytest

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]

# Playwright's sync API runs an event loop in this thread; Django refuses ORM calls from a thread with a
# running loop unless told that this is deliberate (the test itself, not a request, makes those calls).
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


def pytest_collection_modifyitems(items):
    for item in items:
        if "tests/browser/" in str(item.fspath):
            item.add_marker(pytest.mark.browser)


# Module scope, not session: while Playwright's sync API is open its event loop runs in this thread, and
# every later test that calls asyncio.run() (the async client, the MCP and LangGraph tests) would fail.
@pytest.fixture(scope="module")
def browser():
    if not (os.path.exists(CHROMIUM) or shutil.which("chromium")):
        pytest.skip("Debian's chromium is not installed (apt-get install chromium); .ci/run installs it")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield browser
        browser.close()


@pytest.fixture
def page(browser, live_server):
    context = browser.new_context(
        viewport={"width": 1440, "height": 900}, timezone_id="Europe/Berlin", base_url=live_server.url
    )
    context.set_default_timeout(15_000)
    page = context.new_page()
    yield page
    context.close()


def sign_in(page, username: str, password: str) -> None:
    page.goto("/accounts/login/")
    page.get_by_label("User name").fill(username)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url("**/")
    page.wait_for_load_state("networkidle")


def nav(page, name: str) -> None:
    page.get_by_role("navigation", name="Pages").get_by_role("link", name=name, exact=True).click()
    page.wait_for_load_state("networkidle")
