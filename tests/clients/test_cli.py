"""The `memgov` command line against the running service: each command with the token of the role it is
for, JSON and human output, the exit status per kind of error, and click's shell completion."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from governance.models import Memory, Role, Status
from governance.services.memory import MemoryInput, memory_record
from governance.services.principal import grant_add
from memgov.cli import main


def _script() -> str:
    return shutil.which("memgov") or str(Path(sys.executable).with_name("memgov"))


@pytest.fixture
def cli(service):
    """Run `memgov ARGS` with click's runner as the holder of `token` (MEMGOV_URL/MEMGOV_TOKEN set)."""
    runner = CliRunner()

    def run(token: str | None, *args: str, stdin: str | None = None):
        env = {"MEMGOV_URL": service, "MEMGOV_TOKEN": token}
        return runner.invoke(main, list(args), env=env, input=stdin, catch_exceptions=False)

    return run


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


def test_an_agent_remembers_recalls_and_gets_its_packet(cli, agent_token, rule_in_force):
    written = cli(agent_token, "remember", "acme/slides", "Number every slide", "--kind", "convention")
    assert written.exit_code == 0, written.output
    assert "candidate in acme/slides (not in force until a person confirms it)" in written.output

    as_json = cli(
        agent_token, "--json", "remember", "acme/slides", "Use the Inter font", "--kind", "preference"
    )
    memory = json.loads(as_json.output)
    assert memory["status"] == "candidate" and Memory.objects.get(pk=memory["id"]).status == Status.CANDIDATE

    recalled = cli(agent_token, "--json", "recall", "acme/slides", "export format", "-k", "3")
    assert rule_in_force.pk in [h["memory_id"] for h in json.loads(recalled.output)]
    human = cli(agent_token, "recall", "acme/slides", "export format")
    assert f"{rule_in_force.pk:>6}  active" in human.output and "Export the slides as PPTX" in human.output

    packet = cli(
        agent_token, "context", "acme/slides", "export the deck", "--budget", "500", "--task", "Deck 42"
    )
    assert packet.exit_code == 0
    assert "## Constraints in force\n- Export the slides as PPTX [export_format r1]" in packet.output
    turn_id = int(packet.output.rsplit("-- turn ", 1)[1].split(":")[0])
    assert "/500 tokens" in packet.output

    shown = cli(agent_token, "--json", "turns", "show", str(turn_id))
    assert (
        json.loads(shown.output)["id"] == turn_id
        and "Export the slides as PPTX" in json.loads(shown.output)["text"]
    )

    turns = [
        {"role": "user", "content": "Render deck 42", "ref": "u1"},
        {"role": "assistant", "content": "Rendered 12 slides", "ref": "a1"},
    ]
    recorded = cli(agent_token, "--json", "turns", "record", "acme/slides", "s1", stdin=json.dumps(turns))
    assert [m["kind"] for m in json.loads(recorded.output)] == ["episodic", "episodic"]
    again = cli(agent_token, "turns", "record", "acme/slides", "s1", stdin=json.dumps(turns))
    assert again.output.strip() == "(nothing new)"


def test_a_reviewer_lists_confirms_and_rejects(cli, agent_token, reviewer, token_for):
    reviewer_token = token_for(reviewer)
    proposals = [
        json.loads(
            cli(
                agent_token,
                "--json",
                "remember",
                "acme/slides",
                text,
                "--kind",
                "convention",
                "--status",
                "proposed",
            ).output
        )["id"]
        for text in ("Export the slides as PDF", "Never use slide transitions")
    ]
    queue = json.loads(cli(reviewer_token, "--json", "review", "list", "--scope", "acme/slides").output)
    assert {item["memory"]["id"] for item in queue} == set(proposals)
    human = cli(reviewer_token, "review", "list")
    assert "Export the slides as PDF" in human.output

    confirmed = cli(reviewer_token, "review", "confirm", str(proposals[0]), "--reason", "the user said so")
    assert confirmed.output.strip() == f"memory {proposals[0]}: active"
    rejected = cli(reviewer_token, "--json", "review", "reject", str(proposals[1]), "--reason", "not wanted")
    assert json.loads(rejected.output)["status"] == "rejected"
    assert Memory.objects.get(pk=proposals[1]).status == Status.REJECTED
    # The agent may not decide: 403, exit 4, and nothing changed.
    refused = cli(agent_token, "review", "confirm", str(proposals[1]))
    assert refused.exit_code == 4 and "permission_denied" in refused.output


def test_exit_status_says_what_went_wrong(
    cli, service, agent, agent_token, sibling_scope, other_workspace_scope, rule_in_force
):
    grant_add(principal=agent, scope=sibling_scope, role=Role.VIEWER, actor=None)
    cases = [
        ((None, "recall", "acme/slides", "x"), 2, "No API token"),
        (("mem_unknown", "recall", "acme/slides", "x"), 3, "unknown or revoked"),
        ((agent_token, "remember", "acme/payments", "x"), 4, "permission_denied"),
        ((agent_token, "recall", "globex/slides", "x"), 5, "not_found"),
        ((agent_token, "turns", "show", "999999"), 5, "not_found"),
        ((agent_token, "remember", "acme/slides", ""), 7, "invalid_input"),
        ((agent_token, "context", "acme/slides", "x", "--budget", "3"), 8, "pinned_over_budget"),
        ((agent_token, "review", "confirm", "abc"), 2, "is not a valid integer"),
    ]
    for args, code, said in cases:
        result = cli(*args)
        assert (result.exit_code, said in result.output) == (code, True), (
            args,
            result.exit_code,
            result.output,
        )
    as_json = cli(agent_token, "--json", "recall", "globex/slides", "x")
    assert json.loads(as_json.output.strip().splitlines()[-1])["error"] == "not_found"
    unreachable = CliRunner().invoke(
        main,
        ["recall", "acme/slides", "x"],
        env={"MEMGOV_URL": "http://127.0.0.1:9", "MEMGOV_TOKEN": agent_token},
    )
    assert unreachable.exit_code == 10 and "connection_error" in unreachable.output


def test_an_owner_exports_imports_and_manages_tokens(
    cli, owner, agent, token_for, project_scope, rule_in_force, tmp_path
):
    owner_token = token_for(owner)
    out = tmp_path / "slides.jsonl"
    exported = cli(owner_token, "export", "acme/slides", "-o", str(out))
    assert exported.exit_code == 0 and "lines written to" in exported.output
    assert out.read_text().startswith('{"type":"header"') and "Export the slides as PPTX" in out.read_text()
    to_stdout = cli(owner_token, "export", str(project_scope.pk))
    assert to_stdout.output.startswith('{"type":"header"') and "Export the slides as PPTX" in to_stdout.output

    preview = cli(owner_token, "--json", "import", "acme", str(out), "--name", "slides-copy", "--preview")
    assert json.loads(preview.output)["preview"] is True
    assert not Memory.objects.filter(scope__path="acme/slides-copy").exists()
    done = cli(owner_token, "import", "acme", str(out), "--name", "slides-copy")
    assert done.output.startswith("import into acme/slides-copy: ") and "memories 1" in done.output
    assert Memory.objects.get(scope__path="acme/slides-copy").text == "Export the slides as PPTX"

    issued = cli(owner_token, "--json", "tokens", "issue", agent.name, "acme/slides", "--role", "agent")
    new_token = json.loads(issued.output)["token"]
    assert cli(new_token, "recall", "acme/slides", "export").exit_code == 0
    listed = json.loads(cli(owner_token, "--json", "tokens", "list", "--active").output)
    mine = [t for t in listed if new_token[4:12] == t["prefix"]]  # the prefix follows "mem_"
    assert len(mine) == 1 and mine[0]["principal"] == agent.name
    assert (
        cli(owner_token, "tokens", "revoke", str(mine[0]["id"]), "--reason", "test over").output.strip()
        == f"token {mine[0]['id']} revoked"
    )
    assert cli(new_token, "recall", "acme/slides", "export").exit_code == 3
    # An agent's token may not export: exit 4 or 5, never the file.
    agent_export = cli(token_for(agent), "export", "acme/slides")
    assert agent_export.exit_code in (4, 5) and "Export the slides" not in agent_export.output


def test_the_installed_command_and_its_shell_completion(service, agent_token, project_scope):
    env = {**os.environ, "MEMGOV_URL": service, "MEMGOV_TOKEN": agent_token}
    done = subprocess.run(
        [_script(), "--json", "recall", "acme/slides", "x"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0 and json.loads(done.stdout) == []
    refused = subprocess.run(
        [_script(), "recall", "globex/x", "x"], env=env, capture_output=True, text=True, timeout=60
    )
    assert refused.returncode == 5 and "not_found" in refused.stderr and refused.stdout == ""

    def complete(words: str, cword: int) -> list[str]:
        answer = subprocess.run(
            [_script()],
            env={**env, "_MEMGOV_COMPLETE": "bash_complete", "COMP_WORDS": words, "COMP_CWORD": str(cword)},
            capture_output=True,
            text=True,
            timeout=60,
        )
        return [line.split(",", 1)[1] for line in answer.stdout.splitlines()]

    assert complete("memgov rev", 1) == ["review"]
    assert set(complete("memgov review ", 2)) == {"list", "confirm", "reject"}
    assert complete("memgov recall acme/", 2) == ["acme/slides"]  # asked from the service, with the token
    script = subprocess.run(
        [_script()],
        env={**env, "_MEMGOV_COMPLETE": "bash_source"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert "_memgov_completion" in script.stdout
