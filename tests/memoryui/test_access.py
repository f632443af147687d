import re

import pytest
from django.urls import reverse

PAGES = ["overview", "memories", "timeline", "graph", "turns", "review", "governance", "evaluation"]


@pytest.mark.parametrize("name", PAGES)
def test_every_page_sends_an_anonymous_visitor_to_sign_in(client, db, name):
    response = client.get(reverse(f"dashboard:{name}"))
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")


def test_sign_in_page_has_labelled_fields_and_signs_in(client, reviewer):
    page = client.get("/accounts/login/")
    assert page.status_code == 200
    assert b'<label for="id_username">' in page.content and b'<label for="id_password">' in page.content
    response = client.post("/accounts/login/", {"username": "rami", "password": "pw-rami"})
    assert response.status_code == 302 and response["Location"] == "/"


def test_wrong_password_says_so(client, reviewer):
    response = client.post("/accounts/login/", {"username": "rami", "password": "nope"})
    assert response.status_code == 200
    assert b"did not match" in response.content


@pytest.mark.parametrize("name", PAGES)
def test_every_page_renders_for_a_signed_in_reviewer(reviewer_client, history, name):
    response = reviewer_client.get(reverse(f"dashboard:{name}"))
    assert response.status_code == 200
    assert b"Sign out" in response.content


@pytest.mark.parametrize("name", PAGES)
def test_a_scope_outside_the_grants_is_not_found_on_every_page(reviewer_client, history, name):
    response = reviewer_client.get(reverse(f"dashboard:{name}"), {"scope": "acme/payments"})
    assert response.status_code == 404
    assert b"not_found" in response.content
    unknown = reviewer_client.get(reverse(f"dashboard:{name}"), {"scope": "acme/nowhere"})
    assert unknown.status_code == 404


def test_times_are_shown_in_the_time_zone_the_browser_reported(reviewer_client, history):
    reviewer_client.cookies["tz"] = "Asia/Tokyo"
    body = reviewer_client.get(reverse("dashboard:memory", args=[history["second"].pk])).content.decode()
    assert "JST" in body
    reviewer_client.cookies["tz"] = "Not/AZone"
    assert reviewer_client.get(reverse("dashboard:memory", args=[history["second"].pk])).status_code == 200


def test_vendored_scripts_are_served_from_static(reviewer_client, history, settings):
    from django.contrib.staticfiles import finders

    assert finders.find("vendor/plotly-basic-4.1.1.min.js")
    assert finders.find("vendor/htmx-2.0.11.min.js")
    body = reviewer_client.get(reverse("dashboard:timeline")).content
    assert re.search(rb"/static/vendor/plotly-basic-4\.1\.1\.min\.[0-9a-f]{12}\.js", body)
    assert re.search(rb"/static/vendor/htmx-2\.0\.11\.min\.[0-9a-f]{12}\.js", body)
