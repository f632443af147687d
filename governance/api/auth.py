"""`Authorization: Token <key>`: the key's SHA-256 is looked up; the request acts as the token's principal."""

from __future__ import annotations

from datetime import timedelta

from django.contrib.auth import get_user_model
from django.db import connection
from django.utils import timezone
from rest_framework import authentication, exceptions

from governance.models import ApiToken, Principal, hash_token
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
        token = _active_token(hash_token(raw))
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


def _active_token(key_hash: str) -> ApiToken | None:
    """The unrevoked token with this hash, its principal and the principal's user, in one query. Written
    out rather than select_related(…).first(): on every API request, compiling that queryset cost three
    times what the database took to answer it."""
    models = (ApiToken, Principal, get_user_model())
    columns = [[f"{alias}.{connection.ops.quote_name(f.column)}" for f in m._meta.concrete_fields]
               for m, alias in zip(models, ("t", "p", "u"), strict=True)]
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT {', '.join(c for cols in columns for c in cols)}"
            f" FROM {ApiToken._meta.db_table} t JOIN {Principal._meta.db_table} p ON p.id = t.principal_id"
            f" LEFT JOIN {models[2]._meta.db_table} u ON u.id = p.user_id"
            " WHERE t.key_hash = %s AND t.revoked_at IS NULL",
            [key_hash],
        )
        row = cursor.fetchone()
    if row is None:
        return None
    values, at = [], 0
    for model in models:
        n = len(model._meta.concrete_fields)
        values.append(row[at:at + n])
        at += n
    token = ApiToken.from_db(connection.alias, None, values[0])
    principal = Principal.from_db(connection.alias, None, values[1])
    if principal.user_id is not None:
        principal.user = models[2].from_db(connection.alias, None, values[2])
    token.principal = principal
    return token


def request_principal(request):
    """The acting principal of an API or dashboard request (token or signed-in user)."""
    if isinstance(request.user, TokenUser):
        return request.user.principal
    return principal_for_user(request.user)
