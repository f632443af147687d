"""Every GET page of the dashboard is in the browser's accessibility sweep (tests/browser/sweep_pages.py), and
every route left out is no page: a POST-only action answers GET with 405, a chart feed answers JSON."""

from django.urls import URLPattern, get_resolver, reverse

from tests.browser.sweep_pages import ACTIONS, FRAGMENTS, JSON, NOT_PAGES, PAGES, POST


def _dashboard_routes() -> dict[str, URLPattern]:
    found = {}
    for entry in get_resolver().url_patterns:
        if getattr(entry, "namespace", None) == "dashboard":
            found |= {p.name: p for p in entry.url_patterns if isinstance(p, URLPattern)}
    return found


def _url(pattern: URLPattern) -> str:
    args = [
        1 if conv.__class__.__name__ == "IntConverter" else "acme"
        for conv in pattern.pattern.converters.values()
    ]
    return reverse(f"dashboard:{pattern.name}", args=args)


def test_every_dashboard_route_is_swept_or_listed_with_a_reason():
    routes = set(_dashboard_routes())
    groups = [set(PAGES), set(ACTIONS), set(FRAGMENTS), set(NOT_PAGES)]
    listed = set().union(*groups)
    assert routes - listed == set(), "a new dashboard route: add it to the sweep, or to NOT_PAGES with why"
    assert listed - routes == set(), "the sweep names a route that no longer exists"
    assert sum(len(g) for g in groups) == len(listed), "a route in two lists"
    assert all(NOT_PAGES.values()) and all(FRAGMENTS.values()) and all(ACTIONS.values())


def test_the_routes_left_out_of_the_sweep_are_no_pages(owner_client, project_scope):
    routes = _dashboard_routes()
    for name, reason in NOT_PAGES.items():
        response = owner_client.get(_url(routes[name]))
        if reason == POST:
            assert response.status_code == 405, name
        elif reason == JSON:
            assert response["Content-Type"].startswith("application/json"), name
        else:
            assert not response["Content-Type"].startswith("text/html") or response.status_code != 200, name
    for name, reason in ACTIONS.items():
        if reason.startswith("POST"):
            assert owner_client.get(_url(routes[name])).status_code == 405, name


def test_the_fragments_are_no_pages_of_their_own(owner_client, history):
    routes = _dashboard_routes()
    for name in [*FRAGMENTS, "memory-link-choices"]:
        response = owner_client.get(_url(routes[name]).replace("/1/", f"/{history['second'].pk}/"))
        assert response.status_code == 200, name
        assert "<html" not in response.content.decode(), name
