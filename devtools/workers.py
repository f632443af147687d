"""The one place that says which Celery workers a stack runs and how its queues are split between them
(docs/operations.md, "Queues"): one worker on every queue but `embedding` and `webhooks`, one on `embedding`
alone with a single thread (the embedder serialises its calls and uses every core itself; a process of its
own keeps embedding off the other queues), and one on `webhooks` alone (its threads wait on other people's
servers, each delivery at most WEBHOOK_DEADLINE_SECONDS: a slow receiver never holds a worker that carries
forgets). `runstack` and the topology (devtools/topology.py) both start these."""

from __future__ import annotations

COMMON = ["--loglevel=INFO", "--without-mingle", "--without-gossip", "--pool=threads"]
# The settings' queues (memoryui/settings/base.py) for a process that has no settings loaded (the topology).
DEFAULT_QUEUES = ("celery", "propagation", "embedding", "reinforcement", "maintenance", "webhooks")
DEFAULT_EMBEDDING_QUEUE = "embedding"
DEFAULT_WEBHOOK_QUEUE = "webhooks"
# Webhook threads mostly wait on receivers, so several.
WEBHOOK_CONCURRENCY = 4


def worker_queues() -> dict[str, list[str]]:
    """Which queues each of the three worker processes consumes."""
    from django.conf import settings

    if settings.configured:
        names = [q.name for q in settings.CELERY_TASK_QUEUES]
        embedding, webhooks = settings.EMBEDDING_QUEUE, settings.WEBHOOK_QUEUE
    else:
        names, embedding, webhooks = list(DEFAULT_QUEUES), DEFAULT_EMBEDDING_QUEUE, DEFAULT_WEBHOOK_QUEUE
    return {
        "worker": [q for q in names if q not in (embedding, webhooks)],
        "embedder": [embedding],
        "webhooks": [webhooks],
    }


def worker_commands(py: str, *, concurrency: int, hostnames: dict[str, str]) -> dict[str, list[str]]:
    """The command lines of the three workers; `hostnames` names each (`worker`, `embedder`, `webhooks`; the
    last defaults to the worker's with a `webhooks-` prefix) for Celery."""
    queues = worker_queues()
    webhooks_host = hostnames.get("webhooks") or f"webhooks-{hostnames['worker']}"
    return {
        "worker": [
            py,
            "-m",
            "celery",
            "-A",
            "memoryui",
            "worker",
            f"--concurrency={concurrency}",
            f"--queues={','.join(queues['worker'])}",
            f"--hostname={hostnames['worker']}",
            *COMMON,
        ],
        "embedder": [
            py,
            "-m",
            "celery",
            "-A",
            "memoryui",
            "worker",
            "--concurrency=1",
            f"--queues={','.join(queues['embedder'])}",
            f"--hostname={hostnames['embedder']}",
            *COMMON,
        ],
        "webhooks": [
            py,
            "-m",
            "celery",
            "-A",
            "memoryui",
            "worker",
            f"--concurrency={WEBHOOK_CONCURRENCY}",
            f"--queues={','.join(queues['webhooks'])}",
            f"--hostname={webhooks_host}",
            *COMMON,
        ],
    }
