"""`/api/v1/recall` through HTTP for `evaluate_retrieval --http`: what an agent waits for, against what the
recall itself costs in the process.

A web process is started the way the service runs (gunicorn with memoryui.gunicorn_conf's gthread
worker, DEBUG off, this process's settings and database), the questions are asked through one kept-alive
connection with an agent's token, and each response's `Server-Timing` header (governance.runtime.tracing)
splits the time: the query embedding, each recall stage, `access` (the caller's roles), `service` (the
recall call), `app` (everything inside Django: middleware, token authentication, parsing, the view, JSON
rendering). What the client measured beyond `app` is the web server and the socket."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

from governance.evaluation.retrieval import AFTER_EMBEDDING
from governance.models import Role
from governance.runtime import tracing

START_TIMEOUT = 180.0  # the worker loads the embedding model before it answers


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def web_server(threads: int = 4) -> Iterator[str]:
    """A gunicorn web process of this deployment on a free local port; yields its base URL."""
    import httpx

    port = _free_port()
    env = {
        **os.environ,
        "DEBUG": "false",  # as served: no query log kept per request
        "DJANGO_SETTINGS_MODULE": os.environ.get("DJANGO_SETTINGS_MODULE", "memoryui.settings.dev"),
        "WEB_KEEPALIVE": "30",
    }
    argv = [
        sys.executable,
        "-m",
        "gunicorn",
        "--config=python:memoryui.gunicorn_conf",
        f"--bind=127.0.0.1:{port}",
        "--workers=1",
        f"--threads={threads}",
    ]
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            if proc.poll() is not None:
                raise RuntimeError(
                    f"the web process exited ({proc.returncode}): {proc.stderr.read()[-2000:]}"
                )
            try:
                if httpx.get(f"{url}/healthz", timeout=5).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"the web process did not answer {url}/healthz in {START_TIMEOUT:.0f} s")
            time.sleep(0.5)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def agent_token(root: str) -> tuple[str, int]:
    """A token of an evaluation agent with the agent role on scope `root` (created when missing), bound
    like the tokens agents are given. Returns (raw token, token id) so the caller can revoke it."""
    from governance.models import ApiToken
    from governance.services.principal import grant_add, principal_ensure, token_issue
    from governance.services.scope import scope_ensure

    scope = scope_ensure(path=root, actor=None)
    agent = principal_ensure(name="evaluation-http", kind="agent", actor=None)
    if not agent.grants.filter(scope=scope, role=Role.AGENT).exists():
        grant_add(principal=agent, scope=scope, role=Role.AGENT, actor=None)
    raw = token_issue(principal=agent, scope=scope, max_role=Role.AGENT, actor=None)
    return raw, ApiToken.objects.filter(principal=agent).order_by("-id").values_list("id", flat=True)[0]


def ask_all(url: str, token: str, questions: list, *, k: int = 10, strategy: str = "full", warmup: int = 5):
    """Each question asked once through one kept-alive connection. Returns (per question {"http": ms,
    **Server-Timing}, per question the ranked source refs, connections opened). The first `warmup`
    questions are asked once before, unmeasured, under another asker's cache key (their text is changed),
    so the model and the connection are warm and no measured question is a cache hit."""
    import httpx

    opened: list[int] = []
    timings, ranked = [], []
    with httpx.Client(
        base_url=url,
        headers={"Authorization": f"Token {token}"},
        timeout=60,
        limits=httpx.Limits(max_connections=1, max_keepalive_connections=1),
    ) as client:
        for q in questions[:warmup]:
            body = {"scope": q.scope, "query": f"{q.question} (warm-up)", "k": k, "strategy": strategy}
            if q.asked_at is not None:
                body["as_of"] = q.asked_at.isoformat()
            client.post("/api/v1/recall", json=body).raise_for_status()
        for q in questions:
            body = {"scope": q.scope, "query": q.question, "k": k, "strategy": strategy}
            if q.asked_at is not None:
                body["as_of"] = q.asked_at.isoformat()
            started = time.perf_counter()
            response = client.post("/api/v1/recall", json=body)
            ms = (time.perf_counter() - started) * 1000
            response.raise_for_status()
            split = tracing.parse_server_timing(response.headers.get("server-timing", ""))
            split["http"] = ms
            split["after_embedding"] = sum(split.get(s, 0.0) for s in AFTER_EMBEDDING)
            split["web_server_and_socket"] = ms - split.get("app", 0.0)
            split["middleware_auth_rendering"] = (
                split.get("app", 0.0) - split.get("service", 0.0) - split.get("access", 0.0)
            )
            split["http_minus_embed"] = ms - split.get("embed", 0.0)
            timings.append(split)
            ranked.append([(r.get("source") or {}).get("ref") or "" for r in response.json()["results"]])
            if response.headers.get("connection", "").lower() == "close":
                opened.append(1)
    return timings, ranked, 1 + len(opened)
