from governance.embedding.backends import get_embedder
from governance.embedding.base import Embedder

__all__ = ["Embedder", "get_embedder"]
