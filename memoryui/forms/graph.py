"""The graph page's query (its page and its data alike): which relation kinds to draw (all when none is
ticked), and the memory to centre on with how far around it to go."""

from __future__ import annotations

from django import forms

from governance.models import RelationKind
from memoryui.forms.inputs import IdField

BAD_KIND = "kind is one of supersedes, contradicts, supports or derived_from."
BAD_MEMORY = "memory is a memory's number (a whole number)."
BAD_DEPTH = "depth is 1 or 2."


class GraphForm(forms.Form):
    kind = forms.MultipleChoiceField(
        choices=RelationKind.choices, required=False, error_messages={"invalid_choice": BAD_KIND}
    )
    memory = IdField(message=BAD_MEMORY, required=False)
    depth = forms.TypedChoiceField(
        choices=[("1", "1"), ("2", "2")],
        coerce=int,
        required=False,
        empty_value=1,
        error_messages={"invalid_choice": BAD_DEPTH},
    )
