"""Serve plotly.js from the `plotly` Python package as static/vendor/plotly.min.js, so the 4.8 MB bundle is
not copied into the repository and its version always matches the installed package (collectstatic and
the development server both see it through this finder)."""

from __future__ import annotations

from pathlib import Path

from django.contrib.staticfiles.finders import BaseFinder
from django.core.files.storage import FileSystemStorage

VENDOR_NAME = "vendor/plotly.min.js"


def plotly_dir() -> Path:
    import plotly

    return Path(plotly.__file__).resolve().parent / "package_data"


class PlotlyFinder(BaseFinder):
    def __init__(self, *args, **kwargs):
        self.storage = FileSystemStorage(location=str(plotly_dir()))
        self.storage.prefix = "vendor"

    def check(self, **kwargs):
        if not (plotly_dir() / "plotly.min.js").exists():
            from django.core.checks import Error

            return [Error("plotly.min.js is missing from the plotly package.", id="memoryui.E001")]
        return []

    def find(self, path, find_all=False, **kwargs):
        if path != VENDOR_NAME:
            return [] if find_all else None
        match = str(plotly_dir() / "plotly.min.js")
        return [match] if find_all else match

    def list(self, ignore_patterns):
        yield "plotly.min.js", self.storage
