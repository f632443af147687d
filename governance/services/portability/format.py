"""The export file: JSON lines, one record per line, each with a `type`.

header (first line), then scope*, principal*, grant*, memory* and tombstone* (in id order), relation*,
summary*, audit*, and end (last line: the counts actually written, so a cut-off file is refused)."""

from __future__ import annotations

import json
import re
from datetime import datetime

from django.utils.dateparse import parse_datetime

from governance.errors import DomainError

FORMAT_NAME = "memory-governance-export"
FORMAT_VERSION = 1
RECORD_TYPES = ("scope", "principal", "grant", "memory", "tombstone", "relation", "summary", "audit")
# Record types in the order they must appear (a memory names scopes and principals read before it).
ORDER = {name: i for i, name in enumerate(("header", *RECORD_TYPES, "end"))}
# The two kinds of memory line count together: ids run in one order across both.
ORDER["tombstone"] = ORDER["memory"]

# Messages (tests reuse them). Each is prefixed with "line N: " by ImportFileError.
NOT_JSON = "not a JSON object"
NO_HEADER = f"the first line must be the header of a {FORMAT_NAME} file"
UNKNOWN_VERSION = "format version {version} is not one this installation reads (it reads version {known})"
UNKNOWN_TYPE = "unknown record type {type!r}"
OUT_OF_ORDER = "a {type} record after the {after} records: the file's sections are out of order"
MISSING_FIELD = "{type} record: `{field}` is missing or has the wrong type"
BAD_VALUE = "{type} record: `{field}` has an invalid value {value!r}"
DUPLICATE_ID = "{type} record: id {id} appears twice"
UNKNOWN_REF = "{type} record: `{field}` names {what} {id}, which the file does not contain"
TWO_ACTIVE = "memory record: a second active memory for key {key!r} in scope {scope!r}"
NO_END = "the file ends without its end record: it was cut off or is incomplete"
COUNT_MISMATCH = "the end record counts {expected} {type} records, the file holds {found}"
AFTER_END = "a record after the end record"
KEY_TAKEN = "memory record: the target scope {scope!r} already has memories with key {key!r}; import into an empty scope"
AUDIT_HASH = "audit record: its hash does not match its content (the record was changed after export)"
TARGET_NOT_EMPTY = "the target scope {scope!r} already exists with the same name as an exported child scope and holds memories"
CONTROL_CHARACTER = (
    "{type} record: a string holds a control character ({char}); only tab, line feed and carriage return "
    "may appear in a text"
)
TOO_DEEP = "scope record: {path!r} is not a scope path this installation accepts (names, depth)"


class ImportFileError(DomainError):
    """A bad import file: which line, and what is wrong with it. Nothing was changed."""

    code = "bad_import_file"
    status = 400

    def __init__(self, line: int | None, message: str):
        self.line = line
        super().__init__(f"line {line}: {message}" if line else message, line=line)


# Control characters other than tab, line feed and carriage return (a text may hold those): a NUL is refused
# by PostgreSQL (a DataError, a 500, once the string reached an INSERT), and no name, path or text the
# service writes holds the others.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def check_strings(record: dict, line: int) -> None:
    """ImportFileError when any string of `record` (a key or a value, at any depth) holds a control
    character: the file is refused before any of its strings reaches the database."""
    pending: list = [record]
    while pending:
        value = pending.pop()
        if isinstance(value, dict):
            pending.extend(value.keys())
            pending.extend(value.values())
        elif isinstance(value, list):
            pending.extend(value)
        elif isinstance(value, str) and (found := _CONTROL.search(value)):
            kind = record.get("type") if isinstance(record.get("type"), str) else "a"
            char = f"U+{ord(found.group(0)):04X}"
            raise ImportFileError(
                line, CONTROL_CHARACTER.format(type=kind if not _CONTROL.search(kind) else "a", char=char)
            )


def dumps(record: dict) -> str:
    return json.dumps(record, ensure_ascii=False, separators=(",", ":"), default=_default) + "\n"


def _default(value):
    if isinstance(value, datetime):
        return value.isoformat()
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


def iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def parse_time(record: dict, name: str, line: int, *, required: bool = False) -> datetime | None:
    value = record.get(name)
    if value is None and not required:
        return None
    parsed = parse_datetime(value) if isinstance(value, str) else None
    if parsed is None or parsed.tzinfo is None:
        raise ImportFileError(line, BAD_VALUE.format(type=record.get("type"), field=name, value=value))
    return parsed


def field(record: dict, name: str, kind: type | tuple, line: int, *, optional: bool = False):
    """`record[name]`, checked to be of `kind` (None allowed when optional)."""
    value = record.get(name)
    if value is None and optional:
        return None
    if not isinstance(value, kind) or (isinstance(value, bool) and kind in (int, float, (int, float))):
        raise ImportFileError(line, MISSING_FIELD.format(type=record.get("type"), field=name))
    return value
