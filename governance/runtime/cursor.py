"""The one codec of keyset cursors (the review queue, the audit log, the memories list; API and dashboard).

A cursor is a short list of JSON values (the last row's sort key and id, …), signed with the project's
SECRET_KEY and a salt per list: a cursor edited by hand, made for another list, or from before a key
rotation is refused with a 400 naming the field, never read as something else and never a 500. Each
list still checks the shape of what it gets back, since a signature says who made a cursor, not that
its values fit this version of the list."""

from __future__ import annotations

from django.core import signing

from governance.errors import InvalidInput

BAD_CURSOR = "This page link is damaged or out of date: go back to the first page of the list."
MAX_LENGTH = 400  # longer than any cursor we make (a memory key is at most 200 characters)


def _signer(kind: str) -> signing.Signer:
    return signing.Signer(salt=f"governance.cursor.{kind}")


def encode(kind: str, values: list) -> str:
    """`values` (JSON-serialisable) as a URL-safe cursor of the list `kind`."""
    return _signer(kind).sign_object(values)


def decode(raw: str, kind: str, field: str, message: str = BAD_CURSOR) -> list | None:
    """The values of a cursor `encode(kind, …)` made, or None when `raw` is empty; InvalidInput (400,
    `message`, naming `field`) for anything else."""
    if not raw:
        return None
    if len(raw) > MAX_LENGTH:
        raise InvalidInput(message, field=field)
    try:
        values = _signer(kind).unsign_object(raw)
    except (signing.BadSignature, ValueError, TypeError, UnicodeDecodeError) as exc:
        raise InvalidInput(message, field=field) from exc
    if not isinstance(values, list):
        raise InvalidInput(message, field=field)
    return values


def id_of(value: object, field: str, message: str = BAD_CURSOR) -> int:
    """A row id read back from a cursor: a positive bigint."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 < value < 2**63:
        raise InvalidInput(message, field=field)
    return value


def encode_id(kind: str, pk: int) -> str:
    """The cursor of a list paged by id alone (the audit log, the turns)."""
    return encode(kind, [pk])


def decode_id(raw: str, kind: str, field: str, message: str = BAD_CURSOR) -> int | None:
    """The id of an `encode_id(kind, …)` cursor, None when `raw` is empty; a 400 for anything else."""
    values = decode(raw, kind, field, message)
    if values is None:
        return None
    if len(values) != 1:
        raise InvalidInput(message, field=field)
    return id_of(values[0], field, message)
