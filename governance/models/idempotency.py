"""The answers of API writes sent with an `Idempotency-Key` header (governance/services/idempotency.py):
one row per (principal, token, key), written in the same transaction as the write it answers, so a repeat
of the request replays the answer instead of writing again."""

from __future__ import annotations

import base64
import hashlib

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.db import models


def answer_fernet():
    """Stored answers are encrypted at rest (Fernet), under a key derived from SECRET_KEY (its fallbacks
    still decrypt): an answer may hold a secret shown once (a new token, a webhook's signing secret) or a
    memory's text, and neither should sit in a table in clear for a day."""
    from cryptography.fernet import Fernet, MultiFernet

    roots = [settings.SECRET_KEY, *getattr(settings, "SECRET_KEY_FALLBACKS", [])]
    keys = [
        base64.urlsafe_b64encode(hashlib.sha256(b"memgov-idempotent-answer\x00" + r.encode()).digest())
        for r in roots
    ]
    return MultiFernet([Fernet(k) for k in keys])


class IdempotentRequest(models.Model):
    """A write the service has answered under an idempotency key: who sent it (the principal, and the
    token it used: an answer shaped by one token's bound is never replayed to another), a hash of the
    request (method, path, query, body), and the answer (status, content type, encrypted body). The
    memories whose text the answer holds are listed, so a forget withdraws the answer
    (propagation.stores.answers_withdraw)."""

    principal = models.ForeignKey("governance.Principal", on_delete=models.CASCADE, related_name="+")
    token = models.ForeignKey(
        "governance.ApiToken", null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    key = models.CharField(max_length=255)
    request_hash = models.CharField(max_length=64)
    # Null until the write's answer is stored, in the same transaction: no other transaction sees it so.
    status_code = models.PositiveSmallIntegerField(null=True)
    content_type = models.CharField(max_length=100, blank=True, default="")
    body = models.BinaryField(default=b"")
    memory_ids = ArrayField(models.BigIntegerField(), default=list, blank=True)
    # Set when a cited memory was hard-forgotten: the body is emptied and a repeat answers 410.
    withdrawn_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField()
    expires_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["principal", "token", "key"], nulls_distinct=False, name="idempotency_key_unique"
            ),
        ]
        indexes = [models.Index(fields=["expires_at"], name="idempotency_expiry")]

    def __str__(self) -> str:
        return f"{self.key} ({self.status_code})"
