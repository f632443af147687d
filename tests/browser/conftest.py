"""Browser tests: Playwright (sync API) driving Debian's Chromium against pytest-django's live server."""

from __future__ import annotations

import os
import re
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


# Every request a page's scripts start (fetch, and XMLHttpRequest, which htmx uses), counted from the
# document's first script on, so settle() can wait for the requests a page makes as it loads. Playwright's
# "networkidle" instead waits until no request has run for 500 ms, on every page: ~0.5 s of idle wall time
# per page visited, ~120 visits in the browser tests. A fetch counts as ended once its body has arrived.
TRACK_REQUESTS = """(() => {
  let open = 0, last = performance.now();
  const end = () => { open -= 1; last = performance.now(); };
  const fetch = window.fetch;
  window.fetch = function (...args) {
    open += 1; last = performance.now();
    return fetch.apply(this, args).then(
      (response) => { response.clone().arrayBuffer().then(end, end); return response; },
      (error) => { end(); throw error; });
  };
  const send = XMLHttpRequest.prototype.send;
  XMLHttpRequest.prototype.send = function (...args) {
    open += 1; last = performance.now();
    this.addEventListener("loadend", end, { once: true });
    return send.apply(this, args);
  };
  window.__requestsSettled = (quietMs) =>
    document.readyState === "complete" && open === 0 && performance.now() - last >= quietMs;
})();"""
SETTLED_MS = 100  # after the last request ended: the handlers that run on its answer, and any they start


@pytest.fixture
def page(browser, live_server):
    context = browser.new_context(
        viewport={"width": 1440, "height": 900}, timezone_id="Europe/Berlin", base_url=live_server.url
    )
    context.set_default_timeout(15_000)
    context.add_init_script(TRACK_REQUESTS)
    page = context.new_page()
    yield page
    # No request of the page's scripts still being served when the test's data is flushed: a fetch the
    # test did not wait for (the review queue loads each item's similar memories after the page) read the
    # tables while the flush truncated them, a deadlock that failed the teardown and left the data for the
    # next test.
    from playwright.sync_api import Error as PlaywrightError

    try:
        settle(page)
    except PlaywrightError:  # the page is gone or never settles: nothing more to wait for
        pass
    context.close()


def sign_in(page, username: str, password: str) -> None:
    page.goto("/accounts/login/")
    page.get_by_label("User name").fill(username)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url("**/")
    settle(page)


def settle(page) -> None:
    """Wait until the page (navigated to and loaded) has no request of its scripts open, SETTLED_MS after
    the last one ended: what the tests waited for with "networkidle", without its 500 ms of idle time. A
    context made without the counter (a test's own, e.g. with JavaScript off) waits for "networkidle"."""
    if page.evaluate("() => typeof window.__requestsSettled") != "function":
        page.wait_for_load_state("networkidle")
        return
    page.wait_for_function(f"() => window.__requestsSettled({SETTLED_MS})")


def nav(page, name: str) -> None:
    """Follow the menu's link `name` (its accessible name may go on with a count: "Review 3 awaiting your
    decision")."""
    # Playwright writes the pattern out between slashes: a "/" of the name (Export/import) is escaped too.
    escaped = re.escape(name).replace("/", r"\/")
    link = re.compile(rf"^{escaped}(\s+\d+ awaiting your decision)?$")
    with page.expect_navigation():
        page.get_by_role("navigation", name="Pages").get_by_role("link", name=link).click()
    settle(page)
