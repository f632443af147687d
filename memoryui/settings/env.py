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


def env_required(
    name: str, hint: str = "the development settings on the embedded stack keep their own key under var/"
) -> str:
    value = os.environ.get(name)
    if value in (None, ""):
        raise ImproperlyConfiguredValue(f"{name} must be set ({hint}).")
    return value


_RATE_UNITS = {"s", "sec", "second", "m", "min", "minute", "h", "hour", "d", "day"}


def env_rate(name: str, default: str | None) -> str | None:
    """A DRF throttle rate such as `600/min`; `off` (or `none`) for no limit."""
    value = os.environ.get(name)
    if value in (None, ""):
        return default
    value = value.strip()
    if value.lower() in {"off", "none"}:
        return None
    count, _, unit = value.partition("/")
    if not count.isdigit() or unit.lower() not in _RATE_UNITS:
        raise ImproperlyConfiguredValue(
            f"{name}={value!r} is not a rate (e.g. 600/min, 20/s, 5000/hour, off)"
        )
    return value
