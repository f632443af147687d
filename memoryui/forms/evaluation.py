"""Forms of the evaluation pages (memoryui/views/evaluation.py): the pages' queries and the upload. A page
number is read as Django's paginator reads it (anything but a page number is the first or last page, as
on every paged list); a run's number that is not one is a 400, never the latest run in its place."""

from __future__ import annotations

from django import forms

from memoryui.forms.inputs import IdField

FILE_REQUIRED = "Choose a LoCoMo or LongMemEval file to upload."
WORKSPACE_REQUIRED = "Pick the workspace the evaluation belongs to."
BAD_RUN = "run is an evaluation run's number, such as 12."


def _page() -> forms.CharField:
    return forms.CharField(required=False, empty_value=1)


class EvaluationPageForm(forms.Form):
    """The runs' history: which page of it."""

    page = _page()


class EvaluationRunPageForm(forms.Form):
    """One run's page: which page of its tasks or misses, and `show=all` for the passing ones too."""

    page = _page()
    show = forms.CharField(required=False)

    def clean_show(self) -> bool:
        return self.cleaned_data["show"] == "all"


class EvaluationChartForm(forms.Form):
    """The chart's data: a run (`?run=`), else the latest replay-suite run."""

    run = IdField(required=False, message=BAD_RUN)


class EvaluationUploadForm(forms.Form):
    """The file (its size is checked by the view before it is read), the workspace it belongs to, and the
    format (empty: told from the file)."""

    file = forms.FileField(
        allow_empty_file=True, error_messages={"required": FILE_REQUIRED, "invalid": FILE_REQUIRED}
    )
    workspace = forms.CharField(error_messages={"required": WORKSPACE_REQUIRED})
    format = forms.CharField(required=False, empty_value=None)
