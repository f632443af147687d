"""Loading one synthetic task into its own scopes through the write services and event ingestion
(the same paths an agent and a curator use), then embedding its memories synchronously so the
vector stage sees them without waiting for a worker."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.utils import timezone

from devtools.evaluation.scorers import Loaded
from devtools.evaluation.suite import VISIBLE_PLACES, EvalTask, MemorySpec
from governance.models import Memory, Principal, Role, Scope
from governance.propagation import embed_memories
from governance.propagation.stores import run_after_embedding
from governance.services.memory import (
    MemoryInput,
    memory_forget,
    memory_record,
    memory_reject,
    memory_retire,
    memory_supersede,
)
from governance.services.principal import grant_add, principal_ensure
from governance.services.relation import relation_add
from governance.services.scope import scope_ensure
from governance.services.scope_admin import scope_settings_set

UNKNOWN_ACTION = "Unknown task action {op!r}."


@dataclass
class Principals:
    curator: Principal  # writes, supersedes, retires, forgets: owner of both workspaces
    agent: Principal  # asks for context: the agent role on the whole evaluation workspace


@dataclass
class LoadedTask:
    task: EvalTask
    scope: Scope
    ids: dict[str, Loaded]
    visible_ids: set[int]  # every memory a read in the task scope may show
    anchor: datetime


def ensure_principals(root: str) -> Principals:
    """The evaluation's writer and reader. The reader holds a grant on the sibling scopes too, so a
    leak would be the pipeline's scope filter failing, not a missing grant hiding it."""
    home = scope_ensure(path=root, actor=None)
    away = scope_ensure(path=f"{root}-x", actor=None)
    curator = principal_ensure(name=f"{root}-curator", kind="user", actor=None)
    agent = principal_ensure(name=f"{root}-agent", kind="agent", actor=None)
    for scope in (home, away):
        grant_add(principal=curator, scope=scope, role=Role.OWNER, actor=None)
        grant_add(principal=agent, scope=scope, role=Role.AGENT, actor=None)
    return Principals(curator=curator, agent=agent)


def task_scopes(root: str, task: EvalTask) -> dict[str, Scope]:
    slug = task.id.lower()
    return {
        "parent": scope_ensure(path=f"{root}/{slug}", actor=None),
        "task": scope_ensure(path=f"{root}/{slug}/main", actor=None),
        "sibling": scope_ensure(path=f"{root}/{slug}/other", actor=None),
        "foreign": scope_ensure(path=f"{root}-x/{slug}/main", actor=None),
    }


def _memory_input(spec: MemorySpec, scope: Scope, anchor: datetime) -> MemoryInput:
    at = anchor - timedelta(minutes=spec.ago_min)
    until = anchor - timedelta(minutes=spec.expired_ago_min) if spec.expired_ago_min is not None else None
    return MemoryInput(
        scope=scope,
        kind=spec.kind,
        text=spec.text,
        source_kind=spec.source_kind,
        source_ref=spec.source_ref,
        key=spec.key,
        status=spec.status,
        confidence=spec.confidence,
        importance=spec.importance,
        tier=spec.tier,
        valid_from=at if until else None,
        valid_until=until,
        session=spec.session,
        call_id=spec.call_id,
        occurred_at=at,
    )


def load_task(task: EvalTask, *, root: str, principals: Principals) -> LoadedTask:
    from governance.services.events import event_ingest

    anchor = timezone.now()
    scopes = task_scopes(root, task)
    ids: dict[str, Loaded] = {}
    prefix = f"{task.id}-"

    def write(spec: MemorySpec) -> None:
        writer = principals.agent if spec.by == "agent" else principals.curator
        memory = memory_record(item=_memory_input(spec, scopes[spec.place], anchor), actor=writer)
        ids[spec.label] = Loaded(memory.pk, memory.text)

    for spec in task.memories:
        if spec.first:
            write(spec)
    for event in task.events:
        turns = [
            {
                "role": t.role,
                "content": t.content,
                "ref": t.ref,
                **({"call_id": t.call_id} if t.call_id else {}),
            }
            for t in event.turns
        ]
        event_ingest(
            scope=scopes["task"],
            session=event.session,
            at=anchor - timedelta(minutes=event.ago_min),
            turns=turns,
            actor=principals.agent,
        )
    refs = [t.ref for e in task.events for t in e.turns]
    # A turn is known by its ref: the episodic memory that keeps it gets the ref's label.
    for pk, ref, text in (
        Memory.objects.filter(scope=scopes["task"], source_ref__in=refs, kind="episodic")
        .order_by("-pk")
        .values_list("pk", "source_ref", "text")
    ):
        ids[ref.removeprefix(prefix)] = Loaded(pk, text)
    # What the extractor wrote from a turn is known by the turn's label and ":said" (the first, by id).
    for pk, ref, text in (
        Memory.objects.filter(scope=scopes["task"], source_ref__in=refs)
        .exclude(kind="episodic")
        .order_by("-pk")
        .values_list("pk", "source_ref", "text")
    ):
        ids[f"{ref.removeprefix(prefix)}:said"] = Loaded(pk, text)
    for spec in task.memories:
        if not spec.first:
            write(spec)
    for action in task.actions:
        if action.op != "settle":
            _apply(action, ids, principals.curator)
    scope_ids = [s.pk for s in scopes.values()]
    loaded = list(Memory.objects.filter(scope_id__in=scope_ids).values_list("pk", flat=True))
    embed_memories(loaded)
    # What the embedding worker does after each embedding (unkeyed contradictions proposed as disputes).
    run_after_embedding(loaded)
    for action in task.actions:
        if action.op == "settle":  # a person's decision on what the system proposed once it was embedded
            _apply(action, ids, principals.curator)
    visible = set(
        Memory.objects.filter(scope_id__in=[scopes[p].pk for p in VISIBLE_PLACES]).values_list(
            "pk", flat=True
        )
    )
    return LoadedTask(task=task, scope=scopes["task"], ids=ids, visible_ids=visible, anchor=anchor)


def _apply(action, ids: dict[str, Loaded], actor: Principal) -> None:
    target = ids[action.target].id
    if action.op == "supersede":
        new = memory_supersede(
            memory_id=target,
            text=action.text,
            reason=action.reason,
            source_kind=action.source_kind,
            source_ref=action.source_ref,
            actor=actor,
        )
        ids[action.label] = Loaded(new.pk, new.text)
    elif action.op == "contradict":
        relation_add(
            source_id=ids[action.label].id,
            target_id=target,
            kind="contradicts",
            reason=action.reason,
            actor=actor,
        )
    elif action.op == "replace":
        relation_add(
            source_id=ids[action.label].id,
            target_id=target,
            kind="supersedes",
            reason=action.reason,
            actor=actor,
        )
    elif action.op == "support":
        relation_add(
            source_id=ids[action.label].id,
            target_id=target,
            kind="supports",
            reason=action.reason,
            actor=actor,
        )
    elif action.op == "settle":
        from governance.models import Dispute
        from governance.services.dispute import dispute_confirm

        newer = ids[action.label].id
        dispute = Dispute.objects.filter(newer_id=newer, older_id=target).first()
        if dispute is None:
            return  # nothing was proposed: nothing to settle, and the task's checks say what is missing
        dispute_confirm(dispute_id=dispute.pk, holds_id=newer, reason=action.reason, actor=actor)
    elif action.op == "retire":
        memory_retire(memory_id=target, actor=actor, reason=action.reason)
    elif action.op == "forget":
        memory_forget(memory_id=target, actor=actor, reason=action.reason)
    elif action.op == "reject":
        memory_reject(memory_id=target, actor=actor, reason=action.reason)
    elif action.op == "binding":
        memory = Memory.objects.select_related("scope").get(pk=target)
        scope_settings_set(
            scope=memory.scope,
            binding_keys=[*memory.scope.binding_keys, memory.key],
            actor=actor,
            reason=action.reason,
        )
    else:
        raise ValueError(UNKNOWN_ACTION.format(op=action.op))
