"""The ablations of docs/evaluation.md ("The replay suite") as sets of stages: every strategy runs the same pipeline with some stages
switched off, so a comparison between them measures the stages and nothing else.

- recent: only the latest turns of the session (no memory at all: the baseline).
- vector: dense similarity only, ranked by similarity.
- structured_vector: + keyed facts in force and adjudication (supersedes → negative context).
- temporal: + activation and recency in the ranking.
- full: + lexical (full-text/trigram) search fused with the vector list, a keyword search of what each
  person the query names said, a vector search of the time the query names, recent turns, relations.
"""

from __future__ import annotations

VECTOR = "vector"
LEXICAL = "lexical"
RECENT = "recent"
KEYED = "keyed"
ADJUDICATE = "adjudicate"
ACTIVATION = "activation"
RELATIONS = "relations"
# The keyword search again within what a person the query names said (recall.speaker_stage).
SPEAKERS = "speakers"
# The vector search again within the time the question names (recall.named_time_stage), and the keyword
# search too (recall.named_time_words_stage: a list of its own, run with the same stage).
NAMED_TIME = "named_time"
NAMED_TIME_WORDS = "named_time_words"

STRATEGIES: dict[str, frozenset[str]] = {
    "recent": frozenset({RECENT}),
    "vector": frozenset({VECTOR}),
    "structured_vector": frozenset({VECTOR, KEYED, ADJUDICATE}),
    "temporal": frozenset({VECTOR, KEYED, ADJUDICATE, ACTIVATION, RECENT}),
    "full": frozenset(
        {VECTOR, LEXICAL, SPEAKERS, NAMED_TIME, RECENT, KEYED, ADJUDICATE, ACTIVATION, RELATIONS}
    ),
}
DEFAULT_STRATEGY = "full"
