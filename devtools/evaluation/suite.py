"""The shape of one synthetic task: what to load (events, memories, later changes), what to ask, and
what the assembled packet must show. Times are minutes before the question, so a task replays the
same way whenever it runs. Everything is plain data, so a suite serialises to JSON and hashes."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field

CATEGORIES = (
    "delayed_recall",
    "scope_boundary",
    "source_distinction",
    "revision",
    "stale_suppression",
    "evidence_attribution",
    "conflict_handling",
    "temporal_commitment",
    "stale_episode",
    "episode_correction",
    "exact_term",
    "support_chain",
    "correction_in_conversation",
    "near_duplicate",
    "unkeyed_contradiction",
    "agent_only",
)

# Where a memory lives relative to the task: its own scope, the parent (visible: an ancestor), a
# sibling under the same parent, or another workspace (both never visible).
PLACES = ("task", "parent", "sibling", "foreign")
VISIBLE_PLACES = ("task", "parent")


@dataclass(frozen=True)
class TurnSpec:
    role: str  # user | assistant | tool
    content: str
    ref: str
    call_id: str = ""


@dataclass(frozen=True)
class EventSpec:
    session: str
    ago_min: int
    turns: tuple[TurnSpec, ...]


@dataclass(frozen=True)
class MemorySpec:
    label: str
    place: str
    kind: str
    text: str
    source_kind: str
    source_ref: str = ""
    key: str | None = None
    status: str = "active"
    tier: str | None = None
    ago_min: int = 0
    expired_ago_min: int | None = None  # valid_until this many minutes before the question
    importance: float = 0.5
    confidence: float = 0.5
    session: str = ""
    call_id: str = ""
    by: str = "curator"  # who writes it: the curator (a person) or the agent (what it relays)
    first: bool = False  # written before the task's events are relayed (a rule in force when the user speaks)


@dataclass(frozen=True)
class ActionSpec:
    """A later change: `supersede` (curator writes the next revision of `target`, labelled `label`),
        `contradict` (a relation from `label` to `target`), `replace` (a curator's `supersedes` relation from
        `label` to `target`, for two episodes: the later message replaces the earlier one), `support` (a curator's
        `supports` relation from `label` to `target`), `retire`, `forget`, `reject` (a reviewer rejects the
    proposal `target`), `binding` (the task scope's owner marks the key of `target` binding)."""

    op: str
    target: str
    label: str = ""
    text: str = ""
    reason: str = ""
    source_kind: str = "user"
    source_ref: str = ""


@dataclass(frozen=True)
class Expect:
    """Deterministic checks on the packet, by label (resolved to memory ids when the task is loaded)."""

    include: tuple[str, ...] = ()  # present, in a slot that presents it as usable (not negative/skipped)
    slots: tuple[tuple[str, str], ...] = ()  # (label, slot): present in exactly that slot
    not_in_force: tuple[str, ...] = ()  # if present at all, only in the negative slot
    absent: tuple[str, ...] = ()  # nowhere in the packet, not even as skipped
    negative: tuple[tuple[str, str], ...] = ()  # (old, new): old is in negative context naming new
    sources: tuple[tuple[str, str, tuple[str, ...]], ...] = ()  # (label, source kind, refs that cite it)
    proposals: tuple[str, ...] = ()  # guesses: if present, never active and never among constraints
    conflicts: tuple[tuple[str, str], ...] = ()  # (winner, loser): winner in force, loser flagged
    evidence: tuple[str, ...] = ()  # what answers the question: for evidence recall@k
    constraints: tuple[str, ...] = ()  # rules in force the packet must retain (constraint retention)
    stale: tuple[str, ...] = ()  # no longer in force (stale-use rate)
    supports: tuple[tuple[str, str], ...] = ()  # (supporter, fact): usable, and its block names the fact
    # (correction, rule, how): this session's correction `overrides` the rule (pinned in its place, the rule in
    # negative naming it), or the rule holds and its block says so: `binding`, `rejected`, `pending`.
    session: tuple[tuple[str, str, str], ...] = ()
    # (repeat, original, decision): the write of `repeat` was `reinforced` into `original` (no row of its
    # own), `proposed` as its next revision (a proposal with its key, never in force), or kept `separate`.
    repeats: tuple[tuple[str, str, str], ...] = ()
    # (newer, older): a dispute the system proposed and no person decided: both usable, each block marked in
    # dispute with the other, naming the newer one.
    disputes: tuple[tuple[str, str], ...] = ()
    undisputed: tuple[str, ...] = ()  # never marked in dispute (similar, but no contradiction)


@dataclass(frozen=True)
class EvalTask:
    id: str
    category: str
    lang: str
    query: str
    goal: str
    session: str
    events: tuple[EventSpec, ...] = ()
    memories: tuple[MemorySpec, ...] = ()
    actions: tuple[ActionSpec, ...] = ()
    expect: Expect = field(default_factory=Expect)
    budget_tokens: int = 2000

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class Suite:
    name: str
    seed: int
    tasks: tuple[EvalTask, ...]

    def fingerprint(self) -> str:
        """SHA-256 of the suite's canonical JSON: equal for equal (name, seed), whatever the machine."""
        body = json.dumps([t.to_dict() for t in self.tasks], sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(body.encode()).hexdigest()
