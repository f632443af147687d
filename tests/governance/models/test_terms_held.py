"""lexical.terms_held answers "which of these query terms does the text hold?" by scanning for those terms'
words instead of tokenizing the whole text (rank.later_word_first asks it of long turns on every request).
It must give exactly what tokenizing gives, on any text."""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

from governance.models import lexical

# Words that stem, stopwords that look like stems ("does" -> "doe"), CJK runs and mixed tokens, odd spacing
# and full-width letters (NFKC), so the scan meets every edge the tokenizer has.
PIECES = st.sampled_from(
    [
        "test",
        "tests",
        "testing",
        "tested",
        "Tested",
        "does",
        "doe",
        "the",
        "runs",
        "running",
        "run",
        "photography",
        "move",
        "moved",
        "Moving",
        "moves",
        "agree",
        "agreed",
        "agrees",
        "movee",
        "houses",
        "workshop",
        "workshops",
        "ｗｏｒｋｓｈｏｐ",
        "UCLA",
        "ucla's",
        "CS",
        "3-day",
        "中文",
        "我们",
        "abc中文",
        "调用api",
        "_",
        "-",
        " ",
        "  ",
        "\n",
        ",",
        "!",
        "é",
        "café",
        "naïve",
    ]
)
TEXTS = st.lists(PIECES, max_size=30).map(lambda parts: "".join(parts))
QUERIES = st.lists(PIECES, max_size=8).map(lambda parts: " ".join(parts))


@settings(max_examples=400, deadline=None)
@given(text=TEXTS, query=QUERIES)
@example(text="she does", query="doe")
@example(text="abc中文def 调用api", query="abc def api")
def test_the_terms_held_are_those_tokenizing_finds(text, query):
    wanted = set(lexical.terms(query))
    assert lexical.terms_held(text, wanted) == wanted & set(lexical.terms(text))


def test_a_word_is_held_in_any_form_that_stems_to_it():
    wanted = set(lexical.terms("attend the photography workshops"))
    held = lexical.terms_held("I attended a 3-day PHOTOGRAPHY workshop today", wanted)
    assert held == {"attend", "photography", "workshop"}
    assert lexical.terms_held("photographyworkshop", wanted) == set()  # one token, neither word
    assert lexical.terms_held("she does", {"doe"}) == set()  # a stopword is no term, whatever it stems to
    assert lexical.terms_held("abc中文 def", {"abc", "def"}) == {"def"}  # "abc中文" is one token


def test_terms_at_says_where_each_form_of_a_term_stands_in_order():
    text = "Moving day: we moved the volleyball nets; the league moves on. Volleyballs!"
    found = lexical.terms_at(text, {"mov", "volleyball", "leagu"})
    assert [term for _, term in found] == ["mov", "mov", "volleyball", "leagu", "mov", "volleyball"]
    offsets = [offset for offset, _ in found]
    assert offsets == sorted(offsets) and text.lower()[offsets[2] :].startswith("volleyball")
    assert lexical.terms_at("the removal of moves", {"mov"}) == [(15, "mov")]  # a word, not a part of one
