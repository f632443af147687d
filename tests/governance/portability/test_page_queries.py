"""The Export/import page asks a fixed number of queries, however many scopes the viewer governs."""

from __future__ import annotations

from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from governance.services.scope import scope_ensure


def _queries(client: Client) -> int:
    with CaptureQueriesContext(connection) as captured:
        assert client.get("/portability/").status_code == 200
    return len(captured)


def test_the_export_import_page_does_not_grow_with_the_number_of_scopes(owner, project_scope):
    client = Client()
    assert client.login(username="olivia", password="pw-olivia")
    for i in range(3):
        scope_ensure(path=f"acme/p{i}", actor=None)
    client.get("/portability/")  # warm the session and caches
    few = _queries(client)
    for i in range(3, 30):
        scope_ensure(path=f"acme/p{i}/task", actor=None)
    many = _queries(client)
    page = client.get("/portability/").content.decode()
    assert (
        page.count('aria-label="Export acme/p') == 30 + 27
    )  # every project and task scope offers its export
    assert many == few
