"""A sentence of a memory, embedded on its own (governance.models.lexical.passage_texts says which memories
have them and which sentences count). Derived from the memory like its own vector: written with it by the
embedding store (governance/propagation/embedding.py), dropped with it when the memory is purged, and read
only through the memory it belongs to, for memories recall may already show (recall/vector.py
nearest_and_passages): a passage never brings a memory the caller may not see."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from pgvector.django import VectorField


class Passage(models.Model):
    memory = models.ForeignKey("governance.Memory", on_delete=models.CASCADE, related_name="passages")
    # The memory's content hash when the passage was made: a passage of an older text is never read (the
    # read compares it with the memory's) and is replaced when the memory is embedded again.
    content_hash = models.CharField(max_length=64)
    embedding = VectorField(dimensions=settings.EMBEDDING_DIMENSIONS)

    class Meta:
        app_label = "governance"

    def __str__(self) -> str:
        return f"passage of memory {self.memory_id}"
