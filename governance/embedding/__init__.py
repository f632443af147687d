from governance.embedding.base import Embedder, get_embedder

__all__ = ["Embedder", "get_embedder"]
