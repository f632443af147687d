"""`memgov`: the memory service from a shell, a script or a CI job (click). A thin layer over
`memgov.Client`: the same API and token, so it may do exactly what the token may do.

    export MEMGOV_URL=http://127.0.0.1:8000 MEMGOV_TOKEN=mem_...
    memgov context acme/slides "export the deck" --budget 600
    memgov --json recall acme/slides "export format"
    memgov review list --scope acme/slides && memgov review confirm 42

Output is for people by default and JSON with `--json` (on stdout; errors on stderr, as JSON too). The
exit status says what went wrong (EXIT_CODES), so a script can tell "not allowed" from "not there" from
"try again later". Shell completion comes from click: `eval "$(_MEMGOV_COMPLETE=bash_source memgov)"`
(zsh_source, fish_source for the others)."""

from __future__ import annotations

import json
import sys
from dataclasses import asdict, is_dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import click
from click.shell_completion import CompletionItem

from memgov import errors
from memgov.client import Client

# The exit status per kind of error. 2 is click's own for a wrong command line.
EXIT_CODES: dict[type[errors.MemgovError], int] = {
    errors.NotAuthenticated: 3,
    errors.Forbidden: 4,
    errors.NotFound: 5,
    errors.Conflict: 6,
    errors.InvalidInput: 7,
    errors.PinnedOverBudget: 8,
    errors.Throttled: 9,
    errors.ServiceUnavailable: 9,
    errors.APIConnectionError: 10,
    errors.ServerError: 11,
}
EXIT_ERROR = 1  # any other refusal of the service
EXIT_CONFIG = 2  # no URL or token: a usage error, like click's own


def exit_code_for(exc: errors.MemgovError) -> int:
    for cls in type(exc).__mro__:
        if cls in EXIT_CODES:
            return EXIT_CODES[cls]
    return EXIT_ERROR


class State:
    def __init__(self, url: str | None, token: str | None, as_json: bool):
        self.url, self.token, self.as_json = url, token, as_json
        self._client: Client | None = None

    @property
    def client(self) -> Client:
        if self._client is None:
            try:
                self._client = Client(self.url, self.token)
            except ValueError as exc:  # no URL or no token
                raise click.UsageError(str(exc)) from exc
        return self._client


def _jsonable(value: Any) -> Any:
    if is_dataclass(value) and hasattr(value, "raw"):
        return value.raw
    if is_dataclass(value):
        return asdict(value)
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, datetime):
        return value.isoformat()
    return value


def _emit(state: State, value: Any, human: str) -> None:
    if state.as_json:
        click.echo(json.dumps(_jsonable(value), indent=2, default=str, ensure_ascii=False))
    else:
        click.echo(human)


def _short(text: str, width: int = 72) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


class MemgovGroup(click.Group):
    """Runs a command and turns a refusal of the service into a message and its exit status."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except errors.MemgovError as exc:
            state = ctx.find_object(State)
            if state is not None and state.as_json:
                click.echo(
                    json.dumps(
                        {
                            "error": exc.code,
                            "status": exc.status,
                            "message": exc.message,
                            **({"fields": exc.fields} if getattr(exc, "fields", None) else {}),
                        }
                    ),
                    err=True,
                )
            else:
                status = f"{exc.status} " if exc.status else ""
                click.echo(f"memgov: {status}{exc.code}: {exc.message}", err=True)
            ctx.exit(exit_code_for(exc))


def complete_scope(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    """Scope paths the token can read, asked from the service (nothing when it cannot be reached)."""
    try:
        state = ctx.find_root().obj or State(
            ctx.find_root().params.get("url"), ctx.find_root().params.get("token"), False
        )
        return [CompletionItem(s.path) for s in state.client.scopes.list() if s.path.startswith(incomplete)]
    except (errors.MemgovError, click.UsageError, ValueError):
        return []


SCOPE = click.argument("scope", shell_complete=complete_scope)


@click.group(cls=MemgovGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--url", envvar="MEMGOV_URL", help="The service, e.g. http://127.0.0.1:8000 (MEMGOV_URL).")
@click.option(
    "--token",
    envvar="MEMGOV_TOKEN",
    help="An API token (MEMGOV_TOKEN; prefer the variable: a command line is visible to other users).",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text for people.")
@click.version_option(package_name="memgov")
@click.pass_context
def main(ctx: click.Context, url: str | None, token: str | None, as_json: bool) -> None:
    """The governed memory service: context packets, recall, writes, review, export and tokens."""
    ctx.obj = State(url, token, as_json)
    ctx.call_on_close(lambda: ctx.obj._client.close() if ctx.obj._client else None)


@main.command()
@SCOPE
@click.argument("query")
@click.option(
    "--budget",
    "budget_tokens",
    type=click.IntRange(1),
    default=1000,
    show_default=True,
    help="Token budget of the packet.",
)
@click.option("--task", "task_goal", help="The current task's goal (pinned in the packet).")
@click.option("--task-state", help="Where the task stands.")
@click.option("--session", help="The session: its recent turns and its overrides.")
@click.pass_obj
def context(
    state: State,
    scope: str,
    query: str,
    budget_tokens: int,
    task_goal: str | None,
    task_state: str | None,
    session: str | None,
) -> None:
    """The context packet for a turn: the text an agent may rely on (stored as a turn)."""
    task = {"goal": task_goal, **({"state": task_state} if task_state else {})} if task_goal else None
    ctx = state.client.context(
        scope=scope, query=query, budget_tokens=budget_tokens, task=task, session=session
    )
    _emit(state, ctx, f"{ctx.text}\n-- turn {ctx.turn_id}: {ctx.budget.used}/{ctx.budget.limit} tokens")


@main.command()
@SCOPE
@click.argument("query")
@click.option("-k", type=click.IntRange(1, 100), default=8, show_default=True, help="How many memories.")
@click.pass_obj
def recall(state: State, scope: str, query: str, k: int) -> None:
    """The k best memories for a query in a scope and its ancestors, with their status."""
    hits = state.client.recall(scope=scope, query=query, k=k)
    lines = [f"{h.memory_id:>6}  {h.status:<9} {h.kind:<10} {h.score:6.3f}  {_short(h.text)}" for h in hits]
    _emit(state, hits, "\n".join(lines) if lines else "(nothing)")


@main.command()
@SCOPE
@click.argument("text")
@click.option(
    "--kind",
    default="semantic",
    show_default=True,
    type=click.Choice(
        ["semantic", "preference", "convention", "method", "stage_fact", "external", "episodic", "working"]
    ),
)
@click.option("--key", help="A keyed fact's key, e.g. export_format.")
@click.option(
    "--status",
    type=click.Choice(["candidate", "proposed", "active"]),
    help="Default: what the token's role writes (an agent: a candidate).",
)
@click.option(
    "--source-kind",
    default="user",
    show_default=True,
    type=click.Choice(["user", "tool_result", "summary", "external_document", "model_inference", "reviewer"]),
)
@click.option("--source-ref", default="", help="Where it came from: a turn id, a URL.")
@click.pass_obj
def remember(
    state: State,
    scope: str,
    text: str,
    kind: str,
    key: str | None,
    status: str | None,
    source_kind: str,
    source_ref: str,
) -> None:
    """Write a memory (a candidate unless the token may confirm and --status active is given)."""
    memory = state.client.memories.create(
        scope=scope,
        text=text,
        kind=kind,
        key=key,
        status=status,
        source_kind=source_kind,
        source_ref=source_ref,
    )
    _emit(
        state,
        memory,
        f"memory {memory.id}: {memory.status} in {memory.scope}"
        f"{' (in force)' if memory.in_force else ' (not in force until a person confirms it)'}",
    )


@main.group()
def turns() -> None:
    """Stored turns (the packets agents were given) and recording an interaction."""


@turns.command("show")
@click.argument("turn_id", type=int)
@click.pass_obj
def turns_show(state: State, turn_id: int) -> None:
    """One stored turn: its query, its packet text and budget."""
    turn = state.client.turns.get(turn_id)
    _emit(
        state,
        turn,
        f"turn {turn.id} in {turn.scope} (session {turn.session or '-'}): {turn.query}\n"
        f"{turn.text}\n-- {turn.budget.used}/{turn.budget.limit} tokens",
    )


@turns.command("record")
@SCOPE
@click.argument("session")
@click.argument("file", type=click.File("r"), default="-")
@click.pass_obj
def turns_record(state: State, scope: str, session: str, file) -> None:
    """Record an interaction: FILE (default stdin) holds a JSON list of turns, each {role, content,
    ref?, call_id?}. Standing instructions in it become candidates."""
    try:
        items = json.load(file)
    except json.JSONDecodeError as exc:
        raise click.BadParameter(f"not JSON: {exc}", param_hint="FILE") from exc
    if not isinstance(items, list):
        raise click.BadParameter("a JSON list of turns is expected", param_hint="FILE")
    created = state.client.events.record(scope=scope, session=session, turns=items)
    _emit(
        state,
        created,
        "\n".join(f"memory {m.id}: {m.kind}/{m.status}  {_short(m.text, 60)}" for m in created)
        or "(nothing new)",
    )


@main.group()
def review() -> None:
    """The review queue: proposals, promotions and conflicts waiting for a person."""


@review.command("list")
@click.option("--scope", shell_complete=complete_scope, help="Only this scope's subtree.")
@click.pass_obj
def review_list(state: State, scope: str | None) -> None:
    """What waits for review in the scopes the token may review."""
    items = state.client.review.queue(scope=scope)
    lines = [
        f"{i.memory['id']:>6}  {i.kind:<10} {i.memory.get('scope', ''):<24} "
        f"{len(i.approvals)}/{i.approvals_needed}{'' if i.can_confirm else ' (not yours to confirm)'}  "
        f"{_short(i.memory.get('text', ''), 50)}"
        for i in items
    ]
    _emit(state, items, "\n".join(lines) if lines else "(nothing to review)")


@review.command("confirm")
@click.argument("memory_id", type=int)
@click.option("--reason", default="", help="Why (kept in the audit log).")
@click.pass_obj
def review_confirm(state: State, memory_id: int, reason: str) -> None:
    """Confirm a proposal or candidate: it comes into force (or counts one approval of two)."""
    done = state.client.memories.confirm(memory_id, reason=reason)
    _emit(
        state,
        done,
        f"memory {done.id}: {done.status}"
        + (f" ({done.approvals}/{done.approvals_needed} approvals)" if done.approvals_needed > 1 else ""),
    )


@review.command("reject")
@click.argument("memory_id", type=int)
@click.option("--reason", required=True, help="Why (kept in the audit log).")
@click.pass_obj
def review_reject(state: State, memory_id: int, reason: str) -> None:
    """Reject a proposal or candidate."""
    done = state.client.memories.reject(memory_id, reason=reason)
    _emit(state, done, f"memory {done.id}: {done.status}")


def _scope_id(state: State, scope: str) -> int:
    """A scope given by id or by path (resolved among the scopes the token can read)."""
    if scope.isdigit():
        return int(scope)
    path = scope.strip().strip("/")
    for found in state.client.scopes.list(under=path):
        if found.path == path:
            return found.id
    raise errors.NotFound(f"No scope {path!r} among the scopes you can see.", status=404, code="not_found")


@main.command("export")
@SCOPE
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, writable=True, path_type=Path),
    help="Write to this file (default: stdout).",
)
@click.pass_obj
def export(state: State, scope: str, output: Path | None) -> None:
    """A scope's subtree as JSON lines (curators and owners; docs/portability.md)."""
    text = state.client.scopes.export(_scope_id(state, scope))
    if output is None:
        click.echo(text, nl=False)
    else:
        output.write_text(text, encoding="utf-8")
        lines = text.count("\n")
        click.echo(
            json.dumps({"file": str(output), "lines": lines})
            if state.as_json
            else f"{lines} lines written to {output}",
            err=not state.as_json,
        )


@main.command("import")
@SCOPE
@click.argument("file", type=click.File("rb"), default="-")
@click.option("--name", help="Import as a new child scope of SCOPE with this name.")
@click.option(
    "--grants",
    type=click.Choice(["drop", "keep"]),
    default="drop",
    show_default=True,
    help="What to do with the file's grants.",
)
@click.option("--preview", is_flag=True, help="Check and count the whole file; change nothing.")
@click.pass_obj
def import_(state: State, scope: str, file, name: str | None, grants: str, preview: bool) -> None:
    """Import an export file into SCOPE (owners of the target)."""
    result = state.client.scopes.import_file(
        _scope_id(state, scope), file.read(), name=name, grants=grants, preview=preview
    )
    counts = ", ".join(f"{k} {v}" for k, v in (result.get("counts") or {}).items())
    _emit(
        state,
        result,
        f"{'preview of ' if result.get('preview') else ''}import into "
        f"{result.get('root')}: {counts or 'nothing'}",
    )


@main.group()
def tokens() -> None:
    """API tokens: issue (shown once), list, revoke."""


@tokens.command("list")
@click.option("--active", is_flag=True, help="Only tokens neither revoked nor expired.")
@click.pass_obj
def tokens_list(state: State, active: bool) -> None:
    """Tokens the caller may revoke: its own, and those bound inside a subtree it owns."""
    found = state.client.tokens.list(active=active)
    lines = [
        f"{t.id:>5}  mem_{t.prefix}…  {t.principal:<20} {t.role:<9} {t.scope or '-':<24} "
        f"{'revoked' if t.revoked_at else 'active'}"
        for t in found
    ]
    _emit(state, found, "\n".join(lines) if lines else "(no tokens)")


@tokens.command("issue")
@click.argument("principal")
@SCOPE
@click.option(
    "--role",
    default="agent",
    show_default=True,
    type=click.Choice(["agent", "viewer", "reviewer", "curator", "owner"]),
)
@click.option("--expires-at", help="ISO 8601 time, e.g. 2027-01-31T00:00:00Z.")
@click.pass_obj
def tokens_issue(state: State, principal: str, scope: str, role: str, expires_at: str | None) -> None:
    """A new token for PRINCIPAL bound to SCOPE's subtree and at most ROLE; printed once, last."""
    issued = state.client.tokens.issue(principal=principal, scope=scope, role=role, expires_at=expires_at)
    _emit(
        state,
        issued,
        f"token for {principal} on {issued.scope} (at most {issued.role}); shown once:\n{issued.token}",
    )


@tokens.command("revoke")
@click.argument("token_id", type=int)
@click.option("--reason", required=True, help="Why (kept in the audit log).")
@click.pass_obj
def tokens_revoke(state: State, token_id: int, reason: str) -> None:
    """Revoke a token by id (`memgov tokens list` shows the ids), saying why."""
    state.client.tokens.revoke(token_id, reason=reason)
    _emit(state, {"revoked": token_id}, f"token {token_id} revoked")


if __name__ == "__main__":  # pragma: no cover
    main(prog_name="memgov")
    sys.exit(0)
