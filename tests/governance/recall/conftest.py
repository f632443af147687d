"""Helpers for read-path tests: memories written through the services and embedded by the same
function the worker runs (propagation.embed_memories), so vector search sees them without a worker."""

from __future__ import annotations

import pytest

from governance.propagation import embed_memories
from governance.services.memory import MemoryInput, memory_record


@pytest.fixture
def remember():
    def make(scope, text, *, kind="semantic", status="active", source_kind="user", embed=True, **kw):
        memory = memory_record(
            item=MemoryInput(scope=scope, kind=kind, text=text, source_kind=source_kind, status=status, **kw),
            actor=None,
        )
        if embed:
            embed_memories([memory.pk])
            memory.refresh_from_db()
        return memory

    return make
