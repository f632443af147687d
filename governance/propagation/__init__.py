"""Carrying a change to every derived store, and the embedding store's own work.

Modules: `stores` (one idempotent handler per derived store, delivery claims, the Redis hot set and
cached packets), `embedding` (the one "needs embedding" definition, row claims, writing vectors),
`turns` (redacting hard-forgotten memories from stored turns), `webhooks` (outbound events: fan-out,
signing, sending, retries) with `webhook_transport` (the SSRF-safe HTTP request), `reconcile` (the
reconciler: re-dispatches what was left pending and repairs drift) and `tasks` (the Celery tasks,
registered under their old names `governance.tasks.<name>` so queued messages of an older version still
run; import them from `governance.propagation.tasks`, not from here: this package is imported by
models-level code that must not load Celery tasks). The names below are what callers use as
`governance.propagation.<name>`."""

from governance.propagation.embedding import (
    EMBED_FIELDS,
    EMBED_STATUSES,
    EmbedAhead,
    claim_lease,
    claim_rows,
    embed_memories,
    embeddable,
    embedding_batches,
    give_back,
    hold_rows,
    needs_embedding,
    needs_vector,
    waiting_rows,
)
from governance.propagation.stores import (
    HANDLERS,
    LEASE,
    bump_cache_generation,
    cache_generation_key,
    cache_purge_workspace,
    claim,
    finish_outbox,
    handler,
    hot_set_key,
    hot_set_remove,
    lease,
    redis_client,
    renew_lease,
    run_after_embedding,
    run_delivery,
    scan_keys,
    workspace_cache_key,
)
from governance.propagation.turns import (
    REDACTED,
    Redactor,
    redact_json,
    redact_turns,
    turns_still_holding_purged,
)
from governance.propagation.webhooks import (
    queue_deliveries,
    webhook_attempt,
    webhook_deliveries_due,
    webhook_events,
)

__all__ = [
    "EMBED_FIELDS",
    "EMBED_STATUSES",
    "EmbedAhead",
    "run_after_embedding",
    "HANDLERS",
    "LEASE",
    "REDACTED",
    "Redactor",
    "redis_client",
    "scan_keys",
    "bump_cache_generation",
    "cache_generation_key",
    "cache_purge_workspace",
    "claim",
    "claim_lease",
    "claim_rows",
    "embed_memories",
    "embeddable",
    "embedding_batches",
    "finish_outbox",
    "handler",
    "hold_rows",
    "hot_set_key",
    "hot_set_remove",
    "lease",
    "needs_embedding",
    "needs_vector",
    "redact_json",
    "redact_turns",
    "give_back",
    "renew_lease",
    "run_delivery",
    "turns_still_holding_purged",
    "waiting_rows",
    "workspace_cache_key",
    "queue_deliveries",
    "webhook_attempt",
    "webhook_deliveries_due",
    "webhook_events",
]
