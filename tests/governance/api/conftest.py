from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from governance.services.principal import token_issue


@pytest.fixture
def client_for():
    def make(principal) -> APIClient:
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Token {token_issue(principal=principal, actor=None)}")
        return client

    return make


@pytest.fixture
def agent_client(agent, client_for):
    return client_for(agent)
