"""The import form of the export/import page: the file, the scope it goes under (and an optional new
child's name), what becomes of the file's grants, and whether to preview or import. The target is turned
into a scope by the permission resolver in the view; the file's content is the import service's."""

from __future__ import annotations

from django import forms

from governance.services.portability.import_ import GRANTS_DROP
from memoryui.forms.inputs import text

NO_FILE = "Choose an export file (.jsonl) to import."
TARGET_TOO_LONG = "A scope path is at most 512 characters."
NAME_TOO_LONG = "A scope's name is at most 63 characters."


class ScopeImportForm(forms.Form):
    # An empty file is the import service's to refuse, with the sentence it gives a bad file.
    file = forms.FileField(allow_empty_file=True, error_messages={"required": NO_FILE, "invalid": NO_FILE})
    target = text(limit=512, message=TARGET_TOO_LONG)
    name = text(limit=63, message=NAME_TOO_LONG)
    # Which values a grants choice may take is scope_import's rule (shared with the API and the command).
    grants = text(limit=20, message="grants is drop or keep.")
    action = text(limit=20, message="action is preview or import.")

    def clean_grants(self) -> str:
        return self.cleaned_data["grants"] or GRANTS_DROP
