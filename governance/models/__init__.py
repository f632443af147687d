from governance.models.audit import AuditEvent
from governance.models.evaluation import EvaluationMiss, EvaluationRun
from governance.models.idempotency import IdempotentRequest
from governance.models.invitation import Invitation
from governance.models.memory import (
    DECAY_PER_DAY,
    IN_FORCE,
    NEAR_DUPLICATE_OF,
    NEAR_DUPLICATES,
    RECALLABLE,
    TRANSITIONS,
    Kind,
    Memory,
    ReinforcementEvent,
    SourceKind,
    Status,
    Tier,
    content_hash,
)
from governance.models.outbox import DERIVED_STORES, Outbox, OutboxDelivery, ReadFence
from governance.models.passage import Passage
from governance.models.portability import ImportedAuditEvent, ScopeImport
from governance.models.principal import ROLE_RANK, ApiToken, Grant, Principal, PrincipalKind, Role, hash_token
from governance.models.relation import Dispute, DisputeState, Relation, RelationKind
from governance.models.retention import RetentionPolicy
from governance.models.scope import AgentWrite, Scope, SessionOverrides, Workspace
from governance.models.summary import Summary
from governance.models.turn import Turn, TurnArchive, TurnMemory
from governance.models.webhook import EventType, WebhookDelivery, WebhookSubscription

__all__ = [
    "NEAR_DUPLICATE_OF",
    "NEAR_DUPLICATES",
    "Passage",
    "AgentWrite",
    "SessionOverrides",
    "Invitation",
    "ApiToken",
    "AuditEvent",
    "DECAY_PER_DAY",
    "Dispute",
    "DisputeState",
    "DERIVED_STORES",
    "EvaluationMiss",
    "EvaluationRun",
    "EventType",
    "Grant",
    "IdempotentRequest",
    "ImportedAuditEvent",
    "IN_FORCE",
    "Kind",
    "Memory",
    "Outbox",
    "OutboxDelivery",
    "ReadFence",
    "Principal",
    "PrincipalKind",
    "RECALLABLE",
    "ROLE_RANK",
    "ReinforcementEvent",
    "Relation",
    "RetentionPolicy",
    "RelationKind",
    "Role",
    "Scope",
    "ScopeImport",
    "SourceKind",
    "Status",
    "Summary",
    "TRANSITIONS",
    "Tier",
    "Turn",
    "TurnArchive",
    "TurnMemory",
    "WebhookDelivery",
    "WebhookSubscription",
    "Workspace",
    "content_hash",
    "hash_token",
]
