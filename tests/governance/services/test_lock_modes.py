"""The row locks a governance action takes on a memory must not block another transaction's foreign-key
check. Django's foreign keys are DEFERRABLE INITIALLY DEFERRED: a transaction that wrote a row pointing at
a scope or a memory takes FOR KEY SHARE on it at COMMIT, while it still holds the audit chain's advisory
lock. A FOR UPDATE on that scope or memory (held by an action now waiting for the audit lock) was a
deadlock, broken by PostgreSQL every few seconds under `bench_load --users 8` (docs/scaling.md)."""

from __future__ import annotations

import psycopg
import pytest
from django.db import connection, transaction

from governance.services import memory as memory_services
from governance.services.memory import MemoryInput, memory_record


def other_connection():
    return psycopg.connect(**connection.get_connection_params(), autocommit=True)


@pytest.mark.django_db(transaction=True)
def test_locking_a_memory_for_an_action_leaves_its_scope_and_row_open_to_foreign_key_checks(
    project_scope, agent
):
    memory = memory_record(
        item=MemoryInput(
            scope=project_scope, kind="episodic", text="Standup moved to 9:30", source_kind="user"
        ),
        actor=agent,
    )
    with other_connection() as other, transaction.atomic():
        locked = memory_services.lock_memory(memory.pk)  # what confirm, reject, retire and forget start with
        assert locked.scope_id == project_scope.pk
        # NOWAIT: a conflicting lock raises at once instead of waiting (which was the deadlock's first half).
        other.execute("SELECT 1 FROM governance_scope WHERE id = %s FOR KEY SHARE NOWAIT", [project_scope.pk])
        other.execute("SELECT 1 FROM governance_memory WHERE id = %s FOR KEY SHARE NOWAIT", [memory.pk])
        # The row itself is still held against a second action on it.
        with pytest.raises(psycopg.errors.LockNotAvailable):
            other.execute(
                "SELECT 1 FROM governance_memory WHERE id = %s FOR NO KEY UPDATE NOWAIT", [memory.pk]
            )


@pytest.mark.django_db(transaction=True)
def test_reinforcing_memories_leaves_their_scope_open_to_foreign_key_checks(project_scope, agent):
    from governance.models import ReinforcementEvent

    memory = memory_record(
        item=MemoryInput(scope=project_scope, kind="episodic", text="Lunch is at noon", source_kind="user"),
        actor=agent,
    )
    with other_connection() as other:
        with transaction.atomic():
            memory_services.memory_reinforce(
                memory_ids=[memory.pk], weight=0.3, actor=None, reason=ReinforcementEvent.Reason.RECALL
            )
            other.execute(
                "SELECT 1 FROM governance_scope WHERE id = %s FOR KEY SHARE NOWAIT", [project_scope.pk]
            )
            other.execute("SELECT 1 FROM governance_memory WHERE id = %s FOR KEY SHARE NOWAIT", [memory.pk])
