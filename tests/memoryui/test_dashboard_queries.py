"""The dashboard's list selectors run a fixed number of queries, whatever the number of rows (no N+1)."""

import pytest

from governance.models import Turn
from governance.selectors import dashboard as sel
from governance.services.memory import memory_reinforce, memory_supersede
from governance.services.relation import relation_add
from tests.memoryui.conftest import remember


@pytest.fixture
def many(project_scope, history):
    made = [remember(project_scope, f"fact {i}", kind="semantic", key=f"k{i}") for i in range(30)]
    for m in made[:10]:
        memory_supersede(
            memory_id=m.pk, text=m.text + " (v2)", reason="update", source_kind="user", actor=None
        )
    for a, b in zip(made[10:20], made[20:30], strict=True):
        relation_add(source_id=a.pk, target_id=b.pk, kind="supports", actor=None)
    memory_reinforce(memory_ids=[m.pk for m in made[10:]], weight=0.5, reason="recall", actor=None)
    for i in range(30):
        Turn.objects.create(scope=project_scope, session=f"s{i % 3}", query=f"q{i}", packet={})
    return made


def test_memory_page_queries_do_not_grow_with_rows(
    reviewer, project_scope, many, django_assert_max_num_queries
):
    with django_assert_max_num_queries(6):
        page = sel.memory_list_page(reviewer, None, sel.MemoryFilters(q="fact"))
        rows = [(m.scope.path, m.activation) for m in page.object_list]
    assert len(rows) == 40  # 30 facts and 10 second revisions


@pytest.mark.parametrize("sort", ["written", "last_used", "activation", "confidence", "key", "status"])
def test_every_sort_of_the_memory_list_is_constant_query(reviewer, many, sort, django_assert_max_num_queries):
    """Scope set, count, and at most two page queries (a page spanning the end of the rows with a value)."""
    for direction in ("asc", "desc"):
        with django_assert_max_num_queries(5):
            page = sel.memory_list_page(
                reviewer, None, sel.MemoryFilters(sort=sort, dir=direction), per_page=7
            )
            rows = [(m.scope.path, m.activation) for m in page.object_list]
        assert len(rows) == 7


def test_scope_tree_and_overview_are_constant_query(reviewer, many, django_assert_max_num_queries):
    with django_assert_max_num_queries(4):
        tree = sel.scope_tree(reviewer)
    assert tree[0]["memories"] > 30
    with django_assert_max_num_queries(6):
        counts = sel.overview_counts(reviewer, None)
    assert counts["total"] > 30
    with django_assert_max_num_queries(4):
        sel.activation_histogram(reviewer, None)


def test_timeline_and_graph_selectors_are_constant_query(reviewer, many, django_assert_max_num_queries):
    with django_assert_max_num_queries(7):
        top = sel.top_memories(reviewer, None, limit=20)
        ids = [m.pk for m in top]
        events = sel.reinforcements_for(ids)
        sel.status_changes(ids)
    assert len(top) == 20 and events
    with django_assert_max_num_queries(7):
        graph = sel.relation_graph(reviewer, None)
    assert len(graph["edges"]) >= 20


def test_turn_audit_grant_and_propagation_lists_are_constant_query(
    reviewer, owner, many, django_assert_max_num_queries
):
    with django_assert_max_num_queries(6):
        turns = sel.turn_page(reviewer, None)
        [(t.scope.path, t.principal) for t in turns.object_list]
    with django_assert_max_num_queries(6):
        audit = sel.audit_page(owner, None, sel.AuditFilters())
        list(audit.object_list)
    assert audit.older and len(audit.object_list) == 50
    with django_assert_max_num_queries(5):
        grants = sel.grants_in(owner, None)
        [(g.scope.path, g.principal.name, g.granted_by) for g in grants]
    with django_assert_max_num_queries(6):
        rows = sel.recent_propagation(owner, None)
        [[d.state for d in r["deliveries"]] for r in rows]
    assert len(rows) == 25


def test_memory_page_selectors_are_constant_query(reviewer, many, django_assert_max_num_queries):
    memory = many[0]
    with django_assert_max_num_queries(12):
        m = sel.memory_for_reader(reviewer, memory.pk)
        sel.revision_chain(m)
        [r["other"] for r in sel.memory_relations(reviewer, m)]
        sel.memory_audit(m)
        sel.memory_reinforcements(m)
        sel.MyRoles.of(reviewer)
