"""Issue 20's leftovers, each through the real path: a placeholder an import made keeps no scope governed;
gunicorn's own access log carries no invitation or password-reset token; the reconciler does not queue a
row again while its message is still waiting; a scope move weighs unkeyed overrides too."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from datetime import timedelta

from django.utils import timezone

from governance.models import Grant, Principal, Role, WebhookDelivery
from governance.services.memory import MemoryInput, memory_record
from governance.services.principal import grant_add, user_ensure
from governance.services.scope import scope_ensure
from tests.conftest import token_client

# --- (a) A placeholder is nobody: it keeps no scope governed ---------------------------------------------


def test_an_import_placeholder_does_not_count_as_the_owner_a_scope_keeps(owner, outsider, project_scope):
    """A file exported from acme names its owner; imported into globex by the command line (the system),
    a name nobody has here becomes a placeholder owner of the copy. The last person owning it may not
    leave it to the placeholder."""
    from governance.services.portability import scope_import
    from tests.governance.portability.helpers import as_lines, export_records

    pat = user_ensure(username="pat", password="pw-pat", actor=None)
    grant_add(principal=pat, scope=project_scope, role=Role.OWNER, actor=None)
    records = [
        {**r, "name": "zed"} if r.get("type") == "principal" and r.get("name") == "pat" else r
        for r in export_records("acme/slides")
    ]
    scope_import(lines=as_lines(records), into="globex/fresh", actor=None, grants="keep")
    placeholder = Principal.objects.get(name__startswith="import:", name__endswith=":zed")
    assert Grant.objects.filter(principal=placeholder, scope__path="globex/fresh", role=Role.OWNER).exists()
    bea = user_ensure(username="bea", password="pw-bea", actor=None)
    fresh = scope_ensure(path="globex/fresh", actor=None)
    mine = grant_add(principal=bea, scope=fresh, role=Role.OWNER, actor=None)
    # globex/fresh is covered by bea and the placeholder only (otto owns globex/slides, a sibling).
    gone = token_client(bea).delete(f"/api/v1/grants/{mine.pk}", {"reason": "leaving"}, format="json")
    assert gone.status_code == 409 and gone.json()["error"] == "last_owner", gone.content
    assert Grant.objects.filter(pk=mine.pk).exists()
    # A team of placeholders is no person either.
    team = Principal.objects.create(kind="group", name="ghosts", workspace=fresh.workspace)
    placeholder.groups.add(team)
    grant_add(principal=team, scope=fresh, role=Role.OWNER, actor=None)
    again = token_client(bea).delete(f"/api/v1/grants/{mine.pk}", {"reason": "leaving"}, format="json")
    assert again.status_code == 409
    # With another person owning it, bea may go.
    grant_add(principal=outsider, scope=fresh, role=Role.OWNER, actor=None)
    assert (
        token_client(bea).delete(f"/api/v1/grants/{mine.pk}", {"reason": "x"}, format="json").status_code
        == 204
    )


# --- (b) gunicorn's access log --------------------------------------------------------------------------

_APP = '''
def application(environ, start_response):
    start_response("404 Not Found", [("Content-Type", "text/plain")])
    return [b"no"]
'''


def _get(sock_path: str, path: str, referer: str) -> bytes:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.settimeout(10)
        conn.connect(sock_path)
        conn.sendall(f"GET {path} HTTP/1.0\r\nHost: x\r\nReferer: {referer}\r\n\r\n".encode())
        return conn.recv(4096)


def test_gunicorns_access_log_carries_no_invitation_or_reset_token(tmp_path):
    """gunicorn started as runstack and the topology start it (the same logger argument), its access log
    on stdout; requests naming an invitation and a password-reset link, in the path and the Referer."""
    from memoryui.ops.gunicorn_logging import LOGGER_CLASS_ARG

    (tmp_path / "tinyapp.py").write_text(_APP)
    sock_path = str(tmp_path / "web.sock")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), os.getcwd()])}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gunicorn",
            "tinyapp:application",
            f"--bind=unix:{sock_path}",
            "--workers=1",
            "--access-logfile=-",
            LOGGER_CLASS_ARG,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=env,
        cwd=tmp_path,
    )
    try:
        deadline = time.monotonic() + 60
        while not os.path.exists(sock_path):
            assert proc.poll() is None and time.monotonic() < deadline, "gunicorn did not start"
            time.sleep(0.05)
        secrets = ("inv0SECRETtok", "MQ", "c0ffee-SECRETreset")
        answer = _get(
            sock_path, f"/invite/{secrets[0]}/?x=1", f"http://x/accounts/reset/{secrets[1]}/{secrets[2]}/"
        )
        assert answer.startswith(b"HTTP/1.0 404") or answer.startswith(b"HTTP/1.1 404"), answer
        _get(sock_path, f"/accounts/reset/{secrets[1]}/{secrets[2]}/", f"http://x/invite/{secrets[0]}/")
    finally:
        proc.terminate()
        out, _ = proc.communicate(timeout=30)
    lines = [line for line in out.decode().splitlines() if '"GET ' in line]
    assert len(lines) == 2, out.decode()
    for line in lines:
        assert secrets[0] not in line and secrets[2] not in line, line
        assert "[redacted]" in line
    assert "/invite/[redacted]/" in lines[0] and "/accounts/reset/[redacted]/[redacted]/" in lines[0]


# --- (c) The reconciler does not queue a waiting row again -------------------------------------------------


def test_the_reconciler_does_not_queue_a_webhook_delivery_again_while_its_message_waits(
    owner, project_scope, settings
):
    from governance.models import WebhookSubscription
    from governance.propagation import webhooks as hooks

    sub = WebhookSubscription.objects.create(
        workspace=project_scope.workspace,
        url="http://example.invalid/hook",
        event_types=["memory.retired"],
        created_by=owner,
        secret_encrypted="-",  # never sent here
    )
    due = timezone.now() - timedelta(seconds=60)
    row = WebhookDelivery.objects.create(
        subscription=sub,
        event_type="memory.retired",
        next_attempt_at=due,
        body={"id": "x", "type": "memory.retired"},
    )
    sent = []
    original = hooks.queue_webhooks.delay
    hooks.queue_webhooks.delay = lambda ids: sent.append(list(ids))  # the broker: record what is handed over
    try:
        assert hooks.webhook_deliveries_due(overdue_seconds=30) == 1  # lost: queued once
        row.refresh_from_db()
        assert row.queued_at is not None
        for _ in range(3):  # the next passes while the message waits behind a backlog: nothing again
            assert hooks.webhook_deliveries_due(overdue_seconds=30) == 0
        assert sent == [[row.pk]]
        # Once the timeout has passed with the row neither taken nor delivered, it is queued again.
        WebhookDelivery.objects.filter(pk=row.pk).update(
            queued_at=timezone.now() - timedelta(seconds=settings.RECONCILE_REQUEUE_AFTER_SECONDS + 1)
        )
        assert hooks.webhook_deliveries_due(overdue_seconds=30) == 1
        assert sent == [[row.pk], [row.pk]]
        # A worker taking the message clears the mark (its claim keeps the reconciler off from there).
        assert hooks._claim(row.pk)
        row.refresh_from_db()
        assert row.queued_at is None and row.claimed_until is not None
    finally:
        hooks.queue_webhooks.delay = original


def test_the_reconciler_does_not_dispatch_an_outbox_row_again_while_its_message_waits(
    owner, project_scope, settings
):
    from governance.models import OutboxDelivery
    from governance.propagation import reconcile as reconciler

    memory_record(
        item=MemoryInput(
            scope=project_scope, kind="semantic", text="The launch is on the tenth.", source_kind="user"
        ),
        actor=owner,
    )  # its outbox row was dispatched on commit: a message exists for each store
    old = timezone.now() - timedelta(seconds=3600)
    OutboxDelivery.objects.update(state=OutboxDelivery.State.PENDING)
    from governance.models import Outbox

    Outbox.objects.update(created_at=old, state=Outbox.State.PENDING)
    assert OutboxDelivery.objects.filter(queued_at__isnull=False).exists()
    # A backlog: nothing taken yet. The reconciler's passes leave the rows to their messages.
    assert reconciler.pending_outbox(stale_after_seconds=30, limit=500) == {}
    # Past the timeout, not taken: dispatched again, once, and then left alone again.
    OutboxDelivery.objects.update(
        queued_at=timezone.now() - timedelta(seconds=settings.RECONCILE_REQUEUE_AFTER_SECONDS + 1)
    )
    dispatched = []
    reconciler.reconcile(
        dispatch=lambda oid, stores: dispatched.append((oid, stores)), embed=lambda ids: None
    )
    assert dispatched and all(stores for _, stores in dispatched)
    assert reconciler.pending_outbox(stale_after_seconds=30, limit=500) == {}
    # A message lost before any worker took it and never marked (the broker was down): dispatched at once.
    OutboxDelivery.objects.update(queued_at=None)
    assert set(reconciler.pending_outbox(stale_after_seconds=30, limit=500)) == {oid for oid, _ in dispatched}


# --- (d) A move weighs unkeyed rules too ---------------------------------------------------------------


def test_moving_a_scope_whose_unkeyed_rule_contradicts_a_four_eyes_commitment_there_is_refused(
    workspace_scope, project_scope, sibling_scope, owner, reviewer, outsider
):
    from rest_framework.test import APIClient

    from governance.models import Tier
    from governance.services.four_eyes import MOVE_WOULD_OVERRIDE

    workspace_scope.require_two_reviewers = True
    workspace_scope.save(update_fields=["require_two_reviewers"])
    memory_record(
        item=MemoryInput(
            scope=project_scope,
            kind="convention",
            text="Always export the client deck as PDF.",
            source_kind="user",
            status="active",
            tier=Tier.LONG,
        ),
        actor=None,
    )
    task = scope_ensure(path="acme/payments/task", actor=None)
    memory_record(
        item=MemoryInput(
            scope=task,
            kind="convention",
            text="Never export the client deck as PDF.",
            source_kind="user",
            status="active",
        ),
        actor=None,
    )
    url, body = f"/api/v1/scopes/{task.pk}", {"parent": "acme/slides"}
    refused = token_client(owner).patch(url, body, format="json")
    assert (refused.status_code, refused.json()["error"]) == (409, "four_eyes_required"), refused.content
    assert refused.json()["message"] == MOVE_WOULD_OVERRIDE
    # Nobody else gets further than the owner: a reviewer, another workspace's owner, no token.
    assert token_client(reviewer).patch(url, body, format="json").status_code in (403, 404)
    assert token_client(outsider).patch(url, body, format="json").status_code == 404
    assert APIClient().patch(url, body, format="json").status_code == 401
    task.refresh_from_db()
    assert task.path == "acme/payments/task"
    # An unkeyed rule that contradicts nothing there moves.
    calm = scope_ensure(path="acme/payments/calm", actor=None)
    memory_record(
        item=MemoryInput(
            scope=calm, kind="convention", text="Name files by date.", source_kind="user", status="active"
        ),
        actor=None,
    )
    moved = token_client(owner).patch(f"/api/v1/scopes/{calm.pk}", body, format="json")
    assert moved.status_code == 200, moved.content
