"""A dropped database connection or Redis away answers 503 `service_unavailable` with Retry-After (a
fault a client may retry), not a 500. Under load (manage.py bench_load --fault db-drop / redis-restart)
requests in flight at the fault got 500s."""

from __future__ import annotations

import pytest
from django.db import InterfaceError, OperationalError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from governance.api.errors import SERVICE_UNAVAILABLE, exception_handler


@pytest.mark.parametrize(
    "exc",
    [
        OperationalError("terminating connection due to administrator command"),
        InterfaceError("connection already closed"),
        RedisConnectionError("Error 111 connecting to 127.0.0.1:6379. Connection refused."),
        RedisTimeoutError("Timeout reading from socket"),
    ],
    ids=["db-dropped", "db-closed", "redis-refused", "redis-timeout"],
)
def test_a_lost_database_or_redis_connection_is_a_503_the_client_may_retry(exc):
    response = exception_handler(exc, {})
    assert response.status_code == 503
    assert response.data == {"error": "service_unavailable", "message": SERVICE_UNAVAILABLE}
    assert response["Retry-After"] == "5"


def test_other_server_errors_are_not_dressed_up_as_unavailable():
    assert exception_handler(ZeroDivisionError("bug"), {}) is None  # Django's 500, as before
