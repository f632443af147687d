from __future__ import annotations

import pytest

from tests.conftest import token_client


@pytest.fixture
def client_for():
    return token_client


@pytest.fixture
def agent_client(agent, client_for):
    return client_for(agent)
