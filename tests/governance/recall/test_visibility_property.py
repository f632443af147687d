"""Property: over random scope trees and grants, no packet and no recall ever holds a memory outside the
caller's visible scopes (the request scope and its ancestors, when a grant covers the request scope)."""

from __future__ import annotations

import pytest
from django.db import connection, transaction
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from governance.errors import NotFound, PermissionDenied
from governance.models import Memory, Role, Scope
from governance.permissions import Action, can
from governance.propagation import embed_memories
from governance.recall import STRATEGIES, assemble_context, recall_memories, vector_index
from governance.services.memory import MemoryInput, memory_record
from governance.services.principal import grant_add, principal_ensure
from governance.services.scope import scope_ensure
from tests.governance.recall.helpers import packet_ids

# A tree as a list of parent indexes: node i's parent is an earlier node (or the workspace root).
trees = st.lists(st.integers(min_value=0, max_value=20), min_size=2, max_size=8)
ROLES = [Role.AGENT, Role.VIEWER, Role.REVIEWER, Role.CURATOR, Role.OWNER]


def _build(workspace: str, parents: list[int]) -> list[Scope]:
    nodes = [scope_ensure(path=workspace, actor=None)]
    for i, p in enumerate(parents):
        parent = nodes[p % len(nodes)]
        nodes.append(scope_ensure(path=f"{parent.path}/n{i}", actor=None))
    return nodes


@pytest.mark.django_db
@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    tree_a=trees,
    tree_b=trees,
    grants=st.lists(st.tuples(st.integers(0, 40), st.sampled_from(ROLES)), min_size=0, max_size=3),
    ask_at=st.integers(0, 40),
    strategy=st.sampled_from(list(STRATEGIES)),
    kinds=st.sampled_from(["episodic", "convention", "preference"]),
    indexed=st.booleans(),
)
def test_no_packet_or_recall_holds_a_memory_outside_visible_scopes(
    tree_a, tree_b, grants, ask_at, strategy, kinds, indexed
):
    with transaction.atomic():
        scopes = _build("wa", tree_a) + _build("wb", tree_b)
        memories = []
        for i, scope in enumerate(scopes):
            key = f"k{i}" if kinds == "convention" else None
            memories.append(
                memory_record(
                    item=MemoryInput(
                        scope=scope,
                        kind=kinds,
                        key=key,
                        status="active",
                        source_kind="user",
                        text=f"The launch plan for the project is confidential, note {i}",
                    ),
                    actor=None,
                )
            )
        # One real embedding, copied to the rest (their texts differ only in a number): keeps 25 examples fast.
        embed_memories([memories[0].pk])
        first = Memory.objects.get(pk=memories[0].pk)
        Memory.objects.filter(pk__in=[m.pk for m in memories[1:]]).update(
            embedding=first.embedding, embedding_model=first.embedding_model
        )
        if indexed:  # every scope with a memory gets its own HNSW index: the indexed search path
            with connection.cursor() as cursor:
                cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")  # CREATE INDEX refuses pending triggers
            vector_index.maintain(min_rows=1, max_indexes=100)
        # A person: the drawn roles go above the agent role, which an agent may not hold (issue 20).
        caller = principal_ensure(name="prop-agent", kind="user", actor=None)
        for index, role in grants:
            grant_add(principal=caller, scope=scopes[index % len(scopes)], role=role, actor=None)
        target = scopes[ask_at % len(scopes)]
        visible = set(
            Memory.objects.filter(scope__in=Scope.objects.ancestors_of(target)).values_list("pk", flat=True)
        )
        allowed = can(caller, target, Action.ASK_CONTEXT)
        try:
            packet = assemble_context(
                principal=caller,
                scope=target,
                query="launch plan",
                budget_tokens=2000,
                strategy=strategy,
                store=False,
            )
            recalled = recall_memories(
                principal=caller, scope=target, query="launch plan", k=50, strategy=strategy
            )
        except (NotFound, PermissionDenied):
            assert not allowed
        else:
            assert allowed
            seen = packet_ids(packet) | {r["memory_id"] for r in recalled}
            assert seen <= visible, seen - visible
            if strategy != "recent":
                assert seen, "something visible is found, so the test can fail"
        transaction.set_rollback(True)
