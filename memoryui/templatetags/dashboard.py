"""Small presentation helpers for the dashboard templates."""

from __future__ import annotations

from django import template
from django.utils import timezone
from django.utils.html import format_html

register = template.Library()


@register.simple_tag
def when(value):
    """A time in the user's zone, machine-readable in the datetime attribute."""
    if not value:
        return format_html('<span class="muted">—</span>')
    local = timezone.localtime(value)
    return format_html(
        '<time datetime="{}" title="{}">{}</time>',
        value.isoformat(),
        local.strftime("%Y-%m-%d %H:%M:%S %Z"),
        local.strftime("%Y-%m-%d %H:%M %Z"),
    )


@register.simple_tag
def status(value):
    return format_html('<span class="badge status-{}">{}</span>', value or "none", value or "—")


@register.filter
def activation(value):
    if value is None:
        return "—"
    return f"{value:.3g}"


@register.filter
def pct(value, total):
    try:
        return round(100 * float(value) / float(total), 1) if total else 0
    except (TypeError, ValueError):
        return 0


@register.filter
def get(mapping, key):
    return (mapping or {}).get(key) if hasattr(mapping, "get") else None


@register.filter
def duration(value):
    """A timedelta in words at its largest useful unit: "40 s", "12 min", "3 h 5 min", "2 days"."""
    if value is None:
        return "—"
    seconds = max(int(value.total_seconds()), 0)
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min"
    if seconds < 86400:
        return f"{seconds // 3600} h {seconds % 3600 // 60} min"
    return f"{seconds // 86400} days"


@register.simple_tag
def help(slug, label=""):
    """A glossary word: `label` (when given) as an <abbr> with the short meaning, then a "?" link to the
    glossary's entry carrying the same meaning as its title."""
    from django.urls import reverse

    from memoryui.views.glossary import term

    t = term(slug)
    url = reverse("dashboard:glossary") + "#" + t.slug
    link = format_html(
        '<a class="help" href="{}" title="{}" aria-label="What is {}?">?</a>', url, t.short, t.name.lower()
    )
    if label:
        return format_html('<abbr title="{}">{}</abbr>{}', t.short, label, link)
    return link


@register.simple_tag(takes_context=True)
def theme(context):
    """The user's theme (the theme cookie): "light", "dark" or "system" (memoryui.views.theme)."""
    from memoryui.views.theme import theme_of

    request = context.get("request")
    return theme_of(request) if request is not None else "system"


@register.simple_tag(takes_context=True)
def awaiting_you(context):
    """What awaits the signed-in person's decision in the focused scope (memoryui.views.awaiting: read
    once per request, nothing for a page without a principal)."""
    from memoryui.views.awaiting import awaiting_for

    request = context.get("request")
    return awaiting_for(request, getattr(request, "scope", None)) if request is not None else None


@register.simple_tag(takes_context=True)
def menu(context):
    """The menu sections that lead this person somewhere (permissions.menu_sections), read once per
    request: the page's principal when the view set it, else the signed-in user's."""
    request = context.get("request")
    if request is None or not request.user.is_authenticated:
        return frozenset()
    cached = getattr(request, "_menu_sections", None)
    if cached is None:
        from governance.permissions import menu_sections
        from governance.services.principal import principal_for_user

        principal = getattr(request, "principal", None) or principal_for_user(request.user)
        cached = request._menu_sections = menu_sections(principal)
    return cached


@register.simple_tag(takes_context=True)
def no_grant_note(context):
    """For a person holding no grant at all: whom to ask (permissions.NO_GRANT); nothing for anyone else."""
    from governance.permissions import NO_GRANT, READING

    if not context.get("request") or READING in menu(context):
        return ""
    return format_html('<p class="msg" id="no-grant">{}</p>', NO_GRANT)


@register.filter
def memory_label(obj, bare=""):
    """A memory's one label (memoryui.labels): `key rN · scope`, or `#id excerpt · scope`, the scope in a
    span that truncates on a phone and keeps the whole path in its title. `|memory_label:"bare"` leaves the
    excerpt out (a forgotten memory's tombstone names its neighbours without any words)."""
    from memoryui.labels import SEP, fields_of, label_parts

    f = fields_of(obj)
    name, excerpt = label_parts(
        pk=f["pk"], key=f["key"], revision=f["revision"], text=f["text"], hidden=f["hidden"] or bool(bare)
    )
    head = format_html('{} <span class="mlabel-text">{}</span>', name, excerpt) if excerpt else name
    if not f["scope_path"]:
        return format_html('<span class="mlabel">{}</span>', head)
    return format_html(
        '<span class="mlabel">{}{}<span class="mlabel-scope" title="{}">{}</span></span>',
        head,
        SEP,
        f["scope_path"],
        f["scope_path"],
    )
