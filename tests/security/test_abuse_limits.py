"""A careless or hostile client costs bounded work: sign-in locks out after repeated failures, API
tokens are throttled per bucket with 429 and Retry-After, oversized bodies get 413 and deeply nested JSON
400, all in the API's error shape; the memory list searches through the keyword index and never counts
past its cap."""

from __future__ import annotations

import json

import pytest
from django.core.cache import cache
from django.test import Client, override_settings
from django.urls import reverse

from governance.api.limits import BODY_TOO_LARGE, NESTING_TOO_DEEP, json_depth_exceeds
from tests.conftest import token_client

MEMORY = {
    "scope": "acme/slides",
    "kind": "semantic",
    "text": "Slides use the 16:9 layout.",
    "source": {"kind": "user"},
}
FACTS = [
    dict(MEMORY, text=text)
    for text in (
        "Slides use the 16:9 layout.",
        "Invoices are sent on the first Monday of the month.",
        "The client's brand colour is teal.",
        "Deploys are frozen during the quarterly audit.",
    )
]


def rates(**overrides) -> dict:
    from django.conf import settings

    return {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {**settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"], **overrides},
    }


# --- Sign-in lock-out (django-axes) -----------------------------------------------------------------


@pytest.fixture
def axes_clean(db):
    from axes.models import AccessAttempt

    AccessAttempt.objects.all().delete()
    yield
    AccessAttempt.objects.all().delete()


@override_settings(AXES_FAILURE_LIMIT=3)
def test_sign_in_locks_out_after_repeated_failures_even_with_the_right_password(owner, axes_clean):
    client = Client()
    url = reverse("login")
    for _ in range(2):
        wrong = client.post(url, {"username": "olivia", "password": "guess"})
        assert wrong.status_code == 200 and "did not match" in wrong.content.decode()
    locked = client.post(url, {"username": "olivia", "password": "guess"})
    assert locked.status_code == 429
    assert "Too many failed sign-ins" in locked.content.decode()
    assert "axes_reset_username" in locked.content.decode()
    # Locked out: the right password does not get in either, until the cool-off or a reset.
    right = client.post(url, {"username": "olivia", "password": "pw-olivia"})
    assert right.status_code == 429
    assert "_auth_user_id" not in client.session


@override_settings(AXES_FAILURE_LIMIT=3)
def test_a_lock_out_is_per_user_name_and_lifted_by_the_documented_reset(owner, reviewer, axes_clean):
    from django.core.management import call_command

    client = Client()
    url = reverse("login")
    for _ in range(3):
        client.post(url, {"username": "olivia", "password": "guess"})
    # Another user from the same address is not locked out by olivia's failures.
    other = client.post(url, {"username": "rami", "password": "pw-rami"})
    assert other.status_code == 302
    Client().post(url, {"username": "olivia", "password": "pw-olivia"})  # still locked (same address)
    call_command("axes_reset_username", "olivia")
    fresh = Client()
    assert fresh.post(url, {"username": "olivia", "password": "pw-olivia"}).status_code == 302
    assert fresh.session.get("_auth_user_id")


def test_the_lockout_counts_the_address_the_trusted_proxy_saw_not_one_the_client_claims():
    from django.test import RequestFactory

    from memoryui.auth_backends import client_ip

    request = RequestFactory().post(
        "/accounts/login/", REMOTE_ADDR="10.0.0.1", HTTP_X_FORWARDED_FOR="6.6.6.6, 203.0.113.7"
    )
    assert client_ip(request) == "10.0.0.1"  # no proxy configured: the header is the client's word
    with override_settings(REST_FRAMEWORK=rates() | {"NUM_PROXIES": 1}):
        assert client_ip(request) == "203.0.113.7"  # the proxy appended what it saw; 6.6.6.6 was claimed


def test_test_client_login_still_works_with_the_lockout_backend(owner):
    # Code that authenticates without a request (the test client, commands) is not counted nor refused.
    assert Client().login(username="olivia", password="pw-olivia")


# --- API throttles (DRF) ----------------------------------------------------------------------------


@pytest.mark.django_db
def test_an_api_token_over_its_write_rate_gets_429_with_retry_after(agent):
    cache.clear()
    client = token_client(agent)
    with override_settings(REST_FRAMEWORK=rates(write="3/min")):
        # Distinct facts: a repeat of the same text is a near-duplicate (200, reinforced), not a new row.
        codes = [client.post("/api/v1/memories", fact, format="json").status_code for fact in FACTS[:3]]
        assert codes == [201, 201, 201]
        throttled = client.post("/api/v1/memories", FACTS[3], format="json")
        assert throttled.status_code == 429
        assert 0 < int(throttled["Retry-After"]) <= 60
        body = throttled.json()
        assert body["error"] == "throttled" and "available in" in body["message"]
        # Buckets are separate: the token may still read.
        assert client.get("/api/v1/memories").status_code == 200
        # And the limit is per token: another token of another principal is not affected.
        assert token_client(agent).post("/api/v1/memories", FACTS[3], format="json").status_code == 201


@pytest.mark.django_db
def test_context_and_governance_calls_have_their_own_rates(owner, project_scope):
    cache.clear()
    client = token_client(owner)
    body = {"scope": "acme/slides", "query": "which layout?", "budget_tokens": 500}
    with override_settings(REST_FRAMEWORK=rates(context="2/min", governance="1/min")):
        assert client.post("/api/v1/context", body, format="json").status_code == 200
        assert (
            client.post(
                "/api/v1/recall", {"scope": "acme/slides", "query": "layout"}, format="json"
            ).status_code
            == 200
        )
        assert client.post("/api/v1/context", body, format="json").status_code == 429
        assert client.get("/api/v1/review").status_code == 200
        assert client.get("/api/v1/review").status_code == 429
        assert client.get("/api/v1/memories").status_code == 200  # plain reads: their own bucket


@pytest.mark.django_db
def test_a_throttled_request_costs_one_round_trip_to_redis_and_the_window_slides(agent, monkeypatch):
    """DRF's throttle reads and writes back a pickled list (two round trips per API call); this one trims,
    counts and adds in one script (governance.api.limits.SLIDING_LOG), with the same sliding window."""
    import threading
    import time

    from redis.connection import AbstractConnection

    cache.clear()
    client = token_client(agent)
    sent: list[int] = []
    real_send = AbstractConnection.send_packed_command
    # Only this thread's commands: the test client serves the request here. Other threads of this test
    # process talk to the same Redis on their own clock (the reinforcement publisher, governance.recall.
    # reinforce, sending what an earlier test queued; the session's Celery worker polling), and one of
    # their commands landing inside a request was counted as the request's (seen once in CI: (200, 2)).
    serving = threading.get_ident()

    def counted(self, command, check_health=True):
        if threading.get_ident() == serving:
            sent.append(1)
        return real_send(self, command, check_health)

    monkeypatch.setattr(AbstractConnection, "send_packed_command", counted)

    def round_trips(**bucket) -> tuple[int, int]:
        with override_settings(REST_FRAMEWORK=rates(**bucket)):
            sent.clear()
            status = client.get("/api/v1/memories").status_code
            return status, len(sent)

    round_trips(read="3/s")  # the script's first run loads it into Redis
    unthrottled = round_trips(read=None)[1]  # what the request sends to Redis besides the throttle
    cache.clear()
    assert [round_trips(read="2/s") for _ in range(3)] == [
        (200, unthrottled + 1),
        (200, unthrottled + 1),
        (429, unthrottled + 1),
    ]
    time.sleep(1.05)  # the first two fall out of the window
    assert round_trips(read="2/s")[0] == 200


def test_a_rate_that_does_not_parse_stops_the_settings_with_its_name(monkeypatch):
    from memoryui.settings.env import ImproperlyConfiguredValue, env_rate

    monkeypatch.setenv("API_RATE_WRITE", "lots")
    with pytest.raises(ImproperlyConfiguredValue, match="API_RATE_WRITE"):
        env_rate("API_RATE_WRITE", "240/min")
    monkeypatch.setenv("API_RATE_WRITE", "off")
    assert env_rate("API_RATE_WRITE", "240/min") is None


# --- Body size and JSON nesting ---------------------------------------------------------------------


@pytest.mark.django_db
def test_deeply_nested_json_is_a_400_with_its_own_code_not_a_500(agent):
    client = token_client(agent)
    deep = "[" * 5000 + "]" * 5000
    response = client.generic("POST", "/api/v1/memories", deep, content_type="application/json")
    assert response.status_code == 400
    assert response.json() == {"error": "nesting_too_deep", "message": NESTING_TOO_DEEP.format(limit=32)}


@pytest.mark.django_db
def test_nesting_inside_a_valid_body_is_counted_and_brackets_in_strings_are_not(agent):
    client = token_client(agent)
    nested: object = "x"
    for _ in range(40):
        nested = {"a": nested}
    body = {**MEMORY, "source": {"kind": "user", "ref": "[[[[" * 100}, "extra": nested}
    response = client.post("/api/v1/memories", body, format="json")
    assert response.status_code == 400 and response.json()["error"] == "nesting_too_deep"
    ok = client.post(
        "/api/v1/memories", {**MEMORY, "source": {"kind": "user", "ref": "[{" * 200}}, format="json"
    )
    assert ok.status_code == 201
    assert not json_depth_exceeds(json.dumps({"t": "]" * 100 + '\\"[' * 100}), 2)


@pytest.mark.django_db
@override_settings(DATA_UPLOAD_MAX_MEMORY_SIZE=10_000)
def test_a_body_over_the_limit_is_refused_with_413_in_the_api_error_shape(agent):
    client = token_client(agent)
    response = client.post("/api/v1/memories", {**MEMORY, "text": "x" * 20_000}, format="json")
    assert response.status_code == 413
    assert response.json() == {"error": "request_too_large", "message": BODY_TOO_LARGE.format(limit=10_000)}


@override_settings(DATA_UPLOAD_MAX_MEMORY_SIZE=10_000)
def test_a_dashboard_post_over_the_limit_is_refused_with_413_before_it_is_read(owner):
    response = Client().post(reverse("login"), {"username": "olivia", "password": "x" * 20_000})
    assert response.status_code == 413
    assert response.content.decode() == BODY_TOO_LARGE.format(limit=10_000)


@pytest.mark.django_db
@override_settings(DATA_UPLOAD_MAX_MEMORY_SIZE=10_000)
def test_the_json_parser_refuses_more_bytes_than_the_limit_even_when_the_declared_length_is_small(agent):
    from io import BytesIO

    from rest_framework.exceptions import APIException

    from governance.api.limits import BoundedJSONParser

    class Req:
        META = {"CONTENT_LENGTH": "10"}

    with pytest.raises(APIException) as raised:
        BoundedJSONParser().parse(BytesIO(b'"' + b"x" * 20_000 + b'"'), parser_context={"request": Req()})
    assert raised.value.status_code == 413


@pytest.mark.django_db
def test_a_body_that_is_not_json_is_a_400(agent):
    client = token_client(agent)
    response = client.generic("POST", "/api/v1/memories", b"\xff\xfe{", content_type="application/json")
    assert response.status_code == 400 and response.json()["error"] == "parse_error"
    form = client.generic(
        "POST", "/api/v1/memories", "scope=acme", content_type="application/x-www-form-urlencoded"
    )
    assert form.status_code == 415


@pytest.mark.django_db
def test_an_api_url_that_matches_no_route_answers_json_in_the_error_shape(agent):
    response = token_client(agent).post("/api/v1/memories/-1/confirm", {}, format="json")
    assert response.status_code == 404
    assert response.json() == {"error": "not_found", "message": "No such object in the scopes you can see."}
    assert Client().get("/no-such-page/").status_code == 404  # the dashboard keeps Django's page


# --- Bounded memory lists ---------------------------------------------------------------------------


def _remember(scope, texts, actor):
    from governance.services.memory import MemoryInput, memory_record

    return [
        memory_record(
            item=MemoryInput(scope=scope, kind="semantic", text=t, source_kind="user", status="active"),
            actor=actor,
        )
        for t in texts
    ]


@pytest.mark.django_db
def test_the_memory_list_search_is_answered_by_the_keyword_index_not_a_scan_of_every_text(
    owner, project_scope
):
    from django.db import connection, transaction

    from governance.models import Memory, fulltext
    from governance.selectors.memory import memory_list

    _remember(project_scope, ["Exports go out as PPTX.", "Invoices are due monthly."], None)
    qs = memory_list(principal=owner, q="exporting")
    assert [m.text for m in qs] == ["Exports go out as PPTX."]  # word forms match, as in the keyword index
    sql, params = qs.query.sql_with_params()
    assert "LIKE" not in sql.upper() and "governance_memory.lexical_tsv @@" in sql
    # That predicate, alone, is what the GIN index answers (a tiny table: ask what the plan can use).
    only, only_params = Memory.objects.keyword("exporting").values("pk").query.sql_with_params()
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute("EXPLAIN " + only, only_params)
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert fulltext.MEMORY_INDEX in plan, plan


@pytest.mark.django_db
def test_the_api_memory_list_counts_no_further_than_its_cap(owner, project_scope):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    _remember(project_scope, [f"Fact number {i}" for i in range(8)], None)
    client = token_client(owner)
    with override_settings(MEMORY_LIST_COUNT_CAP=5), CaptureQueriesContext(connection) as queries:
        body = client.get("/api/v1/memories", {"scope": "acme/slides"}).json()
    assert body["count"] == 5 and body["count_capped"] is True
    assert len(body["results"]) == 5
    counts = [q["sql"] for q in queries.captured_queries if "COUNT(" in q["sql"].upper()]
    assert counts and all("LIMIT 6" in sql for sql in counts), counts
    small = client.get("/api/v1/memories", {"scope": "acme/slides", "q": "number"}).json()
    assert small["count"] == 8 and small["count_capped"] is False


@pytest.mark.django_db
def test_the_dashboard_memory_list_says_more_instead_of_counting_everything(owner, project_scope):
    from tests.memoryui.conftest import signed_in

    _remember(project_scope, [f"Deck rule {i}" for i in range(8)], None)
    client = signed_in(owner, "pw-olivia")
    with override_settings(MEMORY_LIST_COUNT_CAP=5):
        page = client.get(reverse("dashboard:memories"), {"scope": "acme/slides"})
    assert page.status_code == 200
    text = page.content.decode()
    assert "More than 5 memories" in text and "narrow the filters" in text
