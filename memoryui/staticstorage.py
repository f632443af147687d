"""Static files with a hash of their content in their names and gzip and brotli copies beside them
(WhiteNoise's CompressedManifestStaticFilesStorage), so WhiteNoise serves them compressed with a cache of
ten years: a changed file gets a new name, and a browser never asks again for one it holds.

Django hashes names only with DEBUG off. STATIC_SERVE_COLLECTED (settings) makes it hash them with DEBUG on
too: `make run` collects the files when it starts and serves the collected ones exactly as production
does. A bare `manage.py runserver` leaves it off and serves the source files under their own names."""

from __future__ import annotations

from django.conf import settings
from whitenoise.storage import CompressedManifestStaticFilesStorage


class HashedCompressedStorage(CompressedManifestStaticFilesStorage):
    def url(self, name, force=False):
        return super().url(name, force=force or settings.STATIC_SERVE_COLLECTED)
