"""The read path for a turn: run the stages of a strategy, pack the packet, store the Turn, queue the
reinforcement. `assemble_context` is what POST /api/v1/context returns; `recall_memories` is /recall."""

from __future__ import annotations

import time
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import datetime, timedelta

from django.conf import settings
from django.db import connection
from django.utils import timezone

from governance.embedding import get_embedder
from governance.embedding.cache import asker_of, cache_key, embed_query_cached, query_cache
from governance.errors import InvalidInput, NotFound
from governance.models import Principal, Scope, Status, Turn, TurnMemory
from governance.permissions import Action, ScopeAccess, require, require_roles
from governance.recall import adjudicate as adjudicate_mod
from governance.recall import handoff as handoff_mod
from governance.recall import rank as rank_mod
from governance.recall import recall as recall_mod
from governance.recall import session as session_mod
from governance.recall.eligible import eligible
from governance.recall.pack import pack
from governance.recall.reinforce import queue_reinforcement
from governance.recall.state import Hit, RecallState
from governance.recall.strategies import (
    ADJUDICATE,
    KEYED,
    LEXICAL,
    NAMED_TIME,
    RECENT,
    RELATIONS,
    SPEAKERS,
    STRATEGIES,
    VECTOR,
)
from governance.recall.tokens import counter_name
from governance.redaction.redactor import REDACTED
from governance.redaction.render import render_packet_text
from governance.runtime import process_cores, process_pool, tracing
from governance.runtime.metrics import observe_stages
from governance.runtime.replica import note_write
from governance.selectors.memory import repeats_purged_text

MAX_QUERY_CHARS = 4000
MAX_BUDGET = 200_000
MAX_K = 100
BAD_STRATEGY = f"strategy must be one of: {', '.join(STRATEGIES)}."
BAD_BUDGET = f"budget_tokens is a whole number from 1 to {MAX_BUDGET}."
BAD_QUERY = f"query is a non-empty text of at most {MAX_QUERY_CHARS} characters."
BAD_K = f"k is a whole number from 1 to {MAX_K}."
BAD_TASK = "task is an object with a text `goal` and optionally `state` and `type`."
BAD_AS_OF = "as_of is a date-time with a time zone, not in the future."


def _resolve_scope(scope: Scope | str) -> Scope:
    if isinstance(scope, Scope):
        return scope
    found = Scope.objects.filter(path=str(scope).strip().strip("/")).first()
    if found is None:
        raise NotFound()
    return found


def _validate(query, strategy, as_of, task=None) -> None:
    if not isinstance(query, str) or not query.strip() or len(query) > MAX_QUERY_CHARS:
        raise InvalidInput(BAD_QUERY, field="query")
    if strategy not in STRATEGIES:
        raise InvalidInput(BAD_STRATEGY, field="strategy")
    if as_of is not None and (
        not isinstance(as_of, datetime)
        or as_of.tzinfo is None
        or as_of > timezone.now() + timedelta(minutes=5)
    ):
        raise InvalidInput(BAD_AS_OF, field="as_of")
    if task is not None:
        ok = (
            isinstance(task, dict)
            and isinstance(task.get("goal", ""), str)
            and all(isinstance(task.get(f, ""), str) for f in ("state", "type"))
        )
        if not ok:
            raise InvalidInput(BAD_TASK, field="task")


def _run_stages(state: RecallState, embedding: Future | _Done | None = None) -> None:
    # The query embedding (CPU in the embedder's C code, which releases the GIL) runs in a worker thread
    # while this thread runs the SQL stages that do not need it; we join right before the vector stage.
    # `embedding`: started already by the caller (embed_ahead), before it read the caller's access.
    pending = None
    if VECTOR in state.stages:
        pending = (
            embedding
            if embedding is not None
            else _start_embed(state.query, asker_of(state.principal), state.stages)
        )
    try:
        state.run("eligible", eligible)
        if LEXICAL in state.stages:
            state.run("lexical", recall_mod.lexical_stage)
            if SPEAKERS in state.stages:
                state.run("speakers", recall_mod.speaker_stage)
            if NAMED_TIME in state.stages:
                state.run("named_time_words", recall_mod.named_time_words_stage)
        if RECENT in state.stages:
            state.run("recent", recall_mod.recent_stage)
        if KEYED in state.stages:
            state.run("keyed", recall_mod.keyed_stage)
        if pending is not None:
            state.run("pending", recall_mod.pending_stage)
            _finish_embed(state, pending)
            pending = None
            state.run("vector", recall_mod.vector_stage)
            if NAMED_TIME in state.stages:
                state.run("named_time", recall_mod.named_time_stage)
    finally:
        if pending is not None:  # a stage failed: nobody will read the vector
            pending.cancel()
    state.run("fuse", recall_mod.fuse_stage)
    if ADJUDICATE in state.stages:
        state.run("adjudicate", adjudicate_mod.adjudicate)
        if RELATIONS in state.stages and KEYED in state.stages:
            # This session's corrections of the pinned rules (recall/session.py); no query without one.
            state.run("session", session_mod.session_overrides)
    state.run("rank", rank_mod.rank)


EMBED_THREADS = 2  # the machine's cores; more would only queue inside the embedder's own lock


def _embed_pool() -> ThreadPoolExecutor:
    return process_pool("query-embed", EMBED_THREADS)


def embed_threads(stages) -> int:
    """Cores one query embedding uses. Beside the keyword stages, whose SQL runs while the query is
    embedded, EMBEDDING_QUERY_THREADS (one): the engine's threads meet at a barrier after every small
    parallel loop, so a thread pre-empted by the database holds up the other, and two threads beside the
    SQL took longer than one (LoCoMo dev `full`, embedding p50 31.7 -> 40.6 ms). With no keyword stage
    beside it (the `vector`, `structured_vector` and `temporal` strategies: a few small statements at most)
    EMBEDDING_QUERY_ALONE_THREADS, every core by default (docs/benchmarks.md)."""
    wanted = settings.EMBEDDING_QUERY_THREADS if LEXICAL in stages else settings.EMBEDDING_QUERY_ALONE_THREADS
    return wanted if wanted > 0 else process_cores()


def _embed_timed(query: str, asker: int, threads: int) -> tuple[object, bool, float]:
    # Runs in the pool: the embedder only, never the database (connections are per thread). The pool's
    # threads serve every strategy, so each call sets its own team size (a call into the OpenMP runtime).
    start = time.perf_counter()
    embedder = get_embedder()
    embedder.use_threads_here(threads)
    vector, cached = embed_query_cached(embedder, query, asker=asker)
    return vector, cached, (time.perf_counter() - start) * 1000


def _start_embed(query: str, asker: int, stages) -> Future | _Done:
    """A future of (vector, cached, ms); a hit in the asker's cache is answered on the spot."""
    start = time.perf_counter()
    vector = query_cache.get(cache_key(get_embedder(), asker, query))
    if vector is not None:
        return _Done((vector, True, (time.perf_counter() - start) * 1000))
    return _embed_pool().submit(_embed_timed, query, asker, embed_threads(stages))


def embed_ahead(query, strategy, principal: Principal | None) -> Future | _Done | None:
    """Start embedding a valid query of a strategy that searches by vector, and return the pending
    embedding for recall_memories/assemble_context (`embedding=`). The API calls it as soon as the body
    is parsed, so the embedding (the longest stage) overlaps the read of the caller's access; the caller
    is already authenticated and throttled. Nothing is read or returned from memory here: a caller
    without access to the scope gets its 404 and the vector is only cached."""
    try:
        _validate(query, strategy, None)
    except InvalidInput:
        return None  # the request will fail its own validation with the right error
    stages = STRATEGIES[strategy]
    return _start_embed(query, asker_of(principal), stages) if VECTOR in stages else None


class _Done:
    """A finished future, for cache hits."""

    def __init__(self, value) -> None:
        self.value = value

    def result(self):
        return self.value

    def cancel(self) -> bool:
        return False


def _finish_embed(state: RecallState, pending: Future | _Done) -> None:
    """Join the embedding. The trace gets `embed` (the embedding's own time, in the worker) and
    `embed_wait` (what this thread actually waited for it after the SQL stages)."""
    start = time.perf_counter()
    vector, _cached, ms = pending.result()
    waited = (time.perf_counter() - start) * 1000
    state.query_vector = vector
    # A cache hit shows as embed ≈ 0 ms (the trace keeps its four keys per stage).
    state.trace.append({"name": "embed", "ms": round(ms, 3), "in": 1, "out": 1})
    state.trace.append({"name": "embed_wait", "ms": round(waited, 3), "in": 1, "out": 1})
    tracing.timed("embed", ms)
    tracing.timed("embed_wait", waited)


def embed_question(state: RecallState) -> tuple[int, int]:
    """The query embedding on the calling thread (the tuning set's runner)."""
    state.query_vector, _ = embed_query_cached(get_embedder(), state.query, asker=asker_of(state.principal))
    return 1, 1


def _state(principal, scope, query, strategy, as_of, k, session="", task=None) -> RecallState:
    scope_ids = None
    if isinstance(scope, ScopeAccess):  # the API read the caller's access with the scope: no more queries
        if principal is not None:
            require_roles(scope.roles, Action.ASK_CONTEXT)
        scope, scope_ids = scope.scope, scope.scope_ids
    else:
        scope = _resolve_scope(scope)
        require(principal, scope, Action.ASK_CONTEXT)
    return RecallState(
        principal=principal,
        scope=scope,
        scope_ids=scope_ids,
        query=query,
        stages=STRATEGIES[strategy],
        at=as_of or timezone.now(),
        as_of=as_of,
        k=k,
        session=session or "",
        task=task,
        task_type=(task or {}).get("type", "") or "",
        # auto lets the planner choose; bench_context sets exact/hnsw to compare the two paths.
        vector_mode=getattr(settings, "RECALL_VECTOR_MODE", "auto"),
    )


def result_item(hit: Hit) -> dict:
    row = hit.row
    return {
        "memory_id": hit.id,
        "text": row["text"],
        "kind": row["kind"],
        "key": row["key"],
        "revision": row["revision"],
        "status": row["status"],
        "source": {"kind": row["source_kind"], "ref": row["source_ref"]},
        "score": round(hit.score, 6),
        "scores": {
            "semantic": None if hit.semantic is None else round(hit.semantic, 6),
            "lexical": None if hit.lexical is None else round(hit.lexical, 6),
            "activation": round(hit.activation, 6),
            "recency": round(hit.recency, 6),
        },
    }


def recall_memories(
    *,
    principal: Principal | None,
    scope: Scope | ScopeAccess | str,
    query: str,
    k: int = 10,
    strategy: str = "full",
    as_of: datetime | None = None,
    embedding: Future | _Done | None = None,
) -> list[dict]:
    """The k best eligible memories for `query` in `scope` (never superseded, retired or forgotten ones).
    `embedding`: the query's embedding started by embed_ahead(query, strategy, principal)."""
    _validate(query, strategy, as_of)
    if not isinstance(k, int) or isinstance(k, bool) or not 1 <= k <= MAX_K:
        raise InvalidInput(BAD_K, field="k")
    state = _state(principal, scope, query, strategy, as_of, k)
    _run_stages(state, embedding)
    hits = state.evidence if state.stages != STRATEGIES["recent"] else list(reversed(state.recent))
    return [result_item(h) for h in hits if h.row["status"] != Status.SUPERSEDED][:k]


def recall_with_stages(
    *,
    principal: Principal | None,
    scope: Scope | ScopeAccess | str,
    query: str,
    k: int,
    stages: frozenset[str],
    trace: list | None = None,
    as_of: datetime | None = None,
) -> list[dict]:
    """recall_memories with a set of stages instead of a named strategy: `evaluate_retrieval` measures each
    single search path (keyword only has no strategy name of its own) through the same pipeline.
    `trace`: a list that receives the stages' trace (name, ms, in, out), for the latency split. `as_of`: as
    recall_memories (a benchmark question asked at its own date)."""
    _validate(query, "full", as_of)
    state = _state(principal, scope, query, "full", as_of, k)
    state.stages = frozenset(stages)
    _run_stages(state)
    if trace is not None:
        trace.extend(state.trace)
    return [result_item(h) for h in state.evidence if h.row["status"] != Status.SUPERSEDED][:k]


def assemble_context(
    *,
    principal: Principal | None,
    scope: Scope | ScopeAccess | str,
    query: str,
    budget_tokens: int,
    strategy: str = "full",
    task: dict | None = None,
    as_of: datetime | None = None,
    session: str = "",
    store: bool = True,
    embedding: Future | _Done | None = None,
    include: tuple[str, ...] | list[str] = (),
) -> dict:
    """Assemble, store and return the context packet for one turn (see docs/api.md for the shape).
    `embedding`: the query's embedding started by embed_ahead(query, strategy, principal). `include`:
    optional slots to add, ("handoff",): the task scope's hand-off (recall/handoff.py)."""
    _validate(query, strategy, as_of, task)
    if not isinstance(include, list | tuple) or any(i not in handoff_mod.INCLUDES for i in include):
        raise InvalidInput(handoff_mod.BAD_INCLUDE, field="include")
    if (
        not isinstance(budget_tokens, int)
        or isinstance(budget_tokens, bool)
        or not 1 <= budget_tokens <= MAX_BUDGET
    ):
        raise InvalidInput(BAD_BUDGET, field="budget_tokens")
    state = _state(principal, scope, query, strategy, as_of, 10, session, task)
    _run_stages(state, embedding)
    if "handoff" in include:
        state.run("handoff", handoff_mod.handoff_stage)
    holder: dict = {}

    def _pack(s: RecallState) -> tuple[int, int]:
        holder["packet"], holder["used"] = pack(s, budget_tokens)
        came = {
            "rank": len(s.evidence),
            "recent": len(s.recent),
            "keyed": len(s.constraints) + len(s.preferences),
            "adjudicate": len(s.negative),
            **({"handoff": len(s.handoff)} if s.handoff is not None else {}),
        }
        out = sum(len(v) for k, v in holder["packet"].items() if k not in ("skipped", "task", "relations"))
        skipped = sum(1 for b in holder["packet"].get("skipped", []) if b.get("stage") == "pack")
        # The blocks placed, and where the rest went: skipped by name for the budget, not among the k best
        # of their slot (named in `ids`), or came twice (a recent turn search found too) and count once.
        rest = max(sum(came.values()) - out - skipped, 0)
        unplaced, twice = _left_at_pack(s, holder["packet"])
        unplaced = unplaced[:rest]
        return (
            sum(came.values()),
            out,
            {
                "from": came,
                "over_budget": skipped,
                "not_placed": len(unplaced),
                "already_placed": rest - len(unplaced),
                "ids": {"not_placed": unplaced, "already_placed": twice},
            },
        )

    state.run("pack", _pack)
    packet, used = holder["packet"], holder["used"]
    result = {
        "turn_id": None,
        "packet": packet,
        "budget": {"limit": budget_tokens, "used": used, "counter": counter_name()},
        "trace": {"stages": state.trace, "pending_vectors": state.pending_vectors, "counts": state.counts},
        "text": render_packet_text(packet),
    }
    observe_stages(state.trace)
    if store:
        started = time.perf_counter()
        result["turn_id"] = _store_turn(state, result, strategy, budget_tokens, list(include))
        # The turn's insert and the reinforcement's enqueue (published after the commit, off this thread).
        tracing.timed("store", (time.perf_counter() - started) * 1000)
    return result


def _left_at_pack(state: RecallState, packet: dict) -> tuple[list[int], list[int]]:
    """Of what came to pack (evidence first, in rank order): the memories in no slot of the packet and
    not skipped by name (not among the best of their slot), and those that came twice (a recent turn
    search found too), counted once under the slot they were placed in or skipped from."""
    named = {
        b.get("memory_id")
        for slot, blocks in packet.items()
        if slot not in ("task", "relations")
        for b in blocks
        if isinstance(b, dict)
    }
    came = [*state.evidence, *state.recent, *state.constraints, *state.preferences, *state.negative]
    ids = [
        i
        for i in [h.id for h in came] + [b.get("memory_id") for b in state.handoff or []]
        if isinstance(i, int)
    ]
    times: dict[int, int] = {}
    for i in ids:
        times[i] = times.get(i, 0) + 1
    unplaced = [i for i in times if i not in named]
    return unplaced, [i for i, n in times.items() if n > 1 and i in named]


def stages_run(
    *,
    principal: Principal | None,
    scope: Scope,
    query: str,
    strategy: str,
    as_of: datetime | None,
    session: str = "",
    task: dict | None = None,
) -> RecallState:
    """The state after every stage before packing, for explaining a turn (governance.recall.explain): the
    same checks (ASK_CONTEXT on the scope) and stages as assemble_context, nothing stored or reinforced."""
    _validate(query, strategy, as_of, task)
    state = _state(principal, scope, query, strategy, as_of, 10, session, task)
    _run_stages(state)
    return state


def used_memory_ids(packet: dict) -> list[int]:
    """Memories the packet presents as usable (not the negative context, not what was skipped)."""
    return [
        b["memory_id"]
        for slot in ("constraints", "recent", "evidence", "preferences", "external")
        for b in packet.get(slot, [])
        if b.get("memory_id") is not None
    ]


def _store_turn(state: RecallState, result: dict, strategy: str, budget: int, include: list[str]) -> int:
    """Store the Turn and its TurnMemory rows in one statement (one round trip, atomic on its own; part
    of the caller's transaction when there is one), then queue the reinforcement for after the commit."""
    packet = result["packet"]
    query = REDACTED if state.query and repeats_purged_text(state.query, state.scope) else state.query
    request = {
        "scope": state.scope.path,
        "query": query,
        "budget_tokens": budget,
        "strategy": strategy,
        "task": state.task,
        "as_of": state.as_of.isoformat() if state.as_of else None,
        "session": state.session,
        **({"include": include} if include else {}),
    }
    turn = Turn(
        scope=state.scope,
        principal=state.principal,
        session=state.session,
        query=query,
        strategy=strategy,
        as_of=state.as_of,
        request=request,
        packet=packet,
        text=result["text"],
        budget_limit=budget,
        budget_used=result["budget"]["used"],
        token_counter=counter_name(),
        trace=result["trace"],
    )
    cited: dict[tuple[int, str], bool] = {}
    for slot, blocks in packet.items():
        for b in blocks:
            memory_id = b.get("memory_id")
            if memory_id is None or not isinstance(memory_id, int):
                continue
            real_slot = b.get("slot", slot) if slot == "skipped" else slot
            cited.setdefault((memory_id, real_slot), slot != "skipped")
    fields = [f for f in Turn._meta.concrete_fields if not f.primary_key]
    quote = connection.ops.quote_name
    note_write()  # on the primary; a failure from here on is not a read to run again elsewhere
    with connection.cursor() as cursor:
        # A data-modifying CTE: the TurnMemory rows take the new turn's id without a second round trip,
        # and without BEGIN/COMMIT of their own (a single statement is atomic).
        cursor.execute(
            f"WITH turn AS (INSERT INTO {quote(Turn._meta.db_table)} ({', '.join(quote(f.column) for f in fields)})"
            f" VALUES ({', '.join(['%s'] * len(fields))}) RETURNING id),"
            f" cited AS (INSERT INTO {quote(TurnMemory._meta.db_table)} (turn_id, memory_id, slot, included)"
            "  SELECT turn.id, c.memory_id, c.slot, c.included FROM turn,"
            "   unnest(%s::bigint[], %s::varchar[], %s::boolean[]) AS c(memory_id, slot, included)"
            "  ON CONFLICT DO NOTHING)"
            " SELECT id FROM turn",
            [
                *(f.get_db_prep_save(f.pre_save(turn, True), connection) for f in fields),
                [m for m, _ in cited],
                [s for _, s in cited],
                list(cited.values()),
            ],
        )
        turn_id = cursor.fetchone()[0]
    queue_reinforcement(turn_id=turn_id, memory_ids=used_memory_ids(packet), at=state.at)
    return turn_id
