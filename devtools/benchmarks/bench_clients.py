"""What the client layers add to a /context request: the same request sent N times through raw httpx,
memgov.Client, memgov.AsyncClient, memgov-mcp over stdio and over streamable HTTP with the caller's
bearer token (the SDK's ClientSession), the TypeScript MemgovClient (Node, when clients/typescript is
built) and the `memgov` command line (a process per request), p50/p95 in ms.

    export MEMGOV_URL=http://127.0.0.1:8000 MEMGOV_TOKEN=... MEMGOV_SCOPE=acme/slides
    python devtools/benchmarks/bench_clients.py [N]

Run it against a running service (`make run`, or `manage.py runserver`). The query is the same every
time, so the service's query-vector cache answers the embedding after the first request: what differs
between the rows is the layer, not the model."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import statistics
import sys
import time
from pathlib import Path

import httpx

import memgov

N = int(sys.argv[1]) if len(sys.argv) > 1 else 30
URL, TOKEN, SCOPE = (
    os.environ["MEMGOV_URL"],
    os.environ["MEMGOV_TOKEN"],
    os.environ.get("MEMGOV_SCOPE", "acme/slides"),
)
BODY = {"scope": SCOPE, "query": "how do we export the deck?", "budget_tokens": 600}


def summary(name: str, ms: list[float]) -> str:
    ms = sorted(ms)
    return f"{name:<28} p50 {statistics.median(ms):7.1f}   p95 {ms[int(0.95 * (len(ms) - 1))]:7.1f}   (n={len(ms)})"


def timed(fn, n: int) -> list[float]:
    fn()  # warm-up
    out = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t) * 1000)
    return out


def raw() -> list[float]:
    with httpx.Client(headers={"Authorization": f"Token {TOKEN}"}) as http:
        return timed(lambda: http.post(f"{URL.rstrip('/')}/api/v1/context", json=BODY).raise_for_status(), N)


def sync_client() -> list[float]:
    with memgov.Client(URL, TOKEN) as client:
        return timed(lambda: client.context(**BODY), N)


async def async_client() -> list[float]:
    async with memgov.AsyncClient(URL, TOKEN) as client:
        await client.context(**BODY)
        out = []
        for _ in range(N):
            t = time.perf_counter()
            await client.context(**BODY)
            out.append((time.perf_counter() - t) * 1000)
        return out


async def mcp_stdio() -> tuple[list[float], float]:
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    command = shutil.which("memgov-mcp") or str(Path(sys.executable).with_name("memgov-mcp"))
    params = StdioServerParameters(command=command, env={"MEMGOV_URL": URL, "MEMGOV_TOKEN": TOKEN})
    started = time.perf_counter()
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            startup = (time.perf_counter() - started) * 1000
            args = {"query": BODY["query"], "scope": SCOPE, "budget_tokens": BODY["budget_tokens"]}
            first = await session.call_tool("get_context", args)
            assert not first.is_error, first.content
            out = []
            for _ in range(N):
                t = time.perf_counter()
                result = await session.call_tool("get_context", args)
                out.append((time.perf_counter() - t) * 1000)
            assert json.loads(result.content[0].text)["budget"]["limit"] == BODY["budget_tokens"]
            return out, startup


def _free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


async def mcp_http() -> list[float]:
    """memgov-mcp --http, each request carrying the caller's token (the server has none of its own)."""
    import socket
    import subprocess

    import httpx2
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    command = shutil.which("memgov-mcp") or str(Path(sys.executable).with_name("memgov-mcp"))
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if k != "MEMGOV_TOKEN"}
    server = subprocess.Popen(
        [command, "--http", str(port)], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        for _ in range(600):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                await asyncio.sleep(0.1)
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}, timeout=60) as http:
            async with streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http) as (
                read,
                write,
            ):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    args = {"query": BODY["query"], "scope": SCOPE, "budget_tokens": BODY["budget_tokens"]}
                    assert not (await session.call_tool("get_context", args)).is_error
                    out = []
                    for _ in range(N):
                        t = time.perf_counter()
                        await session.call_tool("get_context", args)
                        out.append((time.perf_counter() - t) * 1000)
                    return out
    finally:
        server.terminate()
        server.wait(timeout=10)


def typescript() -> list[float] | None:
    """The TypeScript client in Node, when clients/typescript is built (npm run build)."""
    import subprocess

    script = Path(__file__).resolve().parents[2] / "clients" / "typescript" / "scripts" / "bench-context.mjs"
    node = shutil.which("node")
    if node is None or not (script.parents[1] / "dist" / "src" / "index.js").exists():
        return None
    done = subprocess.run(
        [node, str(script), str(N)],
        env={**os.environ, "MEMGOV_SCOPE": SCOPE},
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    return json.loads(done.stdout)


def cli(n: int) -> list[float]:
    """`memgov --json context ...`: one process per request, start-up included (what a script pays)."""
    import subprocess

    command = shutil.which("memgov") or str(Path(sys.executable).with_name("memgov"))
    args = [command, "--json", "context", SCOPE, BODY["query"], "--budget", str(BODY["budget_tokens"])]
    return timed(lambda: subprocess.run(args, capture_output=True, check=True, timeout=60), n)


def main() -> None:
    print(
        f"/context through each layer, {N} requests each, against {URL} (load average {os.getloadavg()[0]:.1f})"
    )
    print(summary("raw httpx", raw()))
    print(summary("memgov.Client", sync_client()))
    print(summary("memgov.AsyncClient", asyncio.run(async_client())))
    mcp_ms, startup = asyncio.run(mcp_stdio())
    print(summary("memgov-mcp stdio get_context", mcp_ms))
    print(summary("memgov-mcp HTTP get_context", asyncio.run(mcp_http())))
    ts = typescript()
    print(
        summary("TypeScript MemgovClient", ts)
        if ts
        else "TypeScript MemgovClient     (not built: npm run build)"
    )
    print(summary("memgov CLI (a process each)", cli(max(5, N // 3))))
    print(f"memgov-mcp start-up + initialize: {startup:.0f} ms (load average {os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    main()
