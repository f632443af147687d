"""Idempotency keys for API writes (the `Idempotency-Key` header, after Stripe's and the IETF draft "The
Idempotency-Key HTTP Header Field"; docs/api.md, "Idempotency keys").

The rule, in one place: a write sent with a key is answered once. Its key row (owner, key, request hash)
is inserted at the start of the write's own transaction and its answer stored at the end of it, so the
write and the answer commit together or not at all. A repeat of the same request with the same key by
the same owner replays the stored answer and writes nothing; the same key with another request is refused
(422); a repeat while the first is still running waits for it (IDEMPOTENCY_KEY_WAIT_SECONDS: the unique
index holds it) and then replays, or is refused with 409 if it is still running. Answers of 5xx are never
stored (their transaction is rolled back), nor 401, 403 and 429 (the request did not get to run; the
next may). Keys expire after IDEMPOTENCY_KEY_TTL_HOURS; beat prunes them (prune_idempotency_keys).

The owner is the principal and the token it authenticated with (none for a signed-in person): another
principal's, or another token's, same key is another key."""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import OperationalError, connection, transaction
from django.utils import timezone

from governance.errors import Conflict, DomainError, InvalidInput
from governance.models import ApiToken, IdempotentRequest, Principal
from governance.models.idempotency import answer_fernet
from governance.permissions import memory_texts_readable

HEADER = "Idempotency-Key"
REPLAYED_HEADER = "Idempotent-Replayed"
MAX_KEY_LENGTH = 255
# Visible ASCII; the IETF draft sends the key as a structured-field string ("…"), whose quotes are dropped.
_KEY = re.compile(r"^[\x21-\x7e]{1,255}$")  # 255: MAX_KEY_LENGTH
# Answers that say the request did not get to run: not stored, the next attempt may run.
NOT_KEPT = frozenset({401, 403, 429})
LOCK_NOT_AVAILABLE = "55P03"


class KeyInvalid(InvalidInput):
    code = "idempotency_key_invalid"
    message = (
        f"The {HEADER} header must be 1 to {MAX_KEY_LENGTH} visible ASCII characters (a UUID is a good key)."
    )


class KeyReused(DomainError):
    code = "idempotency_key_reused"
    status = 422
    message = (
        f"This {HEADER} was already used for a different request (another method, path or body); send a "
        "new key for a new request."
    )


class KeyInUse(Conflict):
    code = "idempotency_key_in_use"
    message = (
        f"A request with this {HEADER} is still being processed; try again in a moment to get its answer."
    )


class AnswerWithdrawn(DomainError):
    code = "idempotent_answer_withdrawn"
    status = 410
    message = (
        f"The request with this {HEADER} was carried out, but its answer held a memory that has since been "
        "forgotten or is no longer visible to you, so it is not replayed (and the request is not run again)."
    )


def key_clean(raw: str) -> str:
    """The key of a header value, or KeyInvalid (400)."""
    value = raw.strip()
    if len(value) >= 2 and value[0] == value[-1] == '"':
        value = value[1:-1]
    if not _KEY.match(value):
        raise KeyInvalid()
    return value


def request_hash(*, method: str, path: str, body: bytes) -> str:
    """What makes two requests the same request: method, path with its query, and the body's bytes."""
    digest = hashlib.sha256()
    for part in (method.upper().encode(), path.encode(), body):
        digest.update(len(part).to_bytes(8, "big"))
        digest.update(part)
    return digest.hexdigest()


@dataclass(frozen=True)
class Claim:
    """A key this transaction holds (row_id) or the stored answer of an earlier request (replay)."""

    row_id: int | None = None
    replay: IdempotentRequest | None = None


_CLAIM_SQL = f"""
    INSERT INTO {IdempotentRequest._meta.db_table}
           (principal_id, token_id, key, request_hash, content_type, body, memory_ids, created_at, expires_at)
    VALUES (%s, %s, %s, %s, '', ''::bytea, '{{}}', %s, %s)
    ON CONFLICT DO NOTHING RETURNING id"""


def key_claim(*, principal: Principal, token: ApiToken | None, key: str, fingerprint: str) -> Claim:
    """Take the key for the running transaction, or find the answer stored under it. Must run inside the
    write's transaction (the middleware's): the key row commits with the write or not at all."""
    assert connection.in_atomic_block, "an idempotency key belongs to its write's transaction"
    now = timezone.now()
    expires = now + timedelta(hours=settings.IDEMPOTENCY_KEY_TTL_HOURS)
    token_id = token.pk if token is not None else None
    for _ in range(2):
        row_id = _insert(principal.pk, token_id, key, fingerprint, now, expires)
        if row_id is not None:
            return Claim(row_id=row_id)
        stored = (
            IdempotentRequest.objects.filter(principal_id=principal.pk, token_id=token_id, key=key)
            .select_for_update()
            .first()
        )
        if stored is None:
            continue  # pruned in between: insert again
        if stored.expires_at <= now:
            stored.delete()  # expired, not yet pruned: the key is free again
            continue
        if stored.request_hash != fingerprint:
            raise KeyReused()
        return Claim(replay=stored)
    raise KeyInUse()


def _insert(principal_id, token_id, key, fingerprint, now, expires) -> int | None:
    """INSERT … ON CONFLICT DO NOTHING: waits for a transaction holding the same key (the unique index),
    at most IDEMPOTENCY_KEY_WAIT_SECONDS; then KeyInUse."""
    wait_ms = max(1, int(settings.IDEMPOTENCY_KEY_WAIT_SECONDS * 1000))
    with connection.cursor() as cursor:
        cursor.execute("SELECT current_setting('lock_timeout')")
        previous = cursor.fetchone()[0]
        cursor.execute("SELECT set_config('lock_timeout', %s, true)", [f"{wait_ms}ms"])
        try:
            with transaction.atomic():
                cursor.execute(_CLAIM_SQL, [principal_id, token_id, key, fingerprint, now, expires])
                row = cursor.fetchone()
        except OperationalError as exc:
            if getattr(exc.__cause__, "sqlstate", None) == LOCK_NOT_AVAILABLE:
                raise KeyInUse() from exc
            raise
        finally:
            if connection.is_usable():
                cursor.execute("SELECT set_config('lock_timeout', %s, true)", [previous])
    return row[0] if row else None


def answer_keep(*, claim: Claim, status_code: int, content_type: str, body: bytes) -> None:
    """Store the write's answer under its key, in the write's transaction."""
    IdempotentRequest.objects.filter(pk=claim.row_id).update(
        status_code=status_code,
        content_type=content_type[:100],
        body=answer_fernet().encrypt(body) if body else b"",
        memory_ids=sorted(cited_memory_ids(body, content_type)),
    )


def key_release(*, claim: Claim) -> None:
    """The request did not get to run (NOT_KEPT): the key is free for the next attempt."""
    IdempotentRequest.objects.filter(pk=claim.row_id).delete()


def answer_replay(*, stored: IdempotentRequest, principal: Principal) -> tuple[int, str, bytes]:
    """The stored answer (status, content type, body), or AnswerWithdrawn (410) when it holds the text of a
    memory that has since been forgotten or that the caller may no longer read."""
    if stored.withdrawn_at is not None:
        raise AnswerWithdrawn()
    if not memory_texts_readable(principal, stored.memory_ids):
        raise AnswerWithdrawn()
    body = answer_fernet().decrypt(bytes(stored.body)) if stored.body else b""
    return stored.status_code, stored.content_type, body


def keys_prune(*, batch: int = 5000, max_batches: int = 100) -> int:
    """Delete expired keys (beat: prune_idempotency_keys), a batch per statement."""
    table = IdempotentRequest._meta.db_table
    deleted = 0
    for _ in range(max_batches):
        with connection.cursor() as cursor:
            cursor.execute(
                f"DELETE FROM {table} WHERE id IN (SELECT id FROM {table} WHERE expires_at <= %s LIMIT %s)",
                [timezone.now(), batch],
            )
            deleted += cursor.rowcount
            if cursor.rowcount < batch:
                break
    return deleted


def cited_memory_ids(body: bytes, content_type: str) -> set[int]:
    """The memories whose text a JSON answer holds: every object with a non-empty `text` and a
    `memory_id` (a packet's block) or an `id` (a memory)."""
    if not body or "json" not in content_type:
        return set()
    try:
        value = json.loads(body)
    except ValueError:
        return set()
    found: set[int] = set()
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if isinstance(item.get("text"), str) and item["text"]:
                ref = item.get("memory_id", item.get("id"))
                if isinstance(ref, int) and not isinstance(ref, bool):
                    found.add(ref)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return found
