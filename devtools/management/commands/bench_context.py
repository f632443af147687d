"""Benchmark the read path at scale: `python manage.py bench_context [--sizes 10k,100k,1m]`.

Runs in its own database (default `memory_bench`, created on the same server and migrated), so the
synthetic rows never touch real data; `--drop` removes it afterwards. Prints load and index build times,
p50/p95 of /api/v1/context and /api/v1/recall end to end (query embedding with the real model included)
and per stage, the exact and HNSW paths side by side, and HNSW recall@10 against exact search under the
scope filter. `--tuning` also prints recall@k of each search path on tests/data/retrieval."""

from __future__ import annotations

import json
import os
import time

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError
from django.db import connection, connections
from rest_framework.test import APIClient

from devtools.benchmarks import bench_context as bench
from devtools.benchmarks import bench_context_data as data
from governance.models import Role
from governance.runtime import freeze_startup_objects
from governance.services.principal import grant_add, principal_ensure, token_issue
from governance.services.scope import scope_ensure

SIZES = {"10k": 10_000, "100k": 100_000, "1m": 1_000_000}
# The split's parts as printed: the whole request in Django, its service call, the embedding, the stages
# after it, then what the request adds around the service (over a socket: evaluate_retrieval --http).
SPLIT_ORDER = (
    "app",
    "service",
    "embed",
    "embed_wait",
    "after_embedding",
    "vector",
    "fuse",
    "adjudicate",
    "rank",
    "pack",
    "store",
    "access",
    "middleware_auth_rendering",
)


def use_database(name: str) -> None:
    """Point the default connection at `name` (created when missing), then migrate it."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name])
        if cursor.fetchone() is None:
            cursor.execute(f'CREATE DATABASE "{name}"')
    connection.close()
    connections["default"].settings_dict["NAME"] = name
    call_command("migrate", verbosity=0)


class Command(BaseCommand):
    help = "Benchmark context/recall latency and HNSW recall on synthetic workspaces (own database)."

    def add_arguments(self, parser):
        parser.add_argument("--sizes", default="10k,100k", help=f"comma list of {', '.join(SIZES)}")
        parser.add_argument("--queries", type=int, default=40)
        parser.add_argument("--database", default="memory_bench")
        parser.add_argument("--drop", action="store_true", help="drop the bench database at the end")
        parser.add_argument("--tuning", action="store_true", help="also measure the retrieval tuning set")
        parser.add_argument("--seed", type=int, default=11)
        parser.add_argument(
            "--model-vectors",
            action="store_true",
            help="search with the model's own query vectors (outside the synthetic clusters) "
            "instead of vectors from the data's distribution; the model runs either way",
        )
        parser.add_argument(
            "--cold",
            action="store_true",
            help="do not load the table and indexes into shared buffers first (pg_prewarm)",
        )
        parser.add_argument(
            "--warmup",
            type=int,
            default=20,
            help="unmeasured queries first, from other task scopes (a server in use has its "
            "indexes in shared buffers; a freshly started one reads them from disk)",
        )
        parser.add_argument(
            "--load-only", action="store_true", help="load the sizes and stop (measure later)"
        )

    def handle(self, *args, **o):
        try:
            sizes = [SIZES[s.strip().lower()] for s in o["sizes"].split(",") if s.strip()]
        except KeyError as exc:
            raise CommandError(f"--sizes takes {', '.join(SIZES)}") from exc
        main_db = connection.settings_dict["NAME"]
        use_database(o["database"])
        self.log(
            f"database {o['database']} on the server of {main_db!r}; load average "
            f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
        )
        scopes = data.ensure_scopes()
        client = self.agent_client()
        report = {}
        for size in sorted(sizes):
            have = data.count(scopes)
            timings = {}
            if have < size:
                self.log(f"loading {size - have} rows to reach {size} …")
                timings = data.load(scopes, have, size, self.log)
            elif have == size:
                timings = data.ensure_indexes(self.log)
            else:  # measuring here would report a bigger workspace under this size's name
                self.log(
                    f"skipped {size:,}: database {o['database']} already holds {have:,} bench memories "
                    f"(use --drop, or another --database, to measure {size:,})"
                )
                continue
            if o["load_only"]:
                report[size] = {"load": timings}
                continue
            if not o["cold"]:
                timings.update(data.prewarm(self.log))
            report[size] = self.measure(
                size,
                client,
                o["queries"],
                o["seed"],
                timings,
                o["warmup"],
                data_vectors=not o["model_vectors"],
            )
        if o["tuning"]:
            self.tuning()
        self.stdout.write(json.dumps({str(k): v for k, v in report.items()}, indent=1))
        try:
            from memoryui.celery import app

            app.control.purge()  # reinforcement messages of bench turns: nobody should apply them elsewhere
        except Exception:  # noqa: BLE001 - a broker that is down has nothing to purge
            pass
        if o["drop"]:
            connection.close()
            connections["default"].settings_dict["NAME"] = main_db
            with connection.cursor() as cursor:
                cursor.execute(f'DROP DATABASE "{o["database"]}"')
            self.log(f"dropped {o['database']}")

    def log(self, text: str) -> None:
        self.stdout.write(text)
        self.stdout.flush()

    def agent_client(self) -> APIClient:
        root = scope_ensure(path="bench", actor=None)
        agent = principal_ensure(name="bench-agent", kind="agent", actor=None)
        grant_add(principal=agent, scope=root, role=Role.AGENT, actor=None)
        client = APIClient(SERVER_NAME="localhost")  # an allowed host: the request runs the full stack
        # Bound like the tokens agents are given (create_token): the bound is part of every permission query.
        raw = token_issue(principal=agent, scope=root, max_role=Role.AGENT, actor=None)
        client.credentials(HTTP_AUTHORIZATION=f"Token {raw}")
        return client

    def measure(
        self,
        size: int,
        client: APIClient,
        n: int,
        seed: int,
        timings: dict,
        warmup: int,
        *,
        data_vectors: bool,
    ) -> dict:
        scopes = bench.task_scopes(n, seed)
        # Warm up (model, tokenizer, shared buffers) with other queries in other scopes than those measured.
        bench.e2e(
            client,
            bench.task_scopes(max(warmup, 1), seed + 1000),
            "auto",
            seed + 1000,
            data_vectors=data_vectors,
        )
        freeze_startup_objects()  # as the web server's wsgi.py does after start-up
        out: dict = {"load": timings}
        self.log(
            f"\n== {size:,} memories, {n} queries, each in a random task scope (after {warmup} warm-up "
            f"queries elsewhere; load average {os.getloadavg()[0]:.1f}; searched vectors: "
            f"{'from the data' if data_vectors else 'the model'}'s) =="
        )
        for mode in ("auto", "exact"):
            t = time.perf_counter()
            res = bench.e2e(client, scopes, mode, seed, data_vectors=data_vectors)
            out[mode] = {
                "context_ms": {
                    "p50": round(bench.pct(res["context"], 50), 1),
                    "p95": round(bench.pct(res["context"], 95), 1),
                },
                "recall_ms": {
                    "p50": round(bench.pct(res["recall"], 50), 1),
                    "p95": round(bench.pct(res["recall"], 95), 1),
                },
                "stages_ms": {
                    name: {"p50": round(bench.pct(v, 50), 2), "p95": round(bench.pct(v, 95), 2)}
                    for name, v in res["stages"].items()
                },
            }
            self.log(
                f"  {mode:5} /context {bench.summary(res['context'])} ms   /recall {bench.summary(res['recall'])} ms"
                f"   ({time.perf_counter() - t:.0f} s)"
            )
            self.log(
                "        stages: "
                + ", ".join(
                    f"{name} {bench.pct(v, 50):.1f}/{bench.pct(v, 95):.1f}"
                    for name, v in res["stages"].items()
                )
            )
            for what in ("recall", "context"):
                split = res[f"{what}_split"]
                out[mode][f"{what}_split_ms"] = {
                    name: {"p50": round(bench.pct(v, 50), 2), "p95": round(bench.pct(v, 95), 2)}
                    for name, v in split.items()
                }
                self.log(
                    f"        /{what} split (Server-Timing): "
                    + ", ".join(
                        f"{name} {bench.pct(split[name], 50):.1f}/{bench.pct(split[name], 95):.1f}"
                        for name in SPLIT_ORDER
                        if name in split
                    )
                )
            # The request waits for the embedding only after its SQL stages (embed_wait), not for all of it.
            no_embed = [
                c - e for c, e in zip(res["context"], res["stages"].get("embed_wait", [0] * n), strict=False)
            ]
            out[mode]["context_without_embed_wait_ms"] = {
                "p50": round(bench.pct(no_embed, 50), 1),
                "p95": round(bench.pct(no_embed, 95), 1),
            }
        rec = bench.hnsw_recall(scopes, seed)
        out["recall_at_10_vs_exact"] = {
            "served_path": round(bench.mean(rec["auto"]), 4),
            "served_path_min": round(min(rec["auto"]), 2),
            "hnsw_index_alone": round(bench.mean(rec["hnsw_alone"]), 4) if rec["hnsw_alone"] else None,
            "hnsw_index_alone_min": round(min(rec["hnsw_alone"]), 2) if rec["hnsw_alone"] else None,
            "hnsw_index_alone_any_query": round(bench.mean(rec["hnsw_alone_any"]), 4)
            if rec["hnsw_alone_any"]
            else None,
        }
        out["vector_query_ms"] = {
            m: {
                "p50": round(bench.pct(rec[f"ms_{m}"], 50), 2),
                "p95": round(bench.pct(rec[f"ms_{m}"], 95), 2),
            }
            for m in ("exact", "auto")
        }
        out["eligible_rows_mean"] = round(bench.mean(rec["eligible"]))
        out["scopes_per_query"] = {
            "hnsw": round(bench.mean(rec["hnsw_scopes"]), 2),
            "exact": round(bench.mean(rec["exact_scopes"]), 2),
        }
        r = out["recall_at_10_vs_exact"]
        self.log(
            f"  recall@10 vs exact under the scope filter: served path {r['served_path']} (min "
            f"{r['served_path_min']}); each scope's HNSW index alone {r['hnsw_index_alone']} (min "
            f"{r['hnsw_index_alone_min']}, {len(rec['hnsw_alone'])} index searches, queries near each scope's "
            f"own data; {r['hnsw_index_alone_any_query']} with the served query, which may be far from "
            "everything in that scope)"
        )
        self.log(
            f"  per query: ≈ {out['eligible_rows_mean']:,} eligible rows; scopes searched by HNSW "
            f"{out['scopes_per_query']['hnsw']}, exactly {out['scopes_per_query']['exact']}; "
            f"ef_search {settings.RECALL_HNSW_EF_SEARCH}, index threshold {settings.RECALL_VECTOR_INDEX_MIN_ROWS} rows"
        )
        self.log(
            "  vector query alone: "
            + ", ".join(f"{m} {bench.summary(rec[f'ms_{m}'])} ms" for m in ("exact", "auto"))
        )
        return out

    def tuning(self) -> None:
        from devtools.evaluation import tuning
        from governance.models import Scope

        d = tuning.load()
        if not Scope.objects.filter(path="tuning/proj").exists():
            ids = tuning.seed(d, project="tuning/proj", sibling="tuning/other", other="tuning2/proj")
            json.dump(ids, open("/tmp/.bench_tuning_ids.json", "w"))  # noqa: SIM115
        ids = json.load(open("/tmp/.bench_tuning_ids.json"))  # noqa: SIM115
        report = tuning.evaluate(d, ids, principal=None, scope=Scope.objects.get(path="tuning/proj"))
        self.log("\n== retrieval tuning set (tests/data/retrieval), recall@k ==")
        for path, values in report["recall"].items():
            self.log(f"  {path:8} " + "  ".join(f"{k} {v:.3f}" for k, v in values.items()))
        self.log(f"  decoys returned: {report['decoys_returned']}")
