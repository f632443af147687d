"""Production settings pass Django's deployment checks, and nothing — manage.py, Celery, the WSGI
server — falls back to a fixed signing key outside the embedded development stack."""

from __future__ import annotations

import os
import re
import secrets
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings

ROOT = Path(__file__).resolve().parent.parent.parent
REFUSAL = "SECRET_KEY must be set"


def run(code_or_argv, env_extra: dict[str, str], drop=("SECRET_KEY",)) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in drop and k != "DJANGO_SETTINGS_MODULE"}
    env.update(env_extra)
    argv = code_or_argv if isinstance(code_or_argv, list) else [sys.executable, "-c", code_or_argv]
    return subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)


def external() -> dict[str, str]:
    """The already running servers, given as URLs: what a deployment looks like to the settings."""
    return {"DATABASE_URL": settings.DATABASE_URL, "REDIS_URL": settings.REDIS_URL}


def test_manage_py_check_deploy_passes_with_the_production_settings():
    result = run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        {
            **external(),
            "DJANGO_SETTINGS_MODULE": "memoryui.settings.production",
            "SECRET_KEY": secrets.token_urlsafe(64),
            "ALLOWED_HOSTS": "memory.example.com",
        },
    )
    security = re.findall(r"\(security\.(W\d+)\)", result.stdout + result.stderr)
    # W021 is only "not submitted to the browsers' preload list", a one-way decision left to the deployer
    # (SECURE_HSTS_PRELOAD=true); every other deployment warning must be gone.
    assert [w for w in security if w != "W021"] == [], result.stdout + result.stderr


def test_production_settings_are_https_only_by_default_and_configurable():
    code = (
        "import django, json; django.setup(); from django.conf import settings as s; print(json.dumps("
        "[s.SECURE_SSL_REDIRECT, s.SECURE_HSTS_SECONDS, s.SESSION_COOKIE_SECURE, s.CSRF_COOKIE_SECURE,"
        " s.SESSION_COOKIE_AGE, s.DEBUG, len(s.AUTH_PASSWORD_VALIDATORS)]))"
    )
    base = {**external(), "DJANGO_SETTINGS_MODULE": "memoryui.settings.production", "SECRET_KEY": "k" * 60}
    default = run(code, base)
    assert default.returncode == 0, default.stderr
    assert default.stdout.strip().splitlines()[-1] == "[true, 31536000, true, true, 43200, false, 4]"
    changed = run(
        code,
        {**base, "SECURE_SSL_REDIRECT": "false", "SECURE_HSTS_SECONDS": "0", "SESSION_COOKIE_AGE": "3600"},
    )
    assert changed.stdout.strip().splitlines()[-1] == "[false, 0, true, true, 3600, false, 4]"
    bad = run(code, {**base, "SECURE_SSL_REDIRECT": "perhaps"})
    assert bad.returncode != 0 and "SECURE_SSL_REDIRECT" in bad.stderr


@pytest.mark.parametrize(
    "what, argv, settings_module",
    [
        ("the WSGI app", "import memoryui.wsgi", None),
        ("the production settings", "import django; django.setup()", "memoryui.settings.production"),
        ("manage.py on external servers", [sys.executable, "manage.py", "check"], None),
        (
            "the Celery app on external servers",
            "from memoryui.celery import app; print(app.conf.broker_url)",
            None,
        ),
    ],
)
def test_nothing_outside_the_embedded_stack_starts_without_secret_key(what, argv, settings_module):
    extra = external()
    if settings_module:
        extra["DJANGO_SETTINGS_MODULE"] = settings_module
    result = run(argv, extra)
    assert result.returncode != 0, f"{what} started without SECRET_KEY"
    assert REFUSAL in result.stderr, result.stderr


def test_the_development_key_is_generated_once_per_installation_and_kept_private(tmp_path, monkeypatch):
    from devtools import embedded

    monkeypatch.setenv("MEMORY_VAR_DIR", str(tmp_path))
    first = embedded.secret_key()
    assert len(first) >= 50 and first == embedded.secret_key()
    path = tmp_path / "secret_key"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    monkeypatch.setenv("MEMORY_VAR_DIR", str(tmp_path / "other"))
    assert embedded.secret_key() != first  # another checkout, another key


def test_no_settings_module_carries_a_fixed_development_key():
    for name in ("base.py", "dev.py", "production.py"):
        text = (ROOT / "memoryui" / "settings" / name).read_text()
        assert not re.search(r"SECRET_KEY[\"']\s*,\s*[\"']", text), name


def test_passwords_are_checked_by_djangos_standard_validators(db):
    from django.contrib.auth.password_validation import validate_password
    from django.core.exceptions import ValidationError

    # Nine characters, and a long number: both passed the two validators configured before.
    for weak in ("Zq8#kLp2w", "83920174658", "password123"):
        with pytest.raises(ValidationError):
            validate_password(weak)
    validate_password("a-long-unusual-phrase-42")
