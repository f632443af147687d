"""`Authorization: Token <key>`: the key's SHA-256 is looked up; the request acts as the token's principal."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone
from rest_framework import authentication, exceptions

from governance.models import ApiToken, hash_token
from governance.services.principal import principal_for_user

LAST_USED_RESOLUTION = timedelta(minutes=1)


class TokenUser:
    """What `request.user` is for a token request: authenticated, with the token's principal."""

    is_authenticated = True
    is_anonymous = False
    is_active = True
    is_staff = False

    def __init__(self, principal):
        self.principal = principal
        self.pk = None
        self.username = principal.name

    def get_username(self) -> str:
        return self.username


class TokenAuthentication(authentication.BaseAuthentication):
    keyword = "Token"

    def authenticate(self, request):
        header = authentication.get_authorization_header(request).split()
        if not header or header[0].lower() != self.keyword.lower().encode():
            return None
        if len(header) != 2:
            raise exceptions.AuthenticationFailed("The Authorization header is `Token <key>`.")
        raw = header[1].decode(errors="replace")
        token = (
            ApiToken.objects.select_related("principal", "principal__user")
            .filter(key_hash=hash_token(raw), revoked_at__isnull=True)
            .first()
        )
        if token is None:
            raise exceptions.AuthenticationFailed("This token is unknown or revoked.")
        now = timezone.now()
        # A write (and its commit) per request is the most expensive part of authenticating: record the
        # use at most once a minute, which is all "last used" needs to say.
        if token.last_used_at is None or now - token.last_used_at >= LAST_USED_RESOLUTION:
            ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
        principal = token.principal
        user = principal.user if principal.user_id else TokenUser(principal)
        return (user, token)

    def authenticate_header(self, request):
        return self.keyword


def request_principal(request):
    """The acting principal of an API or dashboard request (token or signed-in user)."""
    if isinstance(request.user, TokenUser):
        return request.user.principal
    return principal_for_user(request.user)
