"""The one place that says which Celery workers a stack runs and how its queues are split between them
(docs/operations.md, "Queues"): one worker on every queue but `embedding`, one on `embedding` alone with a
single thread (the embedder serialises its calls and uses every core itself; a process of its own keeps
embedding off the other queues). `runstack` and the topology (devtools/topology.py) both start these."""

from __future__ import annotations

COMMON = ["--loglevel=INFO", "--without-mingle", "--without-gossip", "--pool=threads"]
# The settings' queues (memoryui/settings/base.py) for a process that has no settings loaded (the topology).
DEFAULT_QUEUES = ("celery", "propagation", "embedding", "reinforcement", "maintenance")
DEFAULT_EMBEDDING_QUEUE = "embedding"


def worker_queues() -> dict[str, list[str]]:
    """Which queues each of the two worker processes consumes."""
    from django.conf import settings

    if settings.configured:
        names = [q.name for q in settings.CELERY_TASK_QUEUES]
        embedding = settings.EMBEDDING_QUEUE
    else:
        names, embedding = list(DEFAULT_QUEUES), DEFAULT_EMBEDDING_QUEUE
    return {"worker": [q for q in names if q != embedding], "embedder": [embedding]}


def worker_commands(py: str, *, concurrency: int, hostnames: dict[str, str]) -> dict[str, list[str]]:
    """The command lines of the two workers; `hostnames` names each (`worker`, `embedder`) for Celery."""
    queues = worker_queues()
    return {
        "worker": [py, "-m", "celery", "-A", "memoryui", "worker", f"--concurrency={concurrency}",
                   f"--queues={','.join(queues['worker'])}", f"--hostname={hostnames['worker']}", *COMMON],
        "embedder": [py, "-m", "celery", "-A", "memoryui", "worker", "--concurrency=1",
                     f"--queues={','.join(queues['embedder'])}", f"--hostname={hostnames['embedder']}", *COMMON],
    }
