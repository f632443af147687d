"""Static files as the pages name them: hashed names, compressed bodies, a long cache; and the chart library
only on the pages that draw a chart with it."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

TEN_YEARS = "max-age=315360000"
BUNDLE = re.compile(r'src="(/static/vendor/plotly-basic-4\.1\.1\.min\.[0-9a-f]{12}\.js)"')


def _body(response) -> bytes:
    return b"".join(response.streaming_content) if response.streaming else response.content


def test_the_chart_bundle_is_served_compressed_under_a_hashed_name_with_a_ten_year_cache(
    reviewer_client, history
):
    page = reviewer_client.get(reverse("dashboard:timeline")).content.decode()
    url = BUNDLE.search(page).group(1)
    plain = reviewer_client.get(url)
    raw = _body(plain)
    assert plain.status_code == 200 and raw.startswith(b"/**\n* plotly.js (basic - minified) v4.1.1")
    for encoding in ("br", "gzip"):
        response = reviewer_client.get(url, HTTP_ACCEPT_ENCODING=encoding)
        assert response["Content-Encoding"] == encoding
        assert TEN_YEARS in response["Cache-Control"] and "immutable" in response["Cache-Control"]
        assert len(_body(response)) < len(raw) / 2.5
        assert "Accept-Encoding" in response["Vary"]
    # a page's own script and stylesheet are hashed and cached the same way
    for asset in re.findall(r'(?:src|href)="(/static/(?:js|css)/[^"]+)"', page):
        assert re.search(r"\.[0-9a-f]{12}\.(js|css)$", asset), asset
        response = reviewer_client.get(asset, HTTP_ACCEPT_ENCODING="gzip, br")
        assert response.status_code == 200 and response["Content-Encoding"] == "br", asset
        assert TEN_YEARS in response["Cache-Control"], asset


@pytest.mark.parametrize(
    "name", ["overview", "memories", "turns", "review", "governance", "glossary", "memory"]
)
def test_a_page_without_a_plotly_chart_does_not_load_the_chart_library(reviewer_client, history, name):
    url = reverse(f"dashboard:{name}", args=[history["second"].pk] if name == "memory" else [])
    body = reviewer_client.get(url).content.decode()
    assert "<main" in body and "plotly" not in body.lower()


@pytest.mark.parametrize("name", ["timeline", "graph"])
def test_a_page_with_a_chart_loads_the_partial_bundle_not_the_whole_library(reviewer_client, history, name):
    body = reviewer_client.get(reverse(f"dashboard:{name}")).content.decode()
    assert BUNDLE.search(body) and "plotly.min.js" not in body
