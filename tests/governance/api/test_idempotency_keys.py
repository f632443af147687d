"""`Idempotency-Key` on API writes (governance/api/idempotency.py, governance/services/idempotency.py): a
repeat replays the stored answer and writes nothing; the same key with another request is refused; keys
belong to their principal and token; bad keys are refused; concurrent repeats make one write; keys expire
and are pruned; an answer that held a since-forgotten memory is not replayed."""

from __future__ import annotations

import threading
import uuid
from datetime import timedelta

import pytest
from django.db import connection
from django.test import Client
from django.utils import timezone

from governance.models import AuditEvent, IdempotentRequest, Memory, Status
from governance.propagation.stores import answers_withdraw
from governance.services import idempotency as keys
from governance.services.memory import MemoryInput, memory_forget, memory_record
from governance.tasks import prune_idempotency_keys
from tests.conftest import token_client, wait_for, waiting_on_a_lock

WRITE = {
    "scope": "acme/slides",
    "kind": "semantic",
    "text": "Decks open with the agenda.",
    "source": {"kind": "user"},
}


def _key() -> str:
    return str(uuid.uuid4())


def _post(client, path, body, key, **extra):
    headers = {"HTTP_IDEMPOTENCY_KEY": key} if key is not None else {}
    return client.post(path, body, format="json", **headers, **extra)


@pytest.fixture
def proposal(project_scope):
    return memory_record(
        item=MemoryInput(
            scope=project_scope, kind="convention", text="Charts use the brand palette.", source_kind="user"
        ),
        actor=None,
    )


def test_a_repeat_with_the_same_key_replays_the_answer_and_writes_once(agent):
    client, key = token_client(agent), _key()
    first = _post(client, "/api/v1/memories", WRITE, key)
    assert first.status_code == 201, first.content
    audits = AuditEvent.objects.count()
    again = _post(client, "/api/v1/memories", WRITE, key)
    assert again.status_code == 201
    assert again.content == first.content
    assert again[keys.REPLAYED_HEADER] == "true"
    assert keys.REPLAYED_HEADER not in first
    assert Memory.objects.filter(text=WRITE["text"]).count() == 1
    assert AuditEvent.objects.count() == audits  # nothing written the second time


def test_the_same_key_with_another_body_is_refused_with_422_and_writes_nothing(agent):
    client, key = token_client(agent), _key()
    assert _post(client, "/api/v1/memories", WRITE, key).status_code == 201
    other = _post(client, "/api/v1/memories", {**WRITE, "text": "Decks close with questions."}, key)
    assert other.status_code == 422
    assert other.json() == {"error": "idempotency_key_reused", "message": keys.KeyReused.message}
    assert not Memory.objects.filter(text="Decks close with questions.").exists()
    # And on another path (same body) too.
    assert _post(client, "/api/v1/events", WRITE, key).status_code == 422


def test_another_principals_or_tokens_same_key_is_another_key(agent, outsider, other_workspace_scope):
    key = _key()
    assert _post(token_client(agent), "/api/v1/memories", WRITE, key).status_code == 201
    # Another workspace's token with the same key: its own write, never the first one's answer.
    theirs = _post(token_client(outsider), "/api/v1/memories", {**WRITE, "scope": "globex/slides"}, key)
    assert theirs.status_code == 201, theirs.content
    assert keys.REPLAYED_HEADER not in theirs
    assert theirs.json()["scope"] == "globex/slides"
    # The same request by the other workspace on the first one's scope: refused as unknown, not replayed.
    refused = _post(token_client(outsider), "/api/v1/memories", WRITE, _key())
    assert refused.status_code == 404
    # A second token of the same principal: its own key too (its bound may shape the answer).
    second = _post(token_client(agent), "/api/v1/memories", WRITE, key)
    assert keys.REPLAYED_HEADER not in second
    assert IdempotentRequest.objects.filter(key=key).count() == 3


def test_without_a_key_writes_run_as_before(agent):
    client = token_client(agent)
    for text in ("One.", "Two."):
        response = _post(client, "/api/v1/memories", {**WRITE, "text": text}, None)
        assert response.status_code == 201
        assert keys.REPLAYED_HEADER not in response
    assert not IdempotentRequest.objects.exists()


@pytest.mark.parametrize(
    "bad", ["", " ", "x" * 256, "tab\tinside", "naïve", "line\nbreak"], ids=lambda v: repr(v)[:12]
)
def test_a_bad_key_is_refused_with_400_and_writes_nothing(agent, bad):
    client = token_client(agent)
    response = client.post("/api/v1/memories", WRITE, format="json", HTTP_IDEMPOTENCY_KEY=bad)
    assert response.status_code == 400
    assert response.json()["error"] == "idempotency_key_invalid"
    assert not Memory.objects.filter(text=WRITE["text"]).exists()


def test_a_structured_field_string_key_and_the_longest_key_are_accepted(agent):
    client = token_client(agent)
    quoted = _post(client, "/api/v1/memories", WRITE, '"a-quoted-key"')
    assert quoted.status_code == 201
    assert _post(client, "/api/v1/memories", WRITE, "a-quoted-key")[keys.REPLAYED_HEADER] == "true"
    assert _post(client, "/api/v1/memories", {**WRITE, "text": "Long."}, "k" * 255).status_code == 201


def test_a_request_without_a_token_is_answered_401_and_keeps_no_key(db):
    response = _post(Client(), "/api/v1/memories", WRITE, _key(), content_type="application/json")
    assert response.status_code == 401
    assert not IdempotentRequest.objects.exists()


@pytest.mark.parametrize("role", ["owner", "curator", "reviewer", "agent"])
def test_each_roles_keyed_write_is_replayed(role, request, project_scope):
    principal = request.getfixturevalue(role)
    client, key = token_client(principal), _key()
    body = {**WRITE, "text": f"Written by the {role}."}
    first = _post(client, "/api/v1/memories", body, key)
    assert first.status_code == 201, first.content
    again = _post(client, "/api/v1/memories", body, key)
    assert (again.status_code, again.content, again[keys.REPLAYED_HEADER]) == (201, first.content, "true")
    assert Memory.objects.filter(text=body["text"]).count() == 1


def test_a_confirm_repeated_with_its_key_replays_instead_of_failing_as_a_second_confirm(reviewer, proposal):
    client, key = token_client(reviewer), _key()
    path = f"/api/v1/memories/{proposal.pk}/confirm"
    first = _post(client, path, {"reason": "agreed"}, key)
    assert first.status_code == 200, first.content
    again = _post(client, path, {"reason": "agreed"}, key)
    assert (again.status_code, again.content) == (200, first.content)
    # Without the key the repeat is a second confirm of an active memory.
    assert _post(client, path, {"reason": "agreed"}, None).status_code == 409


def test_a_refused_request_keeps_no_answer_so_the_next_attempt_may_run(agent, reviewer, proposal):
    key = _key()
    path = f"/api/v1/memories/{proposal.pk}/confirm"
    assert _post(token_client(agent), path, {"reason": "x"}, key).status_code == 403
    assert not IdempotentRequest.objects.filter(key=key).exists()


def test_a_4xx_answer_is_replayed(agent):
    client, key = token_client(agent), _key()
    first = _post(client, "/api/v1/memories", {**WRITE, "kind": "nonsense"}, key)
    assert first.status_code == 400
    again = _post(client, "/api/v1/memories", {**WRITE, "kind": "nonsense"}, key)
    assert (again.status_code, again.content, again[keys.REPLAYED_HEADER]) == (400, first.content, "true")


def test_a_signed_in_person_keys_their_writes_too(owner, project_scope):
    client = Client(enforce_csrf_checks=False)
    client.login(username="olivia", password="pw-olivia")
    key = _key()
    first = client.post("/api/v1/memories", WRITE, content_type="application/json", HTTP_IDEMPOTENCY_KEY=key)
    assert first.status_code == 201, first.content
    again = client.post("/api/v1/memories", WRITE, content_type="application/json", HTTP_IDEMPOTENCY_KEY=key)
    assert again[keys.REPLAYED_HEADER] == "true"
    assert IdempotentRequest.objects.get(key=key).token_id is None


@pytest.mark.parametrize("hard", [True, False], ids=["hard", "soft"])
def test_the_answer_of_a_memory_since_forgotten_is_not_replayed(agent, owner, hard):
    client, key = token_client(agent), _key()
    first = _post(client, "/api/v1/memories", WRITE, key)
    memory_forget(memory_id=first.json()["id"], actor=owner, reason="asked", hard=hard)
    again = _post(client, "/api/v1/memories", WRITE, key)
    assert again.status_code == 410
    assert again.json()["error"] == "idempotent_answer_withdrawn"
    assert WRITE["text"].encode() not in again.content
    assert Memory.objects.filter(scope__path="acme/slides", kind="semantic").count() == 1  # not run again
    if not hard:
        return
    # The hard forget's propagation (its stored-turns store) empties the stored copy too.
    from governance.models import Outbox
    from governance.propagation.stores import HANDLERS

    HANDLERS["turns"](Outbox.objects.get(memory_id=first.json()["id"], topic="memory.forgotten"))
    stored = IdempotentRequest.objects.get(key=key)
    assert bytes(stored.body) == b"" and stored.withdrawn_at is not None
    assert answers_withdraw([first.json()["id"]]) == 0  # idempotent


def test_a_forget_repeated_with_its_key_replays_its_answer(curator, owner, project_scope):
    memory = memory_record(
        item=MemoryInput(
            scope=project_scope, kind="semantic", text="Old fact.", source_kind="user", status="active"
        ),
        actor=None,
    )
    client, key = token_client(curator), _key()
    path = f"/api/v1/memories/{memory.pk}/forget"
    first = _post(client, path, {"reason": "wrong", "mode": "soft"}, key)
    assert first.status_code == 202, first.content
    again = _post(client, path, {"reason": "wrong", "mode": "soft"}, key)
    assert (again.status_code, again.content) == (202, first.content)
    assert Memory.objects.get(pk=memory.pk).status == Status.FORGOTTEN


def test_stored_answers_are_encrypted_at_rest(agent):
    key = _key()
    _post(token_client(agent), "/api/v1/memories", WRITE, key)
    stored = IdempotentRequest.objects.get(key=key)
    assert WRITE["text"].encode() not in bytes(stored.body)
    assert stored.memory_ids and stored.status_code == 201


def test_expired_keys_are_pruned_and_free_again(agent):
    client, key = token_client(agent), _key()
    _post(client, "/api/v1/memories", WRITE, key)
    IdempotentRequest.objects.update(expires_at=timezone.now() - timedelta(seconds=1))
    # An expired key not yet pruned is free: the request runs again (the near-duplicate rule answers 200).
    assert keys.REPLAYED_HEADER not in _post(client, "/api/v1/memories", WRITE, key)
    IdempotentRequest.objects.update(expires_at=timezone.now() - timedelta(seconds=1))
    assert prune_idempotency_keys() == 1
    assert not IdempotentRequest.objects.exists()


# --- Concurrent repeats: one write ----------------------------------------------------------------------
def _held_write(client, key, results, started, release):
    """Send the write and hold its transaction open just after the memory's INSERT until `release`."""

    def hold(execute, sql, params, many, context):
        result = execute(sql, params, many, context)
        if 'INSERT INTO "governance_memory"' in sql and not started.is_set():
            started.set()
            release.wait(30)
        return result

    try:
        with connection.execute_wrapper(hold):
            results["first"] = _post(client, "/api/v1/memories", WRITE, key)
    finally:
        connection.close()


def _concurrent(agent, wait_seconds, settings):
    settings.IDEMPOTENCY_KEY_WAIT_SECONDS = wait_seconds
    client, key = token_client(agent), _key()
    results: dict = {}
    started, release = threading.Event(), threading.Event()
    first = threading.Thread(target=_held_write, args=(client, key, results, started, release))
    first.start()
    assert started.wait(30), "the first request never reached its write"

    def second():
        try:
            results["second"] = _post(client, "/api/v1/memories", WRITE, key)
        finally:
            connection.close()

    other = threading.Thread(target=second)
    other.start()
    if wait_seconds > 1:
        wait_for(
            lambda: waiting_on_a_lock("%governance_idempotentrequest%"), timeout=20, interval=0.02
        )  # the repeat waits on the key's row
    else:
        other.join(20)
    release.set()
    first.join(30)
    other.join(30)
    return results


@pytest.mark.django_db(transaction=True)
def test_a_repeat_sent_while_the_first_runs_waits_and_replays_its_answer(agent, settings):
    results = _concurrent(agent, 20.0, settings)
    assert results["first"].status_code == 201, results["first"].content
    assert results["second"].status_code == 201
    assert results["second"][keys.REPLAYED_HEADER] == "true"
    assert results["second"].content == results["first"].content
    assert Memory.objects.filter(text=WRITE["text"]).count() == 1


@pytest.mark.django_db(transaction=True)
def test_a_repeat_that_waits_too_long_is_refused_with_409_and_never_writes_twice(agent, settings):
    results = _concurrent(agent, 0.2, settings)
    assert results["second"].status_code == 409
    assert results["second"].json()["error"] == "idempotency_key_in_use"
    assert results["first"].status_code == 201
    assert Memory.objects.filter(text=WRITE["text"]).count() == 1


def test_a_keyed_import_larger_than_the_form_limit_runs_once_and_is_replayed(owner, project_scope, settings):
    """An import file may exceed MAX_REQUEST_BODY_BYTES (its route has its own limit): the key's hash reads
    it all the same, and the view still gets the file."""
    import io

    from governance.models import Scope
    from tests.governance.portability.test_permissions import _file, slides  # noqa: F401

    memory_record(
        item=MemoryInput(
            scope=project_scope, kind="semantic", text="Imported once.", source_kind="user", status="active"
        ),
        actor=owner,
    )
    upload = _file(project_scope)
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = len(upload.getvalue()) // 2
    client, key = token_client(owner), _key()

    def send():
        again = io.BytesIO(upload.getvalue())
        again.name = "slides.jsonl"
        return client.post(
            f"/api/v1/scopes/{project_scope.pk}/import",
            {"file": again, "name": "copy"},
            format="multipart",
            HTTP_IDEMPOTENCY_KEY=key,
        )

    first = send()
    assert first.status_code == 201, first.content
    again = send()
    assert (again.status_code, again.content, again[keys.REPLAYED_HEADER]) == (201, first.content, "true")
    assert Scope.objects.filter(path="acme/slides/copy").count() == 1
    assert Memory.objects.filter(text="Imported once.").count() == 2  # the original and its one copy


def test_the_answer_is_not_replayed_once_its_memory_is_out_of_the_callers_sight(agent):
    client, key = token_client(agent), _key()
    assert _post(client, "/api/v1/memories", WRITE, key).status_code == 201
    from governance.models import Grant

    Grant.objects.filter(principal=agent).delete()  # the agent's grant taken away
    again = _post(client, "/api/v1/memories", WRITE, key)
    assert again.status_code == 410 and WRITE["text"].encode() not in again.content
