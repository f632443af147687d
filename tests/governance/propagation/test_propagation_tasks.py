"""The propagation package's Celery tasks: names stable across the move, one queue per kind of work."""

from __future__ import annotations

from django.conf import settings

from memoryui.celery import app

OLD_NAMES = [
    "governance.tasks.propagate_outbox",
    "governance.tasks.embed_outbox",
    "governance.tasks.embed_memories",
    "governance.tasks.reconcile",
]


def test_propagation_tasks_keep_the_names_messages_of_an_older_version_carry():
    app.loader.import_default_modules()
    from governance.propagation import tasks

    for name in OLD_NAMES:
        assert name in app.tasks, name
        # The one registered under the old name is the package's task, not a leftover copy.
        assert app.tasks[name].run.__module__ == "governance.propagation.tasks", name
    # The old import path still gives the same tasks.
    from governance import tasks as old_module

    assert old_module.propagate_outbox.name == tasks.propagate_outbox.name
    assert old_module.dispatch_outbox is tasks.dispatch_outbox


def queue_of(name: str) -> str:
    route = app.amqp.router.route({}, name)
    return route["queue"].name


def test_each_kind_of_work_is_routed_to_its_own_queue():
    assert queue_of("governance.tasks.propagate_outbox") == settings.PROPAGATION_QUEUE == "propagation"
    assert queue_of("governance.tasks.reconcile") == "propagation"
    assert (
        queue_of("governance.tasks.embed_outbox")
        == queue_of("governance.tasks.embed_memories")
        == "embedding"
    )
    assert queue_of("governance.recall.tasks.reinforce_used_memories") == "reinforcement"
    for name in (
        "apply_retention",
        "prune_turns",
        "scan_promotions",
        "rebuild_stale_summaries",
        "maintain_vector_indexes",
    ):
        assert queue_of(f"governance.tasks.{name}") == "maintenance", name


def test_every_periodic_task_lands_on_a_declared_queue_and_none_with_embedding():
    declared = {q.name for q in settings.CELERY_TASK_QUEUES}
    for entry in settings.CELERY_BEAT_SCHEDULE.values():
        assert entry["task"] in app.tasks or entry["task"].startswith("governance.tasks.")
        queue = queue_of(entry["task"])
        assert queue in declared, entry["task"]
        assert queue != settings.EMBEDDING_QUEUE, entry["task"]


def test_a_forget_is_queued_on_the_propagation_queue_never_behind_embeddings():
    from governance.services.outbox import TOPIC_STORES

    # A forget reaches the embedding store too; only that delivery goes to the embedding queue.
    assert "embedding" in TOPIC_STORES["memory.forgotten"]
    assert queue_of("governance.tasks.propagate_outbox") != settings.EMBEDDING_QUEUE
