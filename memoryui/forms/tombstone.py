"""The query of a forgotten memory's page (memoryui/views/tombstone.py)."""

from __future__ import annotations

from django import forms


class TombstoneForm(forms.Form):
    """`?look=text`: an owner's explicit look at a soft-forgotten memory's text."""

    look = forms.CharField(required=False)

    def clean_look(self) -> bool:
        return self.cleaned_data["look"] == "text"
