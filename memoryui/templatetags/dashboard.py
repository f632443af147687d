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
    return format_html('<time datetime="{}" title="{}">{}</time>', value.isoformat(),
                       local.strftime("%Y-%m-%d %H:%M:%S %Z"), local.strftime("%Y-%m-%d %H:%M %Z"))


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
