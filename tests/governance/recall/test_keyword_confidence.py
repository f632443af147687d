"""A cold memory comes back as evidence when its match is strong for this question: when most of a
question's words appear nowhere ("Which activities did Caroline share with their partner?"), every keyword
hit scores low, yet the turns holding the person and "partner" are the keyword path's best, and count as
strong as the vector path's near-best matches do (rank.COLD_LEXICAL_SHARE)."""

from __future__ import annotations

from types import SimpleNamespace

from governance.recall import rank as rank_mod
from governance.recall.state import Hit
from governance.recall.strategies import LEXICAL, VECTOR


def _cold(memory_id, *, semantic=None, lexical=None, fused=0.5):
    paths = {p for p, v in ((VECTOR, semantic), (LEXICAL, lexical)) if v is not None}
    return Hit(
        id=memory_id,
        row={"kind": "episodic"},
        semantic=semantic,
        lexical=lexical,
        fused=fused,
        activation=0.0,
        paths=paths,
    )


def test_a_cold_match_nearly_as_good_as_the_best_keyword_match_is_strong():
    assert rank_mod.strong_match(_cold(1, lexical=0.2), None, 0.2)
    assert rank_mod.strong_match(_cold(2, lexical=0.19), None, 0.2)
    assert not rank_mod.strong_match(_cold(3, lexical=0.05), None, 0.2)


def test_an_old_history_s_best_keyword_match_goes_with_the_strong_matches():
    small_talk = [_cold(i, semantic=0.83 - i / 1000, fused=0.9) for i in range(1, 4)]
    said = _cold(10, lexical=0.2, fused=0.7)
    one_word = _cold(11, lexical=0.03, fused=0.6)
    state = SimpleNamespace(k=4, dropped=[])
    kept = rank_mod._gate_cold(state, [*small_talk, said, one_word])
    assert [h.id for h in kept] == [1, 2, 3, 10]
    assert "cold, kept for a strong match" in said.flags
    assert [h.id for h, _, _ in state.dropped] == [11]


def _scored(hit, score, activation=0.0):
    hit.score, hit.activation = score, activation
    return hit


def test_in_an_all_cold_history_a_weak_match_with_the_better_score_goes_first():
    # Two near-best vector matches (small talk: strong by the margin, low fused score) and a turn both
    # keyword lists ranked high, holding too few of the query's words to pass the strong-match test.
    small_talk = [_scored(_cold(i, semantic=0.85, fused=0.3), 0.25) for i in (1, 2)]
    said = _scored(_cold(10, lexical=0.3, fused=0.9), 0.7)
    best = _scored(_cold(11, semantic=0.86, lexical=1.0, fused=1.0), 0.9)
    one_word = _scored(_cold(12, lexical=0.03, fused=0.1), 0.05)
    state = SimpleNamespace(k=3, dropped=[])
    kept = rank_mod._gate_cold(state, sorted([*small_talk, said, best, one_word], key=lambda h: -h.score))
    assert [h.id for h in kept] == [11, 10, 1, 2]  # a strong match past k stays ...
    assert [h.id for h, _, _ in state.dropped] == [12]  # ... a weak one past k does not


def test_a_weak_cold_match_still_goes_after_every_hot_memory():
    hot = _scored(_cold(1, semantic=0.70, fused=0.2), 0.2, activation=1.0)
    said = _scored(_cold(10, lexical=0.3, fused=0.9), 0.7)
    strong = _scored(_cold(11, semantic=0.86, lexical=1.0, fused=1.0), 0.9)
    state = SimpleNamespace(k=5, dropped=[])
    kept = rank_mod._gate_cold(state, [strong, said, hot])
    assert [h.id for h in kept] == [11, 1, 10]


def test_a_cold_vector_match_within_four_hundredths_of_the_best_is_strong():
    # The older value of a knowledge update ("I've lost 5 pounds" weeks before "I've lost 10 pounds") sat
    # 0.031 below the best match and was held back behind the later session's hot turns at 0.03.
    assert rank_mod.strong_match(_cold(1, semantic=0.855), 0.8866)
    assert rank_mod.strong_match(_cold(2, semantic=0.8866 - 0.039), 0.8866)
    assert not rank_mod.strong_match(_cold(3, semantic=0.8866 - 0.045), 0.8866)
