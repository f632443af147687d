"""Python client for the memory governance service (imported as `memgov`).

    import memgov
    client = memgov.Client("http://127.0.0.1:8000", token)   # or MEMGOV_URL / MEMGOV_TOKEN
    packet = client.context(scope="acme/slides", query="export the deck", budget_tokens=800)

Extras: `memgov[mcp]` (the `memgov-mcp` server), `memgov[langgraph]` (memgov.langgraph.MemgovStore and
memgov.langchain tools)."""

from memgov.client import AsyncClient, Client
from memgov.errors import (
    ActiveKeyExists,
    APIConnectionError,
    Conflict,
    Forbidden,
    FourEyesRequired,
    InvalidInput,
    InvalidTransition,
    KeyRevisionConflict,
    MemgovError,
    NotAuthenticated,
    NotFound,
    PinnedOverBudget,
    ServerError,
    ServiceUnavailable,
    StaleRevision,
    Throttled,
)
from memgov.types import (
    Block,
    Budget,
    Context,
    Grant,
    Memory,
    MemoryState,
    Packet,
    RecallHit,
    ReviewItem,
    Scope,
    Trace,
    Turn,
    Webhook,
    WebhookDelivery,
)

__version__ = "0.1.0"

__all__ = [
    "APIConnectionError",
    "ActiveKeyExists",
    "AsyncClient",
    "Block",
    "Budget",
    "Client",
    "Conflict",
    "Context",
    "Forbidden",
    "FourEyesRequired",
    "Grant",
    "InvalidInput",
    "InvalidTransition",
    "KeyRevisionConflict",
    "MemgovError",
    "Memory",
    "MemoryState",
    "NotAuthenticated",
    "NotFound",
    "Packet",
    "PinnedOverBudget",
    "RecallHit",
    "ReviewItem",
    "Scope",
    "ServerError",
    "ServiceUnavailable",
    "StaleRevision",
    "Throttled",
    "Trace",
    "Turn",
    "Webhook",
    "WebhookDelivery",
]
