"""The TypeScript client (clients/typescript) against the running service: this test starts the live
server (real PostgreSQL, Redis and the Celery worker), issues the tokens, and runs the package's own
tests (`npm test`: tsc, then Node's test runner) and its examples; it fails when they fail. Skipped
only where Node is not installed; `make test` installs the npm dependencies (`npm ci`) where it is."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from governance.services.memory import MemoryInput, memory_record

PACKAGE = Path(__file__).resolve().parents[2] / "clients" / "typescript"
NPM = shutil.which("npm")

pytestmark = pytest.mark.skipif(
    NPM is None or not (PACKAGE / "node_modules").is_dir(),
    reason="Node/npm or clients/typescript/node_modules missing (make test runs npm ci)",
)


def _npm(args: list[str], env: dict[str, str], timeout: int = 400) -> str:
    done = subprocess.run([NPM, *args], cwd=PACKAGE, env=env, capture_output=True, text=True, timeout=timeout)
    print(f"$ npm {' '.join(args)}\n{done.stdout[-6000:]}")  # shown with pytest -rP
    assert done.returncode == 0, (done.stdout[-4000:], done.stderr[-3000:])
    return done.stdout


@pytest.fixture
def ts_env(service, agent, reviewer, owner, other_workspace_scope, token_for) -> dict[str, str]:
    return {
        **os.environ,
        "MEMGOV_URL": service,
        "MEMGOV_TOKEN": token_for(agent),
        "MEMGOV_REVIEWER_TOKEN": token_for(reviewer),
        "MEMGOV_OWNER_TOKEN": token_for(owner),
        "MEMGOV_SCOPE": "acme/slides",
    }


def test_the_typescript_client_tests_pass_against_the_service(ts_env):
    out = _npm(["test"], ts_env)
    assert "# fail 0" in out and "# pass " in out


def test_the_typescript_examples_run_against_the_service(ts_env, project_scope):
    memory_record(
        item=MemoryInput(
            scope=project_scope,
            kind="convention",
            key="export_format",
            status="active",
            text="Export the slides as PPTX",
            source_kind="reviewer",
        ),
        actor=None,
    )
    _npm(["run", "build"], ts_env)
    ai = _npm(["run", "--silent", "example:ai", "--", "acme/slides"], ts_env)
    assert "tool call: getContext" in ai and "- Export the slides as PPTX [export_format r1]" in ai
    assert '"status":"candidate","inForce":false' in ai and "tool result: recordTurns" in ai
    assert "assistant: Exported deck 42 as PPTX" in ai
    graph = _npm(["run", "--silent", "example:langgraph", "--", "acme/slides"], ts_env)
    assert "Export the slides as PPTX (active)" in graph
    assert "saved: Deck 42 was exported as PPTX -> candidate (in force: false)" in graph
