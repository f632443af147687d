"""A contradiction a person linked by hand counts in the packet: when the query recalls only one of the
two memories, the other (readable, active) is brought in beside it, the winner is said and why, and the
person's reason is quoted. A contradiction the system inferred does not reach out like that."""

from __future__ import annotations

from governance.recall import assemble_context
from governance.services.memory import memory_forget
from governance.services.relation import relation_add, relation_link


def _relations(result):
    return result["packet"]["relations"]


def _ask(agent, scope):
    # structured_vector: the vector path only (no keyword or recent path), so the unembedded memory is
    # never recalled by the query itself.
    return assemble_context(
        principal=agent,
        scope=scope,
        query="when is the launch date?",
        budget_tokens=800,
        strategy="structured_vector",
    )


def test_a_hand_made_contradiction_brings_the_other_memory_into_the_packet(
    project_scope, agent, curator, remember
):
    recalled = remember(project_scope, "The launch date is March 3", confidence=0.6)
    other = remember(project_scope, "Marketing moved the release to the tenth", embed=False, confidence=0.9)
    assert _relations(_ask(agent, project_scope)) == []
    relation_link(
        source_id=other.pk,
        target_id=recalled.pk,
        kind="contradicts",
        reason="the press release says the tenth",
        actor=curator,
    )
    [block] = _relations(_ask(agent, project_scope))
    assert (block["memory_id"], block["contradicts"]) == (other.pk, recalled.pk)  # higher confidence wins
    assert block["text"] == "Marketing moved the release to the tenth"
    assert "a person linked them: the press release says the tenth" in block["reason"]


def test_a_contradiction_inferred_by_the_system_does_not_bring_the_other_end(project_scope, agent, remember):
    recalled = remember(project_scope, "The launch date is March 3")
    other = remember(project_scope, "Marketing moved the release to the tenth", embed=False)
    relation_add(source_id=other.pk, target_id=recalled.pk, kind="contradicts", reason="inferred", actor=None)
    assert _relations(_ask(agent, project_scope)) == []


def test_a_forgotten_or_unreadable_other_end_is_not_brought_in(
    project_scope, sibling_scope, agent, curator, owner, remember
):
    recalled = remember(project_scope, "The launch date is March 3")
    other = remember(project_scope, "Marketing moved the release to the tenth", embed=False)
    relation_link(
        source_id=other.pk, target_id=recalled.pk, kind="contradicts", reason="press release", actor=curator
    )
    memory_forget(memory_id=other.pk, actor=None, reason="user asked", hard=False)
    assert _relations(_ask(agent, project_scope)) == []
    # A sibling scope's memory is linked (an owner reads both) but a read in the project never shows it.
    sibling = remember(sibling_scope, "Payments launch on the first", embed=False)
    relation_link(
        source_id=sibling.pk, target_id=recalled.pk, kind="contradicts", reason="other team", actor=owner
    )
    assert _relations(_ask(agent, project_scope)) == []
