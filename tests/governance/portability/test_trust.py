"""Import is a trust boundary: the file's statuses come in only as an owner of the target imports them;
no person of this installation is named as the confirmer of what they never confirmed; four-eyes scopes
still need two reviewers; grants come only when asked for, matched or mapped by name."""

from __future__ import annotations

import json

import pytest
from django.core.management import call_command

from governance.errors import NotFound, PermissionDenied
from governance.models import Grant, Memory, Role, Status, Tier
from governance.services.memory import MemoryInput, memory_record
from governance.services.portability import scope_import
from governance.services.principal import user_ensure
from tests.governance.portability.helpers import as_lines, export_records


@pytest.fixture
def records(project_scope, owner, reviewer, agent):
    memory_record(
        item=MemoryInput(
            scope=project_scope,
            kind="convention",
            key="export_format",
            status="active",
            tier=Tier.LONG,
            text="Export decks as PPTX.",
            source_kind="user",
        ),
        actor=owner,
    )
    memory_record(
        item=MemoryInput(
            scope=project_scope,
            kind="preference",
            key="tone",
            status="active",
            text="Keep the tone formal.",
            source_kind="user",
        ),
        actor=agent,
    )  # a proposal
    return export_records("acme/slides")


def test_a_rule_in_force_comes_in_confirmed_by_the_importing_owner_with_the_source_confirmation_as_provenance(
    records, outsider, other_workspace_scope
):
    user_ensure(username="olivia-here", actor=None)
    scope_import(
        lines=as_lines(records),
        into="globex/slides/acme",
        actor=outsider,
        principal_map={"olivia": "olivia-here"},
    )
    rule = Memory.objects.get(scope__path="globex/slides/acme", key="export_format")
    assert rule.status == Status.ACTIVE
    assert rule.confirmed_by == outsider and rule.confirmed_at is not None
    assert rule.meta["imported"]["confirmed_by"] == "olivia"
    assert rule.created_by.name == "olivia-here"  # who wrote it: mapped, as provenance


def test_an_agents_proposal_stays_a_proposal_and_an_unconfirmed_active_rule_stays_unconfirmed(
    records, outsider, other_workspace_scope
):
    tone = next(r for r in records if r.get("key") == "tone")
    assert tone["status"] == Status.PROPOSED
    rule = next(r for r in records if r.get("key") == "export_format")
    rule["confirmed_at"], rule["confirmed_by"] = None, None  # active in the file, but nobody confirmed it
    scope_import(lines=as_lines(records), into="globex/slides/acme", actor=outsider)
    assert Memory.objects.get(scope__path="globex/slides/acme", key="tone").status == Status.PROPOSED
    imported = Memory.objects.get(scope__path="globex/slides/acme", key="export_format")
    assert imported.confirmed_at is None and imported.confirmed_by is None


def test_in_a_four_eyes_target_a_long_term_commitment_waits_for_two_reviewers(
    records, outsider, other_workspace_scope
):
    other_workspace_scope.require_two_reviewers = True
    other_workspace_scope.save(update_fields=["require_two_reviewers"])
    result = scope_import(lines=as_lines(records), into="globex/slides", actor=outsider)
    rule = Memory.objects.get(scope__path="globex/slides", key="export_format")
    assert rule.status == Status.PROPOSED and rule.confirmed_at is None
    assert rule.meta["requested_status"] == Status.ACTIVE and result.proposed_for_four_eyes == 1


def test_an_agent_or_a_reviewer_cannot_import_and_a_stranger_cannot_see_the_target(
    records, agent, reviewer, outsider
):
    for who in (agent, reviewer):
        with pytest.raises(PermissionDenied):
            scope_import(lines=as_lines(records), into="acme/slides/copy", actor=who)
    with pytest.raises(NotFound):
        scope_import(lines=as_lines(records), into="acme/slides/copy", actor=outsider)
    with pytest.raises(PermissionDenied):  # a new workspace: the site's administrator only (the command line)
        scope_import(lines=as_lines(records), into="brand-new", actor=outsider)
    assert not Memory.objects.filter(scope__path__startswith="acme/slides/copy").exists()


def test_grants_are_dropped_unless_kept_and_then_matched_by_name(records, outsider, other_workspace_scope):
    dropped = scope_import(lines=as_lines(records), into="globex/slides/a", actor=outsider)
    assert dropped.grants_dropped == dropped.counts["grants"] >= 2
    assert not Grant.objects.filter(scope__path="globex/slides/a").exists()
    scope_import(lines=as_lines(records), into="globex/slides/b", actor=outsider, grants="keep")
    kept = set(Grant.objects.filter(scope__path="globex/slides/b").values_list("principal__name", "role"))
    # Matched by name only to members of the target workspace (issue 20): acme's rami and slides-agent
    # are not globex's, so their grants go to placeholders of globex, never to acme's principals.
    home = other_workspace_scope.workspace_id
    assert (f"import:{home}:rami", Role.REVIEWER) in kept and (
        f"import:{home}:slides-agent",
        Role.AGENT,
    ) in kept
    assert all(g.granted_by == outsider for g in Grant.objects.filter(scope__path="globex/slides/b"))


def test_the_commands_round_trip_a_scope_with_progress_lines(records, tmp_path, capsys):
    path = tmp_path / "slides.jsonl"
    call_command("export_scope", "acme/slides", "-o", str(path))
    err = capsys.readouterr().err
    assert "records/s" in err and "ETA" in err and "exported acme/slides" in err
    lines = path.read_text().splitlines()
    assert json.loads(lines[0])["type"] == "header" and json.loads(lines[-1])["type"] == "end"
    call_command("import_scope", str(path), "--into", "copied/slides", "--no-embed")
    out = capsys.readouterr().out
    assert "records/s" in out and "ETA" in out and "imported into copied/slides" in out
    assert Memory.objects.filter(scope__path="copied/slides").count() == 2


def test_the_import_command_names_the_bad_line_and_imports_nothing(records, tmp_path):
    from django.core.management.base import CommandError

    records[3] = {"type": "memory"}
    path = tmp_path / "bad.jsonl"
    path.write_text("".join(as_lines(records)))
    with pytest.raises(CommandError, match=r"line 4: .*nothing was imported"):
        call_command("import_scope", str(path), "--into", "copied/slides", "--no-embed")
    assert not Memory.objects.filter(scope__path__startswith="copied").exists()


def test_a_file_cannot_bring_four_eyes_approvals_or_end_requests(
    records, outsider, other_workspace_scope, reviewer
):
    tone = next(r for r in records if r.get("key") == "tone")
    tone["meta"] = {
        **tone["meta"],
        "approvals": [reviewer.pk, outsider.pk],
        "approvals_needed": 2,
        "end_requests": {"retire": [outsider.pk]},
    }
    scope_import(lines=as_lines(records), into="globex/slides/acme", actor=outsider)
    meta = Memory.objects.get(scope__path="globex/slides/acme", key="tone").meta
    assert not {"approvals", "approvals_needed", "end_requests"} & set(meta)


def test_a_line_nested_too_deep_to_decode_is_a_bad_line_not_a_crash(records, outsider, other_workspace_scope):
    from governance.services.portability import ImportFileError

    lines = as_lines(records)
    lines.insert(2, "[" * 100_000 + "]" * 100_000 + "\n")
    with pytest.raises(ImportFileError) as caught:
        scope_import(lines=lines, into="globex/slides/acme", actor=outsider)
    assert caught.value.line == 3
    assert not Memory.objects.filter(scope__path__startswith="globex/slides/acme").exists()


def test_the_import_command_acting_as_someone_asks_the_same_rule(records, tmp_path, reviewer, owner):
    from django.core.management.base import CommandError

    from governance.permissions import DENIAL_REASONS, Action

    path = tmp_path / "slides.jsonl"
    path.write_text("".join(as_lines(records)))
    with pytest.raises(CommandError, match=DENIAL_REASONS[Action.IMPORT]):
        call_command(
            "import_scope", str(path), "--into", "acme/slides/copy", "--as", reviewer.name, "--no-embed"
        )
    assert not Memory.objects.filter(scope__path="acme/slides/copy").exists()
    call_command("import_scope", str(path), "--into", "acme/slides/copy", "--as", owner.name, "--no-embed")
    assert Memory.objects.get(scope__path="acme/slides/copy", key="export_format").confirmed_by == owner
