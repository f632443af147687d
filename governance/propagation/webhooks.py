"""Outbound events: the `webhooks` derived store. An outbox row of a change a subscription asked for gets
a `webhooks` delivery (services/outbox.py asks `webhook_events` while writing the row); its handler fans
the row out into one WebhookDelivery per event and matching subscription, and each of those is sent by
its own task (`governance.tasks.deliver_webhook`), retried with backoff and jitter up to a cap, then
left "failed" for a person to redeliver. See docs/webhooks.md.

An event body holds ids, the scope path, kind, key, status, revision and the keyed content hash of the
memory: never its text, whatever the event (receivers read memories through the API with their own
grants), and for a forgotten memory not even its key."""

from __future__ import annotations

import json
import logging
import random
import time
import uuid
from datetime import timedelta
from http.client import HTTPException

from celery import shared_task
from cryptography.fernet import InvalidToken
from django.conf import settings
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from governance.models import (
    AuditEvent,
    EventType,
    Memory,
    Outbox,
    Principal,
    Relation,
    RelationKind,
    Scope,
    Status,
    WebhookDelivery,
    WebhookSubscription,
    Workspace,
)
from governance.permissions import grants_for
from governance.propagation.stores import handler
from governance.propagation.webhook_transport import (
    RedirectAnswer,
    TargetRefused,
    deadline_seconds,
    post,
    sign,
)
from governance.runtime.degraded import publish
from governance.runtime.retries import RETRY

logger = logging.getLogger(__name__)

# The id namespace of events: one outbox row, one event type and one memory always make the same id,
# so a fan-out that runs twice (a retry, the reconciler) finds the deliveries it already made.
EVENT_NAMESPACE = uuid.UUID("5b7c1d1e-3a53-4f4e-9a3c-1f0c0de0e7e1")

STATUS_EVENTS = {
    Status.ACTIVE: EventType.MEMORY_CONFIRMED,
    Status.SUPERSEDED: EventType.MEMORY_SUPERSEDED,
    Status.RETIRED: EventType.MEMORY_RETIRED,
    Status.PROPOSED: EventType.REVIEW_WAITING,
}
# The outbox topics that may make events, and the event types each may make.
TOPIC_EVENTS: dict[str, tuple[str, ...]] = {
    "memory.status": tuple(STATUS_EVENTS.values()),
    "memory.created": (EventType.MEMORY_CONFIRMED, EventType.REVIEW_WAITING),
    "memory.forgotten": (EventType.MEMORY_FORGOTTEN,),
    "grant.changed": (EventType.GRANT_CHANGED,),
}

SUBSCRIPTION_PAUSED = "The subscription is paused; redeliver after turning it on again."
SECRET_UNREADABLE = (
    "The signing secret cannot be decrypted (SECRET_KEY or WEBHOOK_SECRET_KEY changed without "
    "the old key in SECRET_KEY_FALLBACKS); rotate the secret, then redeliver."
)

HEADER_ID = "X-Memgov-Event-Id"
HEADER_EVENT = "X-Memgov-Event"
HEADER_TIMESTAMP = "X-Memgov-Timestamp"
HEADER_SIGNATURE = "X-Memgov-Signature"
HEADER_ATTEMPT = "X-Memgov-Attempt"


def webhook_events(topic: str, memory: Memory | None, payload: dict) -> list[dict]:
    """What a change about to be written to the outbox means to subscribers: a list of {type, memory_id}
    (frozen in the row, so a later change of the memory cannot alter what this event was). Empty, at the
    cost of one query, when no active subscription anywhere takes any event this topic can make."""
    possible = TOPIC_EVENTS.get(topic)
    if (
        not possible
        or not WebhookSubscription.objects.filter(active=True, event_types__overlap=list(possible)).exists()
    ):
        return []
    ids = [int(i) for i in payload.get("memory_ids") or []]
    if memory is not None and memory.pk not in ids:
        ids.append(memory.pk)
    last = _own_audit_event()
    actor = _actor(topic, ids, last)
    if topic == "memory.status":
        event = STATUS_EVENTS.get(payload.get("status"))
        return [{"type": event, "memory_id": i, "actor": actor} for i in ids] if event else []
    if topic == "memory.forgotten":
        return [
            {
                "type": EventType.MEMORY_FORGOTTEN,
                "memory_id": i,
                "mode": payload.get("mode", "soft"),
                "actor": actor,
            }
            for i in ids
        ]
    if topic == "grant.changed":
        return _grant_events(payload, last, actor)
    # memory.created: a proposal waits for review; a memory written in force by one who may confirm it
    # is confirmed. A plain episode is neither.
    rows = (
        [memory]
        if memory is not None and ids == [memory.pk]
        else Memory.objects.filter(pk__in=ids).only("pk", "status", "confirmed_at")
    )
    events = []
    for row in rows:
        if row.status == Status.PROPOSED:
            events.append({"type": EventType.REVIEW_WAITING, "memory_id": row.pk, "actor": actor})
        elif row.status == Status.ACTIVE and row.confirmed_at is not None:
            events.append({"type": EventType.MEMORY_CONFIRMED, "memory_id": row.pk, "actor": actor})
    return events


def _own_audit_event() -> dict | None:
    """The audit event the service wrote just before this outbox row, in the same transaction: the audit
    chain's advisory lock is held to the end of that transaction, so the newest audit event is ours (the
    callers still check that it names this change's target)."""
    return (
        AuditEvent.objects.order_by("-pk")
        .values("actor_name", "action", "target_type", "target_id", "data")
        .first()
    )


GRANT_ACTIONS = {"grant.add": "added", "grant.revoke": "revoked"}
MEMBER_ACTIONS = {"group.member_add": "member_added", "group.member_remove": "member_removed"}


def _actor(topic: str, memory_ids: list[int], last: dict | None) -> str | None:
    """Who made the change, when the audit event names this change's target; otherwise unknown."""
    if last is None:
        return None
    if topic == "grant.changed":
        return (
            last["actor_name"]
            if last["action"] in GRANT_ACTIONS or last["action"] in MEMBER_ACTIONS
            else None
        )
    ours = last["target_type"] == "memory" and last["target_id"] in {str(i) for i in memory_ids}
    return last["actor_name"] if ours else None


def _grant_events(payload: dict, last: dict | None, actor: str | None) -> list[dict]:
    """A grant added or revoked on a scope: one event in that scope's workspace, with the role. A member
    added to or removed from a team: one event in each workspace where the team holds a grant (the team
    and member names from the audit event; the outbox row names neither team nor scope)."""
    data = (last or {}).get("data") or {}
    if payload.get("scope_id"):
        spec = {"type": EventType.GRANT_CHANGED, "actor": actor}
        if last and last["action"] in GRANT_ACTIONS:
            spec.update(change=GRANT_ACTIONS[last["action"]], role=data.get("role"))
        return [spec]
    if not last or last["action"] not in MEMBER_ACTIONS or not str(last["target_id"]).isdigit():
        return []
    group = Principal.objects.filter(pk=int(last["target_id"])).first()
    if group is None:
        return []
    workspace_ids = sorted({g.scope.workspace_id for g in grants_for(group)})
    return (
        [
            {
                "type": EventType.GRANT_CHANGED,
                "actor": actor,
                "change": MEMBER_ACTIONS[last["action"]],
                "group": data.get("group"),
                "member": data.get("member"),
                "workspace_ids": workspace_ids,
            }
        ]
        if workspace_ids
        else []
    )


def event_id(outbox_id: int, spec: dict) -> uuid.UUID:
    return uuid.uuid5(EVENT_NAMESPACE, f"{outbox_id}:{spec['type']}:{spec.get('memory_id', '')}")


def _memory_data(memory: Memory, spec: dict) -> dict:
    if spec["type"] == EventType.MEMORY_FORGOTTEN:
        # Id, scope and hash only: the receiver can match the hash against what it holds and drop it.
        return {
            "id": memory.pk,
            "scope": memory.scope.path,
            "kind": memory.kind,
            "status": Status.FORGOTTEN,
            "content_hash": memory.content_hash,
            "mode": spec.get("mode", "soft"),
        }
    status = {
        EventType.MEMORY_CONFIRMED: Status.ACTIVE,
        EventType.MEMORY_SUPERSEDED: Status.SUPERSEDED,
        EventType.MEMORY_RETIRED: Status.RETIRED,
        EventType.REVIEW_WAITING: Status.PROPOSED,
    }[spec["type"]]
    data = {
        "id": memory.pk,
        "scope": memory.scope.path,
        "kind": memory.kind,
        "key": memory.key,
        "revision": memory.revision,
        "tier": memory.tier,
        "status": status,
        "content_hash": memory.content_hash,
    }
    if spec["type"] == EventType.MEMORY_SUPERSEDED:
        data["superseded_by"] = (
            Relation.objects.filter(target=memory, kind=RelationKind.SUPERSEDES)
            .order_by("-pk")
            .values_list("source_id", flat=True)
            .first()
        )
    return data


def _bodies(outbox: Outbox) -> list[tuple[int, dict]]:
    """(workspace id, body) per event of the row, built now from the frozen specs and the rows' ids."""
    specs = outbox.payload.get("webhook_events") or []
    memory_ids = [s["memory_id"] for s in specs if s.get("memory_id")]
    memories = {m.pk: m for m in Memory.objects.filter(pk__in=memory_ids).select_related("scope__workspace")}
    out = []
    for spec in specs:
        base = {
            "id": str(event_id(outbox.pk, spec)),
            "type": spec["type"],
            "created_at": outbox.created_at.isoformat(),
            "actor": spec.get("actor"),
        }
        if spec["type"] == EventType.GRANT_CHANGED and spec.get("workspace_ids"):
            data = {"change": spec.get("change"), "group": spec.get("group"), "member": spec.get("member")}
            for workspace in Workspace.objects.filter(pk__in=spec["workspace_ids"]):
                out.append((workspace.pk, {**base, "workspace": workspace.slug, "data": data}))
            continue
        if spec["type"] == EventType.GRANT_CHANGED:
            scope = (
                Scope.objects.select_related("workspace").filter(pk=outbox.payload.get("scope_id")).first()
            )
            if scope is None:
                continue
            principal = (
                Principal.objects.filter(pk=outbox.payload.get("principal_id"))
                .values_list("name", flat=True)
                .first()
            )
            out.append(
                (
                    scope.workspace_id,
                    {
                        **base,
                        "workspace": scope.workspace.slug,
                        "data": {
                            "scope": scope.path,
                            "principal": principal,
                            "change": spec.get("change"),
                            "role": spec.get("role"),
                        },
                    },
                )
            )
            continue
        memory = memories.get(spec["memory_id"])
        if memory is None:
            continue  # deleted since: nothing to tell
        out.append(
            (
                memory.scope.workspace_id,
                {
                    **base,
                    "workspace": memory.scope.workspace.slug,
                    "data": {"memory": _memory_data(memory, spec)},
                },
            )
        )
    return out


@handler("webhooks")
def _webhooks_store(outbox: Outbox) -> None:
    """Fan out: one delivery per event and subscription of the event's workspace that takes its type."""
    now = timezone.now()
    rows = []
    for workspace_id, body in _bodies(outbox):
        for sub_id in WebhookSubscription.objects.filter(
            workspace_id=workspace_id, active=True, event_types__contains=[body["type"]]
        ).values_list("pk", flat=True):
            rows.append(
                WebhookDelivery(
                    subscription_id=sub_id,
                    outbox=outbox,
                    event_id=uuid.UUID(body["id"]),
                    event_type=body["type"],
                    body=body,
                    next_attempt_at=now,
                )
            )
    WebhookDelivery.objects.bulk_create(rows, ignore_conflicts=True)
    pending = list(
        WebhookDelivery.objects.filter(outbox=outbox, state=WebhookDelivery.State.PENDING).values_list(
            "pk", flat=True
        )
    )
    transaction.on_commit(lambda: queue_deliveries_later(pending))


def queue_deliveries_later(delivery_ids: list[int]) -> None:
    """Hand the queueing of these deliveries to the webhooks queue in one message: a propagation worker
    (the fan-out, the reconciler) never spends its time on one message per subscription and event, so a
    backlog of slow receivers costs it one message, not hundreds."""
    if not delivery_ids:
        return
    # Broker down: the rows are pending and due; the reconciler sends them.
    if publish(
        lambda: queue_webhooks.delay(list(delivery_ids)), what=f"{len(delivery_ids)} webhook deliveries"
    ):
        _mark_queued(delivery_ids)


def _mark_queued(delivery_ids: list[int], countdown: float = 0) -> None:
    """Remember that a message for these rows is on its way (runnable `countdown` seconds from now): the
    reconciler leaves them alone until RECONCILE_REQUEUE_AFTER_SECONDS past that (webhook_deliveries_due)."""
    at = timezone.now() + timedelta(seconds=countdown)
    WebhookDelivery.objects.filter(pk__in=delivery_ids, state=WebhookDelivery.State.PENDING).update(
        queued_at=at
    )


def queue_deliveries(delivery_ids: list[int], countdown: float = 0) -> None:
    queued = [
        pk
        for pk in delivery_ids  # broker down: the row is pending and due; the reconciler sends it
        if publish(
            lambda pk=pk: deliver_webhook.apply_async((pk,), countdown=countdown),
            what=f"webhook delivery {pk}",
        )
    ]
    if queued:
        _mark_queued(queued, countdown)


# The task lives beside the attempt it runs (its name stays `governance.tasks.deliver_webhook`): queueing a
# delivery and running one then need no import back from propagation.tasks.
@shared_task(name="governance.tasks.deliver_webhook", **RETRY)
def deliver_webhook(delivery_id: int) -> str | None:
    """Send one webhook delivery if it is due and unclaimed (its own retries are scheduled by the
    attempt itself, with backoff and jitter; docs/webhooks.md)."""
    return webhook_attempt(delivery_id)


@shared_task(name="governance.tasks.queue_webhooks", **RETRY)
def queue_webhooks(delivery_ids: list[int]) -> int:
    """Queue one deliver_webhook message per delivery (routed to the `webhooks` queue, like the sending:
    the fan-out and the reconciler hand it one message instead of queueing each delivery themselves)."""
    queue_deliveries(delivery_ids)
    return len(delivery_ids)


def backoff_seconds(attempts: int) -> float:
    """Exponential from WEBHOOK_RETRY_BASE_SECONDS, capped at WEBHOOK_RETRY_MAX_SECONDS, with "equal
    jitter" (half fixed, half random) so receivers that come back are not hit by every sender at once."""
    base = float(settings.WEBHOOK_RETRY_BASE_SECONDS)
    delay = min(float(settings.WEBHOOK_RETRY_MAX_SECONDS), base * (2 ** max(attempts - 1, 0)))
    return delay / 2 + random.uniform(0, delay / 2)


# How long a claim outlives the delivery's deadline (the resolve before it, recording the outcome after).
CLAIM_MARGIN_SECONDS = 30.0


def claim_seconds() -> float:
    """How long one attempt holds its delivery: longer than its total deadline, so the reconciler (which
    re-queues unclaimed or expired claims) never sends the same delivery again while it is in flight."""
    return deadline_seconds() + CLAIM_MARGIN_SECONDS


def _claim(delivery_id: int) -> bool:
    now = timezone.now()
    hold = timedelta(seconds=claim_seconds())
    return bool(
        WebhookDelivery.objects.filter(
            pk=delivery_id, state=WebhookDelivery.State.PENDING, next_attempt_at__lte=now
        )
        .filter(Q(claimed_until__isnull=True) | Q(claimed_until__lt=now))
        # Its message is taken: the claim, not `queued_at`, keeps the reconciler off it from here.
        .update(claimed_until=now + hold, attempts=F("attempts") + 1, last_attempt_at=now, queued_at=None)
    )


def encode(body: dict) -> bytes:
    return json.dumps(body, separators=(",", ":"), sort_keys=True).encode()


def webhook_attempt(delivery_id: int) -> str | None:
    """Send one delivery once if it is due and nobody else holds it; record how it went. Returns the new
    state, or None when there was nothing to do."""
    if not _claim(delivery_id):
        return None
    delivery = WebhookDelivery.objects.select_related("subscription").get(pk=delivery_id)
    subscription = delivery.subscription
    mine = WebhookDelivery.objects.filter(pk=delivery_id, state=WebhookDelivery.State.PENDING)
    if not subscription.active:
        mine.update(state=WebhookDelivery.State.FAILED, last_error=SUBSCRIPTION_PAUSED, claimed_until=None)
        return WebhookDelivery.State.FAILED
    try:
        secret = subscription.secret()
    except InvalidToken:  # encrypted under a key this installation no longer has
        mine.update(state=WebhookDelivery.State.FAILED, last_error=SECRET_UNREADABLE, claimed_until=None)
        return WebhookDelivery.State.FAILED
    body = encode(delivery.body)
    timestamp = int(time.time())
    headers = {
        HEADER_ID: str(delivery.event_id),
        HEADER_EVENT: delivery.event_type,
        HEADER_TIMESTAMP: str(timestamp),
        HEADER_SIGNATURE: sign(secret, timestamp, body),
        HEADER_ATTEMPT: str(delivery.attempts),
    }
    status_code, elapsed, error, final = None, None, "", False
    try:
        answer = post(subscription.url, body, headers)
        status_code, elapsed = answer.status, answer.elapsed_ms
        if 200 <= answer.status < 300:
            mine.update(
                state=WebhookDelivery.State.DELIVERED,
                last_status_code=status_code,
                response_ms=elapsed,
                last_error="",
                delivered_at=timezone.now(),
                claimed_until=None,
            )
            return WebhookDelivery.State.DELIVERED
        error = f"The receiver answered HTTP {answer.status}."
    except TargetRefused as exc:  # the address is not allowed: retrying would not change that
        error, final = exc.message, True
    except RedirectAnswer as exc:
        status_code, elapsed, error, final = exc.status, exc.elapsed_ms, str(exc), True
    except (OSError, HTTPException) as exc:  # refused, reset, timed out, not HTTP
        error = f"{type(exc).__name__}: {exc}"[:1000] or type(exc).__name__
    if final or delivery.attempts >= int(settings.WEBHOOK_MAX_ATTEMPTS):
        mine.update(
            state=WebhookDelivery.State.FAILED,
            last_status_code=status_code,
            response_ms=elapsed,
            last_error=error,
            claimed_until=None,
        )
        return WebhookDelivery.State.FAILED
    delay = backoff_seconds(delivery.attempts)
    mine.update(
        last_status_code=status_code,
        response_ms=elapsed,
        last_error=error,
        claimed_until=None,
        next_attempt_at=timezone.now() + timedelta(seconds=delay),
    )
    queue_deliveries([delivery_id], countdown=delay)
    return WebhookDelivery.State.PENDING


def webhook_deliveries_due(*, overdue_seconds: float, limit: int = 500) -> int:
    """The reconciler's part: queue pending deliveries overdue by more than `overdue_seconds` (their task
    was lost with a worker or a broker restart). A row whose message is still waiting (queued less than
    RECONCILE_REQUEUE_AFTER_SECONDS ago: a backlog on the webhooks queue) is not queued again on every
    pass; a duplicate message would find the row claimed or done anyway, but a backlog of them is work."""
    now = timezone.now()
    cutoff = now - timedelta(seconds=overdue_seconds)
    requeue = now - timedelta(seconds=float(settings.RECONCILE_REQUEUE_AFTER_SECONDS))
    ids = list(
        WebhookDelivery.objects.filter(state=WebhookDelivery.State.PENDING, next_attempt_at__lt=cutoff)
        .filter(Q(claimed_until__isnull=True) | Q(claimed_until__lt=now))
        .filter(Q(queued_at__isnull=True) | Q(queued_at__lt=requeue))
        .order_by("next_attempt_at")
        .values_list("pk", flat=True)[:limit]
    )
    queue_deliveries_later(ids)
    return len(ids)
