"""The clients are tested against the running service: pytest-django's live server (a real HTTP server
in a thread) on the real PostgreSQL and Redis, with the session's real Celery worker embedding what is
written. Tokens are issued the way an operator would, through the service layer."""

from __future__ import annotations

import pytest

from governance.services.principal import token_issue


@pytest.fixture
def service(live_server, celery_worker) -> str:
    """The base URL of the running service (the worker makes writes searchable as they would be)."""
    return live_server.url


@pytest.fixture
def token_for():
    def issue(principal) -> str:
        return token_issue(principal=principal, actor=None)

    return issue


@pytest.fixture
def agent_token(agent, token_for) -> str:
    return token_for(agent)
