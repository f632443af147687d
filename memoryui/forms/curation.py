"""The memory page's curation forms: link this memory to another (picked from the search, or typed by
id), remove a link, search the picker, and request a promotion citing ticked episodes. What a link or a
promotion needs beyond its shape (a reason, a kind drawn by hand, readable memories) the services decide."""

from __future__ import annotations

from django import forms

from memoryui.forms.inputs import IdField, IdListField, text

TARGET_REQUIRED = "Pick the memory to link to: search for it, or give its id."
EPISODES_REQUIRED = "Tick the episodes that support this promotion."
UNKNOWN_LINK = "Unknown link."
REASON_TOO_LONG = "A reason is at most 500 characters."
QUERY_TOO_LONG = "Search with at most 200 characters."
KIND_TOO_LONG = "kind is one of supports, contradicts or derived_from."


def _reason() -> forms.CharField:
    return text(limit=500, message=REASON_TOO_LONG)


class MemoryLinkForm(forms.Form):
    """`target` is the memory picked in the search; `target_id` the one typed when nothing was picked."""

    target = IdField(message=TARGET_REQUIRED, required=False)
    target_id = IdField(message=TARGET_REQUIRED, required=False)
    kind = text(limit=30, message=KIND_TOO_LONG)
    reason = _reason()

    def clean(self):
        data = super().clean()
        if not self.errors:
            data["target"] = data.get("target") or data.get("target_id")
            if data["target"] is None:
                self.add_error("target", TARGET_REQUIRED)
        return data


class MemoryUnlinkForm(forms.Form):
    relation = IdField(message=UNKNOWN_LINK)
    reason = _reason()


class LinkChoicesForm(forms.Form):
    q = text(limit=200, message=QUERY_TOO_LONG)


class MemoryPromoteForm(forms.Form):
    episodes = IdListField(message=EPISODES_REQUIRED)
    reason = _reason()
