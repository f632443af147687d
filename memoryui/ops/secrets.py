"""The credentials that travel inside a URL path (an invitation's token, a password reset's), and their
redaction: one rule for the log lines (memoryui.ops.logs) and the request spans (memoryui.ops.tracing)."""

from __future__ import annotations

import re

# Paths that carry a credential: the invitation link (`/invite/<token>/`, memoryui/views/urls.py) and
# Django's password reset link (`/accounts/reset/<uidb64>/<token>/`, django.contrib.auth.urls). Django's
# own 4xx lines ("Not Found: /invite/…"), the development server's and gunicorn's access log (the request
# line and the Referer a page under such a path sends: memoryui.ops.gunicorn_logging) name the path.
_PART = r"[^/\s\"'?#]+"
_SECRET_IN_PATH = re.compile(rf"(/invite/){_PART}|(/reset/){_PART}/{_PART}")
_MARKERS = ("/invite/", "/reset/")
REDACTED_TOKEN = "[redacted]"


def _redacted(match: re.Match) -> str:
    return f"{match[1]}{REDACTED_TOKEN}" if match[1] else f"{match[2]}{REDACTED_TOKEN}/{REDACTED_TOKEN}"


def redact_secrets(text: str) -> str:
    """`text` with the credential parts of secret-bearing paths replaced (invitation, password reset)."""
    return _SECRET_IN_PATH.sub(_redacted, text) if any(m in text for m in _MARKERS) else text


__all__ = ["REDACTED_TOKEN", "redact_secrets"]
