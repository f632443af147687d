"""The keyword lists and the fused pool go deeper than the vector list (recall.KEYWORD_CANDIDATES,
FUSED_POOL, CANDIDATES_PER_PATH): they are read while the query is embedded, and an answer spread over
many turns has evidence past the 30th keyword match."""

from __future__ import annotations

from governance.recall import packet, recall
from governance.recall.strategies import LEXICAL


def test_the_keyword_list_and_the_pool_hold_more_than_the_vector_list(project_scope, agent, remember):
    assert recall.KEYWORD_CANDIDATES > recall.CANDIDATES_PER_PATH
    matches = recall.KEYWORD_CANDIDATES + 5
    for i in range(matches):
        remember(project_scope, f"kayak trip number {i} down river {i}", kind="episodic", embed=False)
    state = packet._state(agent, project_scope, "kayak trip", "full", None, 10)
    packet._run_stages(state)
    assert len(state.lists[LEXICAL]) == recall.KEYWORD_CANDIDATES
    assert len(state.hits) == recall.FUSED_POOL
