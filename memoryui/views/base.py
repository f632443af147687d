"""What every dashboard page shares: sign-in, the acting principal, the user's time zone, the focused
scope, and domain errors rendered as a page with their 4xx status (never a 500 for bad input)."""

from __future__ import annotations

import functools
import zoneinfo
from urllib.parse import unquote, urlencode

from django import forms
from django.contrib.auth.decorators import login_required
from django.core.exceptions import NON_FIELD_ERRORS
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.utils import timezone

from governance.errors import DomainError, InvalidInput
from governance.selectors import dashboard as sel
from governance.services.principal import principal_for_user
from memoryui.forms.focus import FocusForm

TZ_COOKIE = "tz"
NUL_REFUSED = "{field} holds a NUL character, which no text here can hold: remove it."


def activate_user_timezone(request: HttpRequest) -> None:
    """Times are shown in the browser's zone (static/js/common.js stores it in a cookie); UTC until known."""
    name = unquote(request.COOKIES.get(TZ_COOKIE, ""))[:64]
    try:
        timezone.activate(zoneinfo.ZoneInfo(name)) if name else timezone.deactivate()
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        timezone.deactivate()


def dashboard_view(json: bool = False):
    """Wrap a view: sign-in required, `request.principal` and `request.scope` set, errors rendered."""

    def wrap(view):
        @login_required
        @functools.wraps(view)
        def inner(request: HttpRequest, *args, **kwargs) -> HttpResponse:
            activate_user_timezone(request)
            request.principal = principal_for_user(request.user)
            try:
                focus = cleaned(FocusForm(request.GET))
                request.scope = sel.scope_for_path(request.principal, focus["scope"])
                return view(request, *args, **kwargs)
            except DomainError as exc:
                if json:
                    return JsonResponse(exc.as_dict(), status=exc.status)
                return render_error(request, exc)

        return inner

    return wrap


def cleaned(form: forms.BaseForm) -> dict:
    """A bound form's cleaned data; else InvalidInput with its first error and the field it names, which
    the page renders as a 400 with that sentence before anything is changed (the dashboard's
    governance.api.validation.valid). The one helper every dashboard form goes through."""
    if form.is_valid():
        return form.cleaned_data
    field, errors = next(iter(form.errors.as_data().items()))
    message = next(iter(errors[0]))  # the sentence, its %(…)s filled in
    if errors[0].code == "null_characters_not_allowed":  # Django's own sentence does not say where
        message = NUL_REFUSED.format(field=field)
    raise InvalidInput(message, **({} if field == NON_FIELD_ERRORS else {"field": field}))


def render_error(request: HttpRequest, exc: DomainError) -> HttpResponse:
    template = "dashboard/_error.html" if getattr(request, "htmx", False) else "dashboard/error.html"
    return render(request, template, {"error": exc, **nav_context(request)}, status=exc.status)


def chart_time(value) -> str:
    """A time for Plotly, which ignores UTC offsets: the wall-clock time in the user's zone."""
    return timezone.localtime(value).replace(tzinfo=None).isoformat()


def scope_query(request: HttpRequest, **extra) -> str:
    """The query string that keeps the focused scope on links between pages."""
    params = {"scope": request.scope.path} if getattr(request, "scope", None) else {}
    params.update({k: v for k, v in extra.items() if v not in (None, "")})
    return ("?" + urlencode(params)) if params else ""


def nav_context(request: HttpRequest) -> dict:
    principal = getattr(request, "principal", None)
    return {
        "scope": getattr(request, "scope", None),
        "scope_qs": scope_query(request) if principal else "",
    }


def page(request: HttpRequest, template: str, context: dict, status: int = 200) -> HttpResponse:
    return render(request, template, {**nav_context(request), **context}, status=status)


def page_links(request: HttpRequest, page_obj) -> dict:
    """Previous/next links that keep every current filter."""
    params = request.GET.copy()
    links = {}
    if page_obj.has_previous():
        params["page"] = page_obj.previous_page_number()
        links["prev"] = "?" + params.urlencode()
    if page_obj.has_next():
        params["page"] = page_obj.next_page_number()
        links["next"] = "?" + params.urlencode()
    return links
