"""The scripts in examples/ run against the running service, as docs/integrations.md says."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from governance.services.memory import MemoryInput, memory_record

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.fixture
def rule_in_force(project_scope):
    return memory_record(
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


def run_example(name: str, url: str, token: str) -> str:
    env = {**os.environ, "MEMGOV_URL": url, "MEMGOV_TOKEN": token, "MEMGOV_SCOPE": "acme/slides"}
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / name), "acme/slides"],
        env=env,
        capture_output=True,
        text=True,
        timeout=90,
    )
    print(f"$ python examples/{name}\n{done.stdout}")  # shown with pytest -rP
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def test_client_quickstart_example(service, agent_token, rule_in_force):
    out = run_example("client_quickstart.py", service, agent_token)
    assert "scope: acme/slides/deck-42 (opened)" in out
    assert "episodic/active" in out and "candidate" in out
    assert "[constraints] active    Export the slides as PPTX" in out
    assert "## Constraints in force" in out


def test_mcp_stdio_session_example(service, agent_token, rule_in_force):
    out = run_example("mcp_stdio_session.py", service, agent_token)
    assert "tools: " in out and "get_context" in out and "propose_correction" in out
    assert "Export the slides as PPTX" in out
    assert ": candidate (in force: False)" in out
    assert "tool error:" in out and "404 not_found" in out


def test_langgraph_agent_example(service, agent_token, rule_in_force):
    out = run_example("langgraph_agent.py", service, agent_token)
    assert "Export the slides as PPTX" in out and "not in force until a person confirms it" in out
    assert "stored answer: candidate (in force: False)" in out


def test_cli_session_example(service, agent_token, reviewer, token_for, rule_in_force):
    env = {
        **os.environ,
        "MEMGOV_URL": service,
        "MEMGOV_TOKEN": agent_token,
        "MEMGOV_REVIEWER_TOKEN": token_for(reviewer),
        "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
    }
    done = subprocess.run(
        ["bash", str(EXAMPLES / "cli_session.sh"), "acme/slides"],
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    out = done.stdout + done.stderr
    print(f"$ examples/cli_session.sh\n{done.stdout}")  # shown with pytest -rP
    assert done.returncode == 0, out[-3000:]
    assert "active    convention" in out and "Export the slides as PPTX" in out
    assert "- Export the slides as PPTX [export_format r1]" in out
    assert "episodic/active  Render deck 42 please" in out
    assert "403 permission_denied" in out and "(exit 4)" in out  # the agent may not confirm
    assert ": active\n(exit 0)" in out  # the reviewer may
    assert "404 not_found" in out and "(exit 5)" in out
