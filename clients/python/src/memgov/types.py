"""Typed results, one dataclass per shape of the service's OpenAPI schema. Each keeps the answer it
was read from in `raw`, so a field the service adds later is not lost."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from datetime import datetime
from typing import Any

SLOTS = ("task", "constraints", "negative", "preferences", "recent", "evidence", "relations", "external")


def _dt(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value.replace("Z", "+00:00")) if value else None


@dataclass(frozen=True)
class Source:
    kind: str
    ref: str = ""

    @classmethod
    def from_dict(cls, d: dict | None) -> Source:
        d = d or {}
        return cls(kind=d.get("kind", ""), ref=d.get("ref", "") or "")


@dataclass(frozen=True)
class Memory:
    id: int
    scope: str
    kind: str
    key: str | None
    revision: int
    status: str
    text: str
    source: Source
    confidence: float = 0.5
    importance: float = 0.5
    tier: str = ""
    session: str = ""
    call_id: str = ""
    created_at: datetime | None = None
    occurred_at: datetime | None = None
    raw: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def in_force(self) -> bool:
        """Active: confirmed (or a record of what happened). Candidates and proposals are not."""
        return self.status == "active"

    @classmethod
    def from_dict(cls, d: dict) -> Memory:
        return cls(
            id=d["id"],
            scope=d.get("scope", ""),
            kind=d.get("kind", ""),
            key=d.get("key"),
            revision=d.get("revision", 1),
            status=d.get("status", ""),
            text=d.get("text", ""),
            source=Source.from_dict(d.get("source")),
            confidence=d.get("confidence", 0.5),
            importance=d.get("importance", 0.5),
            tier=d.get("tier", ""),
            session=d.get("session", ""),
            call_id=d.get("call_id", ""),
            created_at=_dt(d.get("created_at")),
            occurred_at=_dt(d.get("occurred_at")),
            raw=d,
        )


@dataclass(frozen=True)
class MemoryState:
    """What a governance action (confirm, reject, retire, forget) answers: the memory's new state."""

    id: int
    scope: str
    kind: str
    key: str | None
    revision: int
    status: str
    tier: str
    approvals: int
    approvals_needed: int
    raw: dict = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_dict(cls, d: dict) -> MemoryState:
        return cls(
            id=d["id"],
            scope=d.get("scope", ""),
            kind=d.get("kind", ""),
            key=d.get("key"),
            revision=d.get("revision", 1),
            status=d.get("status", ""),
            tier=d.get("tier", ""),
            approvals=d.get("approvals", 0),
            approvals_needed=d.get("approvals_needed", 1),
            raw=d,
        )


@dataclass(frozen=True)
class ForgetResult:
    memory: MemoryState
    mode: str
    propagation: dict | None

    @classmethod
    def from_dict(cls, d: dict) -> ForgetResult:
        return cls(
            memory=MemoryState.from_dict(d["memory"]),
            mode=d.get("mode", ""),
            propagation=d.get("propagation"),
        )


@dataclass(frozen=True)
class RecallHit:
    memory_id: int
    text: str
    kind: str
    key: str | None
    revision: int
    status: str
    source: Source
    score: float
    scores: dict[str, float | None]
    raw: dict = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_dict(cls, d: dict) -> RecallHit:
        return cls(
            memory_id=d["memory_id"],
            text=d.get("text", ""),
            kind=d.get("kind", ""),
            key=d.get("key"),
            revision=d.get("revision", 1),
            status=d.get("status", ""),
            source=Source.from_dict(d.get("source")),
            score=d.get("score", 0.0),
            scores=d.get("scores", {}),
            raw=d,
        )


@dataclass(frozen=True)
class Block:
    """One block of a packet slot. `reason` says why it is there (or, in `skipped`, why not)."""

    memory_id: int | None
    kind: str
    key: str | None
    revision: int | None
    status: str
    text: str
    source: Source
    score: float
    reason: str
    role: str | None = None
    call_id: str | None = None
    session: str | None = None
    flags: tuple[str, ...] = ()
    replaced_by: dict | None = None
    slot: str | None = None  # in `skipped`: the slot it would have gone to
    tokens: int | None = None  # in `skipped`: what it would have cost
    raw: dict = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_dict(cls, d: dict) -> Block:
        return cls(
            memory_id=d.get("memory_id"),
            kind=d.get("kind", ""),
            key=d.get("key"),
            revision=d.get("revision"),
            status=d.get("status", ""),
            text=d.get("text", ""),
            source=Source.from_dict(d.get("source")),
            score=d.get("score", 0.0),
            reason=d.get("reason", ""),
            role=d.get("role"),
            call_id=d.get("call_id"),
            session=d.get("session"),
            flags=tuple(d.get("flags") or ()),
            replaced_by=d.get("replaced_by"),
            slot=d.get("slot"),
            tokens=d.get("tokens"),
            raw=d,
        )


@dataclass(frozen=True)
class Packet:
    """The slots of a context packet.

    - task: the current task (pinned);
    - constraints: facts, conventions and stage facts IN FORCE (confirmed; pinned);
    - negative: what is NO LONGER in force, each with what replaced it;
    - preferences: preferences in force;
    - recent: the latest turns of the session;
    - evidence: other relevant memories — candidates and proposals appear only here, marked unconfirmed;
    - relations: contradictions and which memory wins; external: external documents;
    - skipped: blocks that did not fit the budget (or were left out), with the reason.
    """

    task: tuple[Block, ...] = ()
    constraints: tuple[Block, ...] = ()
    negative: tuple[Block, ...] = ()
    preferences: tuple[Block, ...] = ()
    recent: tuple[Block, ...] = ()
    evidence: tuple[Block, ...] = ()
    relations: tuple[Block, ...] = ()
    external: tuple[Block, ...] = ()
    skipped: tuple[Block, ...] = ()

    @classmethod
    def from_dict(cls, d: dict) -> Packet:
        names = {f.name for f in fields(cls)}
        return cls(**{k: tuple(Block.from_dict(b) for b in v) for k, v in (d or {}).items() if k in names})

    def blocks(self) -> list[tuple[str, Block]]:
        """Every included block with its slot, in slot order (not the skipped ones)."""
        return [(slot, b) for slot in SLOTS for b in getattr(self, slot)]


@dataclass(frozen=True)
class Budget:
    limit: int
    used: int
    counter: str

    @classmethod
    def from_dict(cls, d: dict) -> Budget:
        return cls(limit=d.get("limit", 0), used=d.get("used", 0), counter=d.get("counter", ""))


@dataclass(frozen=True)
class Stage:
    name: str
    ms: float
    n_in: int
    n_out: int


@dataclass(frozen=True)
class Trace:
    stages: tuple[Stage, ...]

    @classmethod
    def from_dict(cls, d: dict) -> Trace:
        return cls(
            stages=tuple(
                Stage(name=s.get("name", ""), ms=s.get("ms", 0.0), n_in=s.get("in", 0), n_out=s.get("out", 0))
                for s in (d or {}).get("stages", [])
            )
        )

    def ms(self, name: str) -> float | None:
        return next((s.ms for s in self.stages if s.name == name), None)


@dataclass(frozen=True)
class Context:
    """A context packet: `text` is what goes into the prompt; `packet` the same as typed blocks."""

    turn_id: int | None
    packet: Packet
    budget: Budget
    trace: Trace
    text: str
    raw: dict = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_dict(cls, d: dict) -> Context:
        return cls(
            turn_id=d.get("turn_id"),
            packet=Packet.from_dict(d.get("packet", {})),
            budget=Budget.from_dict(d.get("budget", {})),
            trace=Trace.from_dict(d.get("trace", {})),
            text=d.get("text", ""),
            raw=d,
        )


@dataclass(frozen=True)
class Turn:
    """A stored turn: the packet an agent was given, with its inputs, as it was then."""

    id: int
    scope: str
    session: str
    query: str
    strategy: str
    packet: Packet
    budget: Budget
    trace: Trace
    text: str
    request: dict
    created_at: datetime | None
    raw: dict = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_dict(cls, d: dict) -> Turn:
        return cls(
            id=d["id"],
            scope=d.get("scope", ""),
            session=d.get("session", ""),
            query=d.get("query", ""),
            strategy=d.get("strategy", ""),
            packet=Packet.from_dict(d.get("packet", {})),
            budget=Budget.from_dict(d.get("budget", {})),
            trace=Trace.from_dict(d.get("trace", {})),
            text=d.get("text", ""),
            request=d.get("request", {}),
            created_at=_dt(d.get("created_at")),
            raw=d,
        )


@dataclass(frozen=True)
class Scope:
    id: int
    path: str
    name: str
    parent: str | None
    workspace: str
    created: bool | None = None  # from scopes.open: whether this call created it

    @classmethod
    def from_dict(cls, d: dict) -> Scope:
        return cls(
            id=d["id"],
            path=d["path"],
            name=d.get("name", ""),
            parent=d.get("parent"),
            workspace=d.get("workspace", ""),
            created=d.get("created"),
        )


@dataclass(frozen=True)
class ReviewItem:
    kind: str  # proposal | promotion | conflict
    memory: dict
    supporting_episodes: list[dict]
    conflicting: dict | None
    approvals: list[str]
    approvals_needed: int
    can_confirm: bool

    @classmethod
    def from_dict(cls, d: dict) -> ReviewItem:
        return cls(
            kind=d["kind"],
            memory=d["memory"],
            supporting_episodes=d.get("supporting_episodes", []),
            conflicting=d.get("conflicting"),
            approvals=d.get("approvals", []),
            approvals_needed=d.get("approvals_needed", 1),
            can_confirm=d.get("can_confirm", False),
        )


@dataclass(frozen=True)
class Relation:
    id: int
    source: int  # supports / contradicts / is derived from
    target: int
    kind: str
    reason: str
    by_hand: bool
    actor: str | None
    created_at: datetime | None

    @classmethod
    def from_dict(cls, d: dict) -> Relation:
        return cls(
            id=d["id"],
            source=d["source"],
            target=d["target"],
            kind=d["kind"],
            reason=d.get("reason", ""),
            by_hand=d.get("by_hand", False),
            actor=d.get("actor"),
            created_at=_dt(d.get("created_at")),
        )


@dataclass(frozen=True)
class Grant:
    id: int
    principal: str
    principal_kind: str
    scope: str
    role: str
    granted_by: str | None
    created_at: datetime | None

    @classmethod
    def from_dict(cls, d: dict) -> Grant:
        return cls(
            id=d["id"],
            principal=d["principal"],
            principal_kind=d.get("principal_kind", ""),
            scope=d["scope"],
            role=d["role"],
            granted_by=d.get("granted_by"),
            created_at=_dt(d.get("created_at")),
        )


@dataclass(frozen=True)
class IssuedToken:
    token: str
    scope: str
    role: str
    expires_at: datetime | None
    note: str

    @classmethod
    def from_dict(cls, d: dict) -> IssuedToken:
        return cls(
            token=d["token"],
            scope=d.get("scope", ""),
            role=d.get("role", ""),
            expires_at=_dt(d.get("expires_at")),
            note=d.get("note", ""),
        )


@dataclass(frozen=True)
class TokenInfo:
    """A token as listed (never its raw key): what it is bound to and when it was last used."""

    id: int
    principal: str
    prefix: str
    scope: str | None
    role: str
    created_at: datetime | None
    expires_at: datetime | None
    last_used_at: datetime | None
    revoked_at: datetime | None

    @classmethod
    def from_dict(cls, d: dict) -> TokenInfo:
        return cls(
            id=d["id"],
            principal=d["principal"],
            prefix=d["prefix"],
            scope=d.get("scope"),
            role=d["role"],
            created_at=_dt(d.get("created_at")),
            expires_at=_dt(d.get("expires_at")),
            last_used_at=_dt(d.get("last_used_at")),
            revoked_at=_dt(d.get("revoked_at")),
        )


@dataclass(frozen=True)
class Webhook:
    """A workspace's webhook subscription (docs/webhooks.md). `secret` is set only in the answer of
    `webhooks.create` and `webhooks.rotate_secret`: it is shown once."""

    id: int
    workspace: str
    url: str
    event_types: list[str]
    description: str
    active: bool
    created_at: datetime | None
    updated_at: datetime | None
    secret: str | None = None
    raw: dict = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_dict(cls, d: dict) -> Webhook:
        return cls(
            id=d["id"],
            workspace=d["workspace"],
            url=d["url"],
            event_types=list(d.get("event_types", [])),
            description=d.get("description", ""),
            active=bool(d.get("active", True)),
            created_at=_dt(d.get("created_at")),
            updated_at=_dt(d.get("updated_at")),
            secret=d.get("secret"),
            raw=d,
        )


@dataclass(frozen=True)
class WebhookDelivery:
    """One event sent (or being sent) to one subscription: its state and how the last attempt went."""

    id: int
    subscription: int
    event_id: str
    event_type: str
    state: str
    attempts: int
    last_status_code: int | None
    last_error: str
    response_ms: int | None
    created_at: datetime | None
    delivered_at: datetime | None
    body: dict
    raw: dict = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_dict(cls, d: dict) -> WebhookDelivery:
        return cls(
            id=d["id"],
            subscription=d["subscription"],
            event_id=str(d["event_id"]),
            event_type=d["event_type"],
            state=d["state"],
            attempts=d.get("attempts", 0),
            last_status_code=d.get("last_status_code"),
            last_error=d.get("last_error", ""),
            response_ms=d.get("response_ms"),
            created_at=_dt(d.get("created_at")),
            delivered_at=_dt(d.get("delivered_at")),
            body=d.get("body") or {},
            raw=d,
        )


def as_dict(value: Any) -> Any:
    """The JSON the service sent for a typed result (for printing or passing on)."""
    return getattr(value, "raw", value)


@dataclass(frozen=True)
class Page:
    """One page of a list: `count` in all, `next`/`previous` page URLs."""

    count: int
    next: str | None
    previous: str | None
    results: list[Memory]

    @classmethod
    def from_dict(cls, d: dict) -> Page:
        return cls(
            count=d.get("count", 0),
            next=d.get("next"),
            previous=d.get("previous"),
            results=[Memory.from_dict(m) for m in d.get("results", [])],
        )
