"""Schemathesis against the OpenAPI schema (/api/v1/schema/): requests generated from the schema, sent
through the WSGI application as an owner of a small seeded workspace, never get a 5xx, and every answer
(status code, content type, body) is one the schema documents. Bounded: FUZZ_EXAMPLES per operation
(default 12), derandomised, no shrinking, so it runs in well under a minute as part of `make test`."""

from __future__ import annotations

import os

import pytest
import schemathesis
from django.core.wsgi import get_wsgi_application
from hypothesis import HealthCheck, Phase, given, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from governance.services.memory import MemoryInput, memory_record
from tests.conftest import token_client

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "12"))
CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]


@pytest.fixture
def seeded(owner, project_scope, sibling_scope):
    """A few memories of each sort an operation may meet, in the owner's workspace."""
    for scope, text, status in (
        (project_scope, "Decks are exported as PPTX.", "active"),
        (project_scope, "The client prefers a dark theme.", "candidate"),
        (sibling_scope, "Refunds are approved by finance.", "active"),
    ):
        memory_record(
            item=MemoryInput(scope=scope, kind="semantic", text=text, source_kind="user", status=status),
            actor=None,
        )
    return owner


@pytest.fixture
def wsgi_app():
    """The WSGI application, called in this thread, without closing the test's database connection at
    the end of each request (what Django's own test client does too; the data lives in the test's
    transaction)."""
    from django.core.signals import request_finished, request_started
    from django.db import close_old_connections

    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        yield get_wsgi_application()
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)


def fuzz(operation, auth: dict, calls: list, answered: dict, failures: list) -> None:
    """Send EXAMPLES generated requests to one operation; record its answers and its first failure."""

    @given(case=operation.as_strategy())
    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        derandomize=True,
        database=None,
        phases=[Phase.explicit, Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    def exercise(case):
        # Half the bodies name a scope that exists, so the generated requests reach past the 404.
        if isinstance(case.body, dict) and "scope" in case.body and len(calls) % 2 == 0:
            case.body["scope"] = "acme/slides"
        calls.append(operation.label)
        try:
            response = case.call_and_validate(headers=auth, checks=CHECKS)
            answered.setdefault(operation.label, set()).add(response.status_code)
        except (Exception, BaseExceptionGroup) as exc:  # schemathesis' FailureGroup, or anything else
            failures.append(f"{operation.label}: {type(exc).__name__}: {str(exc)[:1500]}")
            raise

    try:
        exercise()
    except (Exception, BaseExceptionGroup):  # noqa: BLE001 — recorded above; one per operation is enough
        pass


@pytest.mark.django_db
def test_no_generated_request_gets_a_server_error_or_an_answer_outside_the_schema(seeded, wsgi_app):
    schema = schemathesis.openapi.from_wsgi("/api/v1/schema/", wsgi_app)
    auth = {"Authorization": token_client(seeded)._credentials["HTTP_AUTHORIZATION"]}
    failures: list[str] = []
    calls: list[str] = []
    answered: dict[str, set[int]] = {}
    operations = 0
    for result in schema.get_all_operations():
        fuzz(result.ok(), auth, calls, answered, failures)
        operations += 1
    assert operations >= 20
    assert not failures, "\n\n".join(failures)
    # The run reached past authentication and validation: many operations answered with success.
    succeeded = sorted(label for label, codes in answered.items() if any(200 <= c < 300 for c in codes))
    print(f"{len(calls)} requests; operations with a 2xx answer: {succeeded}")
    assert len(succeeded) >= 6, answered
