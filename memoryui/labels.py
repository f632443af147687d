"""One name for a memory wherever the dashboard shows one: "export_format r2 · demo/slides" (key, revision,
scope path), or for an unkeyed memory "#12 excerpt · demo/slides". Two memories of the same key and revision
in two scopes then never look alike (issue 51). `memory_label` is the plain text (chart JSON, JSON answers);
the `memory_label` template filter (memoryui.templatetags.dashboard) renders the same words with the scope in
a span that truncates on a narrow screen and keeps the whole path in its title.

Labels are only built for memories the viewer may read (every caller passes a memory a reader resolved or a
selector filtered by the reader's grants): the scope path is no secret to that viewer."""

from __future__ import annotations

from typing import Any

EXCERPT = 40
SEP = " · "


def _short(text: str, limit: int = EXCERPT) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def label_parts(
    *, pk: int | None, key: str | None, revision: int | None, text: str = "", hidden: bool = False
) -> tuple[str, str]:
    """(name, excerpt): the key and revision, or "#id" and a short excerpt (none when `hidden`: a forgotten
    memory's words are never shown)."""
    if key:
        return f"{key} r{revision}", ""
    return f"#{pk}", "" if hidden else _short(text)


def memory_label(
    *,
    pk: int | None,
    key: str | None,
    revision: int | None,
    scope_path: str = "",
    text: str = "",
    hidden: bool = False,
) -> str:
    """The plain-text label: "key rN · scope", or "#id excerpt · scope"."""
    name, excerpt = label_parts(pk=pk, key=key, revision=revision, text=text, hidden=hidden)
    head = f"{name} {excerpt}" if excerpt else name
    return f"{head}{SEP}{scope_path}" if scope_path else head


def fields_of(obj: Any) -> dict:
    """The label's fields from a Memory, a values() row, a packet block or a drop label (whichever names
    they use for the id, the text and the scope)."""
    if isinstance(obj, dict):
        get = obj.get
        pk = get("memory_id") or get("pk") or get("id")
        scope = get("scope_path") or get("scope__path") or get("scope") or ""
        text = get("text") or get("excerpt") or ""
        status = get("status_now") or get("status")
        purged = get("purged_at") or get("forgotten")
    else:
        pk = getattr(obj, "pk", None) or getattr(obj, "id", None)

        def get(name, default=None):
            return getattr(obj, name, default)

        # A Memory's scope (select_related by the caller: one query per label otherwise), or a drop label's path.
        scope = get("scope_path") or get("scope") or ""
        text = get("text", "") or get("excerpt", "") or ""
        status = get("status")
        purged = get("purged_at") or get("forgotten")
    return {
        "pk": pk,
        "key": get("key"),
        "revision": get("revision"),
        "scope_path": scope if isinstance(scope, str) else getattr(scope, "path", ""),
        "text": text,
        "hidden": status == "forgotten" or bool(purged),
    }


def label_of(obj: Any) -> str:
    """memory_label for a Memory, a values() row or a packet block."""
    return memory_label(**fields_of(obj))
