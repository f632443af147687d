"""A dashboard page that loses its database connection or Redis while rendering answers 503 with
Retry-After (bench_load's redis-restart fault showed 500s for the pages in flight)."""

from __future__ import annotations

import pytest
from django.db import OperationalError
from django.test import RequestFactory
from redis.exceptions import ConnectionError as RedisConnectionError

from memoryui.middleware import UNAVAILABLE_PAGE, ServiceUnavailableMiddleware


@pytest.mark.parametrize(
    "exc",
    [
        OperationalError("server closed the connection unexpectedly"),
        RedisConnectionError("Connection refused"),
    ],
    ids=["db", "redis"],
)
def test_a_page_that_lost_its_database_or_redis_is_a_503_with_retry_after(exc):
    middleware = ServiceUnavailableMiddleware(lambda request: None)
    response = middleware.process_exception(RequestFactory().get("/memories/"), exc)
    assert response.status_code == 503 and response["Retry-After"] == "5"
    assert response.content.decode() == UNAVAILABLE_PAGE


def test_under_the_api_the_503_has_the_api_error_shape():
    middleware = ServiceUnavailableMiddleware(lambda request: None)
    response = middleware.process_exception(
        RequestFactory().get("/api/v1/memories"), OperationalError("gone")
    )
    assert response.status_code == 503 and b'"service_unavailable"' in response.content


def test_other_exceptions_stay_500s():
    middleware = ServiceUnavailableMiddleware(lambda request: None)
    assert middleware.process_exception(RequestFactory().get("/"), ValueError("bug")) is None


def test_the_middleware_is_installed(settings):
    assert "memoryui.middleware.ServiceUnavailableMiddleware" in settings.MIDDLEWARE
