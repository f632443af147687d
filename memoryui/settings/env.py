"""Small typed readers for environment variables that fail loudly on a bad value."""

from __future__ import annotations

import os


class ImproperlyConfiguredValue(ValueError):
    pass


def env_str(name: str, default: str | None = None) -> str | None:
    value = os.environ.get(name)
    return default if value in (None, "") else value


def env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value in (None, ""):
        return default
    lowered = value.strip().lower()
    if lowered in {"1", "true", "yes", "on"}:
        return True
    if lowered in {"0", "false", "no", "off"}:
        return False
    raise ImproperlyConfiguredValue(f"{name}={value!r} is not a boolean (use true/false)")


def env_int(name: str, default: int) -> int:
    value = os.environ.get(name)
    if value in (None, ""):
        return default
    try:
        return int(value)
    except ValueError as exc:
        raise ImproperlyConfiguredValue(f"{name}={value!r} is not an integer") from exc


def env_float(name: str, default: float) -> float:
    value = os.environ.get(name)
    if value in (None, ""):
        return default
    try:
        return float(value)
    except ValueError as exc:
        raise ImproperlyConfiguredValue(f"{name}={value!r} is not a number") from exc


def env_list(name: str, default: list[str]) -> list[str]:
    value = os.environ.get(name)
    if value in (None, ""):
        return default
    return [item.strip() for item in value.split(",") if item.strip()]


def env_required(name: str) -> str:
    value = os.environ.get(name)
    if value in (None, ""):
        raise ImproperlyConfiguredValue(
            f"{name} must be set. For local development, `make run` sets it for you."
        )
    return value
