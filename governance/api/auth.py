"""`Authorization: Token <key>`: the key's SHA-256 is looked up; the request acts as the token's principal,
bound to what the token was issued for (governance.permissions.TokenBound). Revoked and expired tokens,
and tokens of a deactivated user, are refused with 401."""

from __future__ import annotations

from datetime import timedelta

from django.contrib.auth import get_user_model
from django.db import connection
from django.utils import timezone
from rest_framework import authentication, exceptions

from governance.models import ApiToken, Principal, Scope, hash_token
from governance.permissions import bind_token
from governance.runtime.dbretry import repeatable
from governance.runtime.prepared import prepared_cursor
from governance.runtime.replica import bookkeeping
from governance.services.principal import principal_for_user

LAST_USED_RESOLUTION = timedelta(minutes=1)
BAD_HEADER = "The Authorization header is `Token <key>`."
TOKEN_UNKNOWN = "This token is unknown or revoked."
TOKEN_EXPIRED = "This token has expired; ask for a new one."
TOKEN_USER_INACTIVE = "This token belongs to a deactivated user."


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
        # Once per request: the idempotency middleware (governance/api/idempotency.py) authenticates the
        # key's owner before the view does, on the same request.
        http = getattr(request, "_request", request)
        if (done := getattr(http, "_token_authenticated", None)) is not None:
            return done
        result = self._authenticate(request)
        if result is not None:
            http._token_authenticated = result
        return result

    def _authenticate(self, request):
        header = authentication.get_authorization_header(request).split()
        if not header or header[0].lower() != self.keyword.lower().encode():
            return None
        if len(header) != 2:
            raise exceptions.AuthenticationFailed(BAD_HEADER)
        raw = header[1].decode(errors="replace")
        token = _active_token(hash_token(raw))
        if token is None:
            raise exceptions.AuthenticationFailed(TOKEN_UNKNOWN)
        now = timezone.now()
        if token.expires_at is not None and token.expires_at <= now:
            raise exceptions.AuthenticationFailed(TOKEN_EXPIRED)
        principal = token.principal
        if principal.user_id is not None and not principal.user.is_active:
            raise exceptions.AuthenticationFailed(TOKEN_USER_INACTIVE)
        # A write (and its commit) per request is the most expensive part of authenticating: record the
        # use at most once a minute, which is all "last used" needs to say.
        if token.last_used_at is None or now - token.last_used_at >= LAST_USED_RESOLUTION:
            # Bookkeeping: a read replica may still answer this request (runtime/replica.py), and the
            # request may still run again after a dropped connection (runtime/dbretry.py).
            with bookkeeping(), repeatable():
                ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
        user = principal.user if principal.user_id else TokenUser(principal)
        return (user, token)

    def authenticate_header(self, request):
        return self.keyword


def _active_token(key_hash: str) -> ApiToken | None:
    """The unrevoked token with this hash, its principal, the principal's user and the tree of the token's
    bound scope, in one query, with the bound attached to the principal. Written out rather than
    select_related(…).first(): on every API request, compiling that queryset cost three times what the
    database took to answer it."""
    models = (ApiToken, Principal, get_user_model())
    columns = [
        [f"{alias}.{connection.ops.quote_name(f.column)}" for f in m._meta.concrete_fields]
        for m, alias in zip(models, ("t", "p", "u"), strict=True)
    ]
    # Prepared on the server (runtime/prepared.py): the same text on every request, planned once a connection.
    with prepared_cursor(connection) as cursor:
        cursor.execute(
            f"SELECT {', '.join(c for cols in columns for c in cols)}, b.tree, b.path"
            f" FROM {ApiToken._meta.db_table} t JOIN {Principal._meta.db_table} p ON p.id = t.principal_id"
            f" LEFT JOIN {models[2]._meta.db_table} u ON u.id = p.user_id"
            f" LEFT JOIN {Scope._meta.db_table} b ON b.id = t.scope_id"
            " WHERE t.key_hash = %s AND t.revoked_at IS NULL",
            [key_hash],
        )
        row = cursor.fetchone()
    if row is None:
        return None
    values, at = [], 0
    for model in models:
        n = len(model._meta.concrete_fields)
        values.append(row[at : at + n])
        at += n
    token = ApiToken.from_db(connection.alias, None, values[0])
    principal = Principal.from_db(connection.alias, None, values[1])
    if principal.user_id is not None:
        principal.user = models[2].from_db(connection.alias, None, values[2])
        # user.principal is this same object (with its bound), not a second, unbound copy from the database.
        Principal.user.field.remote_field.set_cached_value(principal.user, principal)
    token.principal = bind_token(principal, token, row[at], row[at + 1])
    return token


def request_principal(request):
    """The acting principal of an API or dashboard request (token, bound to what it was issued for; or
    signed-in user)."""
    if isinstance(getattr(request, "auth", None), ApiToken):
        return request.auth.principal
    if isinstance(request.user, TokenUser):
        return request.user.principal
    return principal_for_user(request.user)
