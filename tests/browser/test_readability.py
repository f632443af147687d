"""Readability in Chromium: the graph draws parallel relations as separate curves, the dark theme follows the
system's colour scheme (pages and charts), and every text on the main pages has a contrast of at least 4.5:1
(WCAG ratio computed here from the computed colours) in the light and the dark theme."""

import re

import pytest
from playwright.sync_api import expect

from governance.services.memory import memory_reinforce, memory_supersede
from governance.services.relation import relation_add
from tests.browser.conftest import settle, sign_in
from tests.memoryui.conftest import remember

# For every element with its own visible text: its colour, the first opaque background behind it (walking
# up the ancestors, blending nothing: the dashboard has no translucent text backgrounds), and the ratio.
CONTRAST_JS = """
() => {
  const rgb = s => (s.match(/[\\d.]+/g) || []).map(Number);
  const lum = c => { const f = v => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
                     return 0.2126 * f(c[0]) + 0.7152 * f(c[1]) + 0.0722 * f(c[2]); };
  const background = el => {
    for (let e = el; e; e = e.parentElement) {
      const c = rgb(getComputedStyle(e).backgroundColor);
      if (c.length >= 3 && (c.length < 4 || c[3] > 0.5)) { return c; }
    }
    return [255, 255, 255];
  };
  const out = [];
  for (const el of document.querySelectorAll("body *")) {
    if (el.closest("svg, script, style, noscript, .js-plotly-plot, [hidden], .sr-list, datalist, option")) { continue; }
    const own = Array.from(el.childNodes).some(n => n.nodeType === 3 && n.textContent.trim());
    if (!own) { continue; }
    const r = el.getBoundingClientRect(), st = getComputedStyle(el);
    if (r.width === 0 || r.height === 0 || st.visibility === "hidden" || st.display === "none") { continue; }
    const fg = rgb(st.color), bg = background(el);
    const [a, b] = [lum(fg), lum(bg)].sort((x, y) => y - x);
    out.push({ text: el.textContent.trim().slice(0, 40), tag: el.tagName, cls: el.className && String(el.className),
               fg: st.color, bg: "rgb(" + bg.slice(0, 3).join(",") + ")", ratio: (a + 0.05) / (b + 0.05) });
  }
  return out;
}
"""


def _luminance(css: str) -> float:
    r, g, b = (int(v) / 255 for v in re.findall(r"[\d.]+", css)[:3])
    f = lambda v: v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4  # noqa: E731
    return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b)


@pytest.fixture
def readable_world(project_scope, owner):
    first = remember(project_scope, "Export slides as PDF", kind="convention", key="export_format")
    second = memory_supersede(
        memory_id=first.pk,
        text="Export slides as PPTX",
        reason="user changed it",
        source_kind="user",
        actor=None,
    )
    a = remember(project_scope, "Slides use the blue theme", key="theme")
    b = remember(project_scope, "Slides use the green theme", kind="semantic")
    relation_add(source_id=b.pk, target_id=a.pk, kind="contradicts", actor=None)
    relation_add(source_id=b.pk, target_id=a.pk, kind="supersedes", actor=None)
    memory_reinforce(memory_ids=[a.pk, second.pk], weight=0.6, reason="recall", actor=None)
    return {"a": a, "b": b}


def _drawn_edge_curves(page) -> int:
    """Line segments Plotly drew in the edge traces: each edge is one 'M…' sub-path of a lines trace."""
    return page.evaluate("""() => {
      const gd = document.getElementById('graph-chart');
      let n = 0;
      gd.querySelectorAll('.scatterlayer .trace').forEach((tr, i) => {
        const data = gd.data[i];
        if (!data || !data.meta || !data.meta.edges || data.visible === 'legendonly') { return; }
        tr.querySelectorAll('path.js-line').forEach(p => { n += (p.getAttribute('d').match(/M/g) || []).length; });
      });
      return n;
    }""")


def test_the_graph_draws_parallel_relations_as_separate_curves_with_a_filter_and_search(
    page, owner, readable_world
):
    sign_in(page, "olivia", "pw-olivia")
    page.goto("/graph/?scope=acme/slides")
    chart = page.locator("#graph-chart[data-ready]")
    expect(chart).to_have_attribute("data-edges", "3")  # the two between the pair, and PPTX superseding PDF
    assert _drawn_edge_curves(page) == 3
    paths = page.evaluate("""() => Array.from(document.querySelectorAll('#graph-chart .scatterlayer .trace path.js-line'))
                              .map(p => p.getAttribute('d'))""")
    assert len(set(paths)) == len(paths)  # no two edges share a drawing
    page.get_by_label("contradicts").uncheck()
    page.wait_for_function(
        "() => document.getElementById('graph-chart').data.some(t => t.visible === 'legendonly')"
    )
    assert _drawn_edge_curves(page) == 2
    page.get_by_label("Find a memory").fill("green")
    expect(chart).to_have_attribute("data-found", "1")
    expect(page.locator("#graph-summary")).to_contain_text("1 memory matches “green”")
    # around one memory, from its page
    page.goto(f"/memories/{readable_world['a'].pk}/")
    page.get_by_role("link", name="See the graph around this memory").click()
    expect(
        page.get_by_role("heading", name=re.compile(f"around memory #{readable_world['a'].pk}"))
    ).to_be_visible()
    expect(page.locator("#graph-chart[data-ready]")).to_have_attribute("data-edges", "2")


def test_the_dark_theme_follows_the_system_and_the_charts_follow_it(page, owner, readable_world):
    sign_in(page, "olivia", "pw-olivia")
    page.goto("/")
    expect(page.locator("#activation-histogram[data-ready]")).to_have_count(1)
    light_bg = page.evaluate("getComputedStyle(document.body).backgroundColor")
    assert _luminance(light_bg) > 0.8
    page.emulate_media(color_scheme="dark")
    page.reload()
    expect(page.locator("#activation-histogram[data-ready]")).to_have_count(1)
    body = page.evaluate(
        "[getComputedStyle(document.body).backgroundColor, getComputedStyle(document.body).color]"
    )
    assert _luminance(body[0]) < 0.05 and _luminance(body[1]) > 0.7
    card = page.evaluate("getComputedStyle(document.querySelector('.card')).backgroundColor")
    assert _luminance(card) < 0.05
    # The server-drawn histogram's plot area and tick labels take the theme's colours (CSS variables).
    plot_bg = page.evaluate("getComputedStyle(document.querySelector('#activation-histogram .bg')).fill")
    tick = page.evaluate(
        "getComputedStyle(document.querySelector('#activation-histogram .svgchart-xticks span')).color"
    )
    assert _luminance(plot_bg) < 0.05 and _luminance(tick) > 0.3
    page.goto("/timeline/")
    expect(page.locator("#timeline-chart[data-ready]")).to_have_count(1)
    assert _luminance(page.evaluate("document.querySelector('#timeline-chart .bg').style.fill")) < 0.05


PAGES = [
    "/",
    "/memories/",
    "/timeline/",
    "/graph/",
    "/turns/",
    "/review/",
    "/governance/grants/",
    "/governance/audit/",
    "/governance/propagation/",
    "/evaluation/",
    "/glossary/",
]


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_every_text_on_the_main_pages_has_a_contrast_of_at_least_4_5(page, owner, readable_world, scheme):
    page.emulate_media(color_scheme=scheme)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    sign_in(page, "olivia", "pw-olivia")
    failures, checked = [], 0
    for url in PAGES:
        page.goto(url)
        settle(page)
        for item in page.evaluate(CONTRAST_JS):
            checked += 1
            if item["ratio"] < 4.5:
                failures.append(
                    (
                        url,
                        round(item["ratio"], 2),
                        item["text"],
                        item["tag"],
                        item["cls"],
                        item["fg"],
                        item["bg"],
                    )
                )
    assert checked > 200
    assert failures == []
    assert errors == []  # and no script error on any of them
