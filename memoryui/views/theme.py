"""The theme switch: light, dark or the system's, kept in a cookie the server reads (so every page is
rendered in it from the first byte, in every session of that browser, signed in or not)."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_POST

from governance.errors import DomainError
from memoryui.forms.theme import BAD_THEME, THEMES, ThemeForm  # noqa: F401  (where they were)
from memoryui.views.base import cleaned, render_error

THEME_COOKIE = "theme"
ONE_YEAR = 365 * 24 * 3600


def theme_of(request: HttpRequest) -> str:
    value = request.COOKIES.get(THEME_COOKIE, "")
    return value if value in THEMES else "system"


@require_POST
def theme_set(request: HttpRequest) -> HttpResponse:
    try:
        data = cleaned(ThemeForm(request.POST))
    except DomainError as exc:
        return render_error(request, exc)
    theme, back = data["theme"], data["next"] or "/"
    if not url_has_allowed_host_and_scheme(
        back, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        back = "/"
    response = redirect(back)
    if theme == "system":
        response.delete_cookie(THEME_COOKIE, samesite="Lax")
    else:
        response.set_cookie(
            THEME_COOKIE, theme, max_age=ONE_YEAR, samesite="Lax", secure=request.is_secure(), httponly=True
        )
    return response
