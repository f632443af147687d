"""How Celery tasks retry: only transient errors (a dropped database connection, Redis gone, a timeout),
with exponential backoff, jitter and a cap. Shared by every task module."""

from __future__ import annotations

from django.db import InterfaceError, OperationalError
from redis.exceptions import RedisError

# InterfaceError: psycopg's "connection already closed" after the server dropped it mid-task.
TRANSIENT = (OperationalError, InterfaceError, RedisError, ConnectionError, TimeoutError)
RETRY = {
    "autoretry_for": TRANSIENT,
    "retry_backoff": 2,
    "retry_backoff_max": 120,
    "retry_jitter": True,
    "max_retries": 10,
}
