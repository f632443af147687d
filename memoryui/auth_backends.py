"""Sign-in through django-axes: failed attempts are counted and a locked-out sign-in is refused."""

from axes.backends import AxesStandaloneBackend


class LockoutBackend(AxesStandaloneBackend):
    """Axes' check, for sign-ins that come with a request (the login page, the admin). A call without a
    request is code authenticating on its own behalf (Django's test client, a management command): there
    is no client to count attempts for, and axes would refuse it outright."""

    def authenticate(self, request=None, username=None, password=None, **kwargs):
        if request is None:
            return None
        return super().authenticate(request, username=username, password=password, **kwargs)


def _loopback(address: str | None) -> bool:
    import ipaddress

    try:
        return ipaddress.ip_address((address or "").split("%", 1)[0]).is_loopback
    except ValueError:
        return False


def client_ip(request) -> str | None:
    """The client's address for counting failed sign-ins and for METRICS_ALLOWED_IPS: REMOTE_ADDR, or with
    TRUSTED_PROXY_COUNT proxies in front, the address the outermost of them saw (X-Forwarded-For, counted
    from the right: entries further left are whatever the client chose to send).

    With TRUSTED_PROXY_COUNT=0, a request from a loopback address that carries X-Forwarded-For came
    through a proxy on this host (only a process here can connect from loopback), so that proxy counts as
    one: otherwise every client would share the proxy's 127.0.0.1, which METRICS_ALLOWED_IPS lets in and
    on which one client's failed sign-ins lock out everyone's (docs/operations.md)."""
    from django.conf import settings

    proxies = settings.REST_FRAMEWORK.get("NUM_PROXIES") or 0
    forwarded = request.META.get("HTTP_X_FORWARDED_FOR", "")
    remote = request.META.get("REMOTE_ADDR")
    if not proxies and forwarded and _loopback(remote):
        proxies = 1
    if proxies and forwarded:
        hops = [h.strip() for h in forwarded.split(",") if h.strip()]
        if hops:
            return hops[-min(proxies, len(hops))]
    return remote
