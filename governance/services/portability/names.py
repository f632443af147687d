"""Whom a principal named in an import file stands for here (docs/portability.md, "Principals").

A name the operator maps (--map-principal) is resolved as the importer may see it; any other is matched
only to a member of the target workspace (permissions.resolve: a grant there, or one of its teams), or,
when the system imports (the command line, as the operator), to this installation's principal of that
name. Unmatched, it becomes a placeholder of the target workspace, "import:<workspace id>:<name>": a name
for provenance that no person can ever sign up with (a user name holds no ':'), so nobody inherits what
the file says about someone else."""

from __future__ import annotations

from governance.models import Principal, PrincipalKind, Workspace
from governance.models.principal import IMPORT_PLACEHOLDER_PREFIX
from governance.permissions import member_by_name, principal_by_name
from governance.services.portability.format import ImportFileError
from governance.services.principal import principal_ensure

UNKNOWN_LOCAL_PRINCIPAL = "--map-principal names {name!r}, which is no principal here"
PLACEHOLDER_PREFIX = IMPORT_PLACEHOLDER_PREFIX
PRINCIPAL_KIND_CLASH = "principal record: {name!r} is a {kind} here, the file says {file_kind}"


class _NoMatch(Exception):
    """No principal of that name here (the command line's import then makes a placeholder)."""


def local_principal(
    *,
    name: str,
    kind: str,
    actor: Principal | None,
    principal_map: dict[str, str],
    workspace: Workspace | None,
    line: int,
) -> Principal:
    """The principal `name` (of `kind`, at file line `line`) stands for in `workspace`."""
    workspace_id = workspace.pk if workspace is not None else None
    # A team's name is its workspace's (a file's team matches a team of the target workspace only); a
    # person's or agent's is the installation's, so a kind clash there is the file's error.
    kinds = (
        (PrincipalKind.GROUP,) if kind == PrincipalKind.GROUP else (PrincipalKind.USER, PrincipalKind.AGENT)
    )
    if name in principal_map:
        return principal_by_name(
            actor,
            principal_map[name],
            workspace=workspace_id,
            missing=ImportFileError(line, UNKNOWN_LOCAL_PRINCIPAL.format(name=principal_map[name])),
        )
    if actor is None:
        try:
            found = principal_by_name(None, name, workspace=workspace_id, kinds=kinds, missing=_NoMatch())
        except _NoMatch:
            found = None
    else:
        found = member_by_name(actor, name, workspace_id, kinds=kinds)
    if found is not None:
        if found.kind != kind:
            raise ImportFileError(
                line, PRINCIPAL_KIND_CLASH.format(name=name, kind=found.kind, file_kind=kind)
            )
        return found
    placeholder = f"{PLACEHOLDER_PREFIX}{workspace.pk if workspace is not None else 0}:{name}"[:150]
    home = workspace if kind == PrincipalKind.GROUP else None
    return principal_ensure(name=placeholder, kind=kind, actor=actor, workspace=home)
