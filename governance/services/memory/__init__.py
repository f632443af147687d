"""Writes of memories. `record` (one, or a batch: the fast path), `lifecycle` (propose, confirm, reject,
supersede, retire, forget, with their four-eyes rules), `reinforce`, and `promotion` (candidates that
repeat across sessions become proposals). Callers import from here; the modules import each other downwards
(lifecycle → promotion → record)."""

from governance.services.memory.lifecycle import (
    end_request_pending,
    memory_confirm,
    memory_forget,
    memory_propose,
    memory_reject,
    memory_retire,
    memory_supersede,
)
from governance.services.memory.record import (
    FOUR_EYES_ACTIVE_WRITE,
    FOUR_EYES_REQUESTED,
    FOUR_EYES_SAME_PERSON,
    FOUR_EYES_SUPERSEDE,
    MAX_TEXT_CHARS,
    REQUESTED_ACTIVE,
    TEXT_EMPTY,
    TEXT_TOO_LONG,
    MemoryInput,
    build_memory,
    default_status,
    default_tier,
    integrity_to_domain,
    lock_key,
    may_confirm,
    memory_record,
    memory_record_batch,
    validate_input,
)
from governance.services.memory.reinforce import (
    memory_reinforce,
    reinforce_rows,
)

__all__ = [
    "FOUR_EYES_ACTIVE_WRITE",
    "FOUR_EYES_REQUESTED",
    "FOUR_EYES_SAME_PERSON",
    "FOUR_EYES_SUPERSEDE",
    "MAX_TEXT_CHARS",
    "MemoryInput",
    "REQUESTED_ACTIVE",
    "TEXT_EMPTY",
    "TEXT_TOO_LONG",
    "build_memory",
    "default_status",
    "default_tier",
    "end_request_pending",
    "integrity_to_domain",
    "lock_key",
    "may_confirm",
    "memory_confirm",
    "memory_forget",
    "memory_propose",
    "memory_record",
    "memory_record_batch",
    "memory_reinforce",
    "memory_reject",
    "memory_retire",
    "memory_supersede",
    "reinforce_rows",
    "validate_input",
]
