"""Only what the tests change. The stack is the same real PostgreSQL, Redis and Celery (the embedded ones of
`devtools` when DATABASE_URL / REDIS_URL are unset), with the `devtools` app installed."""

import os

from memoryui.settings.env import env_int

os.environ.setdefault("SECRET_KEY", "test-only-secret-key")
# Tests use their own Redis database, so a running dev worker never takes a test's tasks.
os.environ.setdefault("REDIS_DB", "1")
# `make test` runs the suite in parallel processes (pytest-xdist, docs/testing.md): each has its own test
# database (pytest-django appends `_gw<N>` to its name) and its own Redis database, so one process's worker
# never takes another's tasks, cache entries or rate-limit counters. Processes a test starts inherit the
# marker and keep the database they were given.
_xdist_worker = os.environ.get("PYTEST_XDIST_WORKER", "")
if _xdist_worker.startswith("gw") and os.environ.get("TEST_REDIS_DB_OF") != _xdist_worker:
    os.environ["REDIS_DB"] = str(int(os.environ["REDIS_DB"]) + 1 + int(_xdist_worker[2:]))
    os.environ["TEST_REDIS_DB_OF"] = _xdist_worker
# Limits high enough that no other test meets them; tests/security lowers them to prove each one.
for _bucket in ("CONTEXT", "READ", "WRITE", "GOVERNANCE"):
    os.environ.setdefault(f"API_RATE_{_bucket}", "100000/min")
os.environ.setdefault("LOGIN_FAILURE_LIMIT", "50")
# The embedding engine's OpenMP threads sleep when idle instead of spinning (libgomp reads this when the
# engine loads, after the settings). Tests embed a few texts at a time beside PostgreSQL, a live server and
# a worker on the same cores: spinning threads took them from those, and one short passage took ~0.8 s
# instead of ~0.02 s on a busy 2-core machine. The vectors are the same.
os.environ.setdefault("OMP_WAIT_POLICY", "passive")

from devtools.embedded import store_urls, var_dir  # noqa: E402

# As in the development settings: given to the base settings only while they load.
_EMBEDDED = store_urls(env_int("REDIS_DB", 0))
os.environ.update(_EMBEDDED)
try:
    from memoryui.settings.base import *  # noqa: E402,F403
    from memoryui.settings.base import DATABASES, INSTALLED_APPS  # noqa: E402
finally:
    for _name in _EMBEDDED:
        del os.environ[_name]

INSTALLED_APPS = [*INSTALLED_APPS, "devtools"]

# Parallel test runs on one machine get their own test database (TEST_DB_SUFFIX=...).
DATABASES["default"]["TEST"] = {"NAME": f"test_memory_{os.environ.get('TEST_DB_SUFFIX', 'main')}"}
DATABASES["default"]["CONN_MAX_AGE"] = 0
# Commits of the test database return before their WAL is flushed to disk (per connection, only this process
# and the workers it starts with these settings): a server crash could lose the last commits, never corrupt
# anything, and no test crashes PostgreSQL. A flush costs ~5 ms on a virtual disk and the transactional
# tests, live servers and workers commit thousands of times. It pays when the disk is shared with other work
# (tests/governance/webhooks 46 s instead of 82 s at load 11); on a quieter machine (load 4) the difference
# was within noise. The product sets nothing: production keeps synchronous commits.
DATABASES["default"].setdefault("OPTIONS", {})["options"] = "-c synchronous_commit=off"
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

# The tests' webhook receivers listen on loopback; retries are quick so a test sees the cap.
WEBHOOK_ALLOW_PRIVATE = True
WEBHOOK_RETRY_BASE_SECONDS = 0.2
WEBHOOK_RETRY_MAX_SECONDS = 1.0
WEBHOOK_MAX_ATTEMPTS = 3
WEBHOOK_TIMEOUT_SECONDS = 3.0

# Static files as production serves them: hashed, compressed, from a collected folder of the tests' own
# (tests/conftest.py collects into it once per run, when the sources changed), never the one a `make run`
# beside the tests collects into.
STATIC_ROOT = var_dir() / "static-test"
STATIC_SERVE_COLLECTED = True
WHITENOISE_USE_FINDERS = False
WHITENOISE_AUTOREFRESH = False
