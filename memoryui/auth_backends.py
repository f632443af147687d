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


def client_ip(request) -> str | None:
    """The client's address for counting failed sign-ins: REMOTE_ADDR, or with TRUSTED_PROXY_COUNT proxies
    in front, the address the outermost of them saw (X-Forwarded-For, counted from the right: entries
    further left are whatever the client chose to send)."""
    from django.conf import settings

    proxies = settings.REST_FRAMEWORK.get("NUM_PROXIES") or 0
    forwarded = request.META.get("HTTP_X_FORWARDED_FOR", "")
    if proxies and forwarded:
        hops = [h.strip() for h in forwarded.split(",") if h.strip()]
        if hops:
            return hops[-min(proxies, len(hops))]
    return request.META.get("REMOTE_ADDR")
