"""The charts drawn on the server as SVG (memoryui/svgcharts.py): the overview's activation histogram and a
memory's activation curve, with what each shows, and who may ask for them."""

from __future__ import annotations

import re

from django.urls import reverse

from governance.services.memory import memory_reinforce


def test_the_histogram_fragment_draws_a_bar_per_bin_with_its_count_and_the_threshold(
    reviewer_client, history
):
    data = reviewer_client.get(reverse("dashboard:activation-histogram")).json()
    body = reviewer_client.get(reverse("dashboard:activation-histogram-chart")).content.decode()
    assert 'id="activation-histogram"' in body and "data-ready" in body and "<svg" in body
    assert body.count('class="bar ') == len(data["counts"])
    titles = re.findall(r"<title>activation [^:]+: (\d+) memor", body)
    assert sum(map(int, titles)) == sum(data["counts"]) == 3  # the sibling scope's secret is not counted
    assert f"cold threshold {data['threshold']:.2g}" in body
    ticks = re.findall(r'<span style="bottom: [\d.]+%">([^<]+)</span>', body)
    assert all(float(t).is_integer() for t in ticks)  # counts are whole: so are the axis' steps


def test_the_overview_asks_for_the_histogram_after_it_is_shown(reviewer_client, history):
    body = reviewer_client.get(reverse("dashboard:overview")).content.decode()
    assert (
        f'hx-get="{reverse("dashboard:activation-histogram-chart")}' in body and 'hx-trigger="load"' in body
    )
    assert "<svg" not in body  # the counts never wait for the histogram's query


def test_the_curve_fragment_has_the_line_each_reinforcement_and_each_change_of_state(
    reviewer_client, history
):
    first = history["first"]
    memory_reinforce(memory_ids=[first.pk], weight=0.5, reason="recall", actor=None)
    body = reviewer_client.get(reverse("dashboard:memory-activation-chart", args=[first.pk])).content.decode()
    assert 'id="activation-curve"' in body and 'class="curve"' in body
    assert body.count('<path class="dot"') == 1 and "reinforced, weight 0.5" in body
    assert "→ superseded" in body and "cold threshold" in body
    points = re.search(r'points="([^"]+)"', body).group(1).split()
    assert len(points) > 10 and all(0 <= float(v) <= 1000 for p in points for v in p.split(","))


def test_a_memory_out_of_reach_has_no_curve_and_a_visitor_is_sent_to_sign_in(
    reviewer_client, client, history
):
    secret = history["secret"]  # in a sibling scope the reviewer holds no grant on
    response = reviewer_client.get(reverse("dashboard:memory-activation-chart", args=[secret.pk]))
    assert response.status_code == 404 and b"<svg" not in response.content
    for url in (
        reverse("dashboard:memory-activation-chart", args=[history["second"].pk]),
        reverse("dashboard:activation-histogram-chart"),
    ):
        response = client.get(url)
        assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")
