"""Helpers for the security tests: a memory written by the system, and an API client for a raw token."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from governance.services.memory import MemoryInput, memory_record


def client_with(raw: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {raw}")
    return client


@pytest.fixture
def remember():
    def write(scope, text, *, kind="semantic", key=None, status="active", **kw):
        return memory_record(
            item=MemoryInput(
                scope=scope, kind=kind, key=key, text=text, source_kind="user", status=status, **kw
            ),
            actor=None,
        )

    return write
