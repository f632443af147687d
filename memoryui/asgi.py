"""The service as an ASGI app (e.g. `uvicorn memoryui.asgi:application`, or gunicorn with uvicorn
workers), with the MCP endpoint at /mcp in the same process when the `memgov[mcp]` client package is
installed and MEMGOV_MCP is not `0`.

The MCP endpoint takes each caller's own service token (`Authorization: Bearer`) and calls the REST API
in process (no socket; the same views, token checks and permission rules as any other request).
MEMGOV_MCP_ALLOWED_HOSTS (comma-separated host[:port] patterns) turns on the SDK's DNS rebinding
protection for it. The WSGI app (memoryui.wsgi) has no MCP endpoint: the SDK's streamable HTTP transport
is ASGI only; run `memgov-mcp --http PORT` beside a WSGI deployment instead."""

from __future__ import annotations

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryui.settings.production")
django_application = get_asgi_application()


def _service_url() -> str:
    """A scheme and host the service accepts for the in-process calls (one of ALLOWED_HOSTS)."""
    from django.conf import settings

    for host in settings.ALLOWED_HOSTS:
        if host == "*":
            return "https://localhost"
        if host.startswith("."):
            return f"https://mcp{host}"
        if host:
            return f"https://{host}"
    return "https://localhost"


def with_mcp(app):
    """`app` with the MCP endpoint mounted at /mcp, or `app` itself without the mcp extra."""
    if os.environ.get("MEMGOV_MCP", "1") == "0":
        return app
    try:
        from memgov.mcp_server import asgi_app
    except ImportError:  # the client package (or its mcp extra) is not installed here
        return app
    try:
        import mcp  # noqa: F401
    except ImportError:
        return app
    hosts = [h.strip() for h in os.environ.get("MEMGOV_MCP_ALLOWED_HOSTS", "").split(",") if h.strip()]
    return asgi_app(
        app,
        service_url=_service_url(),
        scope=os.environ.get("MEMGOV_SCOPE") or None,
        allowed_hosts=hosts or None,
    )


application = with_mcp(django_application)
