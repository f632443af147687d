"""Imported memories go through the existing propagation path: the outbox rows written with them reach a
real Celery worker, which embeds every imported memory (not the tombstones); the audit chain stays whole."""

from __future__ import annotations

from devtools.demo import load_demo
from governance.models import Memory, Outbox, Scope, Status
from governance.services.audit import audit_verify_chain
from governance.services.portability import scope_export_lines, scope_import
from tests.conftest import wait_for


def test_imported_memories_are_embedded_by_the_workers_and_the_chain_still_verifies(celery_worker):
    load_demo()
    lines = list(scope_export_lines(Scope.objects.get(path="demo")))
    result = scope_import(lines=lines, into="demo-moved", actor=None)
    imported = Memory.objects.filter(scope__path__startswith="demo-moved/")
    assert set(imported.exclude(status=Status.FORGOTTEN).values_list("pk", flat=True)) == set(
        result.memory_ids
    )
    rows = Outbox.objects.filter(topic="memory.created", payload__memory_ids__contains=[result.memory_ids[0]])
    assert rows.exists()
    wait_for(
        lambda: not imported.exclude(status=Status.FORGOTTEN).filter(embedding__isnull=True).exists(),
        timeout=180,
    )
    assert imported.get(status=Status.FORGOTTEN).embedding is None
    report = audit_verify_chain()
    assert report.ok, report.problem
