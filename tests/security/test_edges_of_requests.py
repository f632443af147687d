"""Smaller edges of the request path: invitation tokens never reach the log lines; an evaluation upload
takes the documented 5 MB and a deeply nested one is a 400, not a 500; behind a proxy on the same host
(TRUSTED_PROXY_COUNT=0) `/metrics` is not open to every client and clients do not share one lock-out
address."""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client, override_settings
from django.urls import reverse

from governance.evaluation.runs import UPLOAD_TOO_DEEP
from governance.services.invitation import invitation_create


@pytest.fixture
def log_lines():
    """What the configured console handler (settings.LOGGING, with its filters) writes, while the test runs."""
    import io
    import logging

    [console] = [h for h in logging.getLogger().handlers if type(h) is logging.StreamHandler]
    written = io.StringIO()
    previous = console.setStream(written)
    try:
        yield written
    finally:
        console.setStream(previous)


def test_invitation_tokens_are_not_in_the_log_lines_of_4xx_answers(owner, workspace_scope, log_lines):
    bogus = "tok-" + "Zx9" * 10
    assert Client().get(f"/invite/{bogus}/").status_code in (404, 410)
    _, raw = invitation_create(scope=workspace_scope, role="viewer", actor=owner)
    page = Client().post(f"/invite/{raw}/", {"username": "x", "password": "short"})  # a 400: weak password
    assert page.status_code == 400
    accept = Client().post(
        "/api/v1/invitations/accept",
        {"token": bogus, "username": "y", "password": "p"},
        content_type="application/json",
    )
    assert accept.status_code in (400, 404, 410)
    logged = log_lines.getvalue()
    assert "/invite/[redacted]/" in logged  # the lines are there, without the credential
    assert bogus not in logged and raw not in logged


def _locomo_padded(size: int) -> bytes:
    from tests.governance.evaluation.test_benchmark_files import LOCOMO

    data = json.loads(json.dumps(LOCOMO))
    body = json.dumps(data).encode()
    data[0]["padding"] = "x" * (size - len(body))
    return json.dumps(data).encode()


def test_an_evaluation_upload_of_three_megabytes_is_taken_as_documented(owner):
    client = Client()
    client.force_login(owner.user)
    body = _locomo_padded(3 * 1024 * 1024)
    answer = client.post(
        "/evaluation/upload/", {"file": SimpleUploadedFile("big.json", body), "workspace": "acme"}
    )
    assert answer.status_code == 302, answer.content[:300]  # queued; before: 413 at the 2 MB body limit


@pytest.mark.parametrize("depth", [100, 50_000])
def test_a_deeply_nested_evaluation_upload_is_a_400_not_a_500(owner, depth):
    client = Client()
    client.force_login(owner.user)
    body = ("[" * depth + "]" * depth).encode()
    answer = client.post(
        "/evaluation/upload/", {"file": SimpleUploadedFile("deep.json", body), "workspace": "acme"}
    )
    assert answer.status_code == 400
    if depth > 1000:
        assert UPLOAD_TOO_DEEP in answer.content.decode()


def test_behind_a_same_host_proxy_metrics_are_not_open_to_every_client(db):
    through_proxy = Client(REMOTE_ADDR="127.0.0.1", HTTP_X_FORWARDED_FOR="203.0.113.9")
    assert through_proxy.get("/metrics").status_code == 404
    assert Client(REMOTE_ADDR="127.0.0.1").get("/metrics").status_code == 200  # the local scraper still reads


@override_settings(AXES_FAILURE_LIMIT=3)
def test_behind_a_same_host_proxy_one_clients_failures_do_not_lock_out_another(owner):
    from axes.models import AccessAttempt

    AccessAttempt.objects.all().delete()
    url = reverse("login")
    attacker = Client(REMOTE_ADDR="127.0.0.1", HTTP_X_FORWARDED_FOR="203.0.113.9")
    for _ in range(3):
        attacker.post(url, {"username": "olivia", "password": "guess"})
    assert attacker.post(url, {"username": "olivia", "password": "pw-olivia"}).status_code == 429
    olivia = Client(REMOTE_ADDR="127.0.0.1", HTTP_X_FORWARDED_FOR="198.51.100.7")
    assert olivia.post(url, {"username": "olivia", "password": "pw-olivia"}).status_code == 302
    AccessAttempt.objects.all().delete()


def test_an_invitation_token_in_a_traceback_is_redacted_in_the_log_and_in_gunicorns(log_lines, capsys):
    """A failure under /invite/<token>/ logs its traceback, whose exception may name the path: under `make
    run` (gunicorn's error log, the application's console handler) the token went out with it."""
    import logging

    from gunicorn.config import Config

    from memoryui.ops.gunicorn_logging import RedactingLogger

    secret = "tok-" + "Qw7" * 10
    try:
        raise ValueError(f"no page for /invite/{secret}/")
    except ValueError:
        logging.getLogger("django.request").exception("Internal Server Error: /invite/%s/", secret)
        cfg = Config()
        cfg.set("errorlog", "-")
        RedactingLogger(cfg).exception("Error handling request /invite/%s/", secret)
    written = log_lines.getvalue() + capsys.readouterr().err
    assert "ValueError: no page for /invite/[redacted]/" in written
    assert secret not in written
