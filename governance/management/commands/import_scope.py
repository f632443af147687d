"""Import an export file (manage.py export_scope) into a scope of this installation (docs/portability.md):
ids remapped, principals matched by name (created as names without a sign-in when missing), grants dropped
unless --grants keep, the whole file in one transaction (a bad file changes nothing and names its line).
The imported memories are then embedded here, once each (claimed as the conversation importer does), unless
--no-embed leaves them to the embedding workers that the outbox already told."""

from __future__ import annotations

import sys

from django.core.management.base import BaseCommand, CommandError

from governance.errors import DomainError
from governance.permissions import principal_by_name
from governance.propagation import embed_memories
from governance.runtime.progress import Progress
from governance.services.portability import ImportFileError, scope_import
from governance.services.portability.import_ import GRANTS_DROP, GRANTS_KEEP


class Command(BaseCommand):
    help = "Import a scope export (JSON lines) into PATH, ids remapped, in one transaction."

    def add_arguments(self, parser):
        parser.add_argument("file", help="the export file, or - for standard input")
        parser.add_argument(
            "--into", required=True, help="the scope the export's root becomes (e.g. acme/slides)"
        )
        parser.add_argument(
            "--grants",
            choices=(GRANTS_DROP, GRANTS_KEEP),
            default=GRANTS_DROP,
            help="drop the file's grants (default) or keep them (never above the importer's role)",
        )
        parser.add_argument(
            "--map-principal",
            action="append",
            default=[],
            metavar="FILE_NAME=LOCAL_NAME",
            help="match a principal of the file to a principal of this installation by another name",
        )
        parser.add_argument(
            "--as",
            dest="as_name",
            default=None,
            help="import as this principal (it must own the target); default: the system",
        )
        parser.add_argument("--no-embed", action="store_true", help="leave the embedding to the workers")

    def handle(self, *args, file, into, grants, map_principal, as_name=None, no_embed=False, **options):
        mapping = {}
        for item in map_principal:
            name, sep, local = item.partition("=")
            if not sep or not name or not local:
                raise CommandError(f"--map-principal takes FILE_NAME=LOCAL_NAME, not {item!r}")
            mapping[name] = local
        actor = None
        if as_name:
            # The operator names the actor: the system resolves it (actor None sees every principal).
            actor = principal_by_name(None, as_name, missing=CommandError(f"no principal {as_name!r}"))
        try:
            handle = sys.stdin if file == "-" else open(file, encoding="utf-8")  # noqa: SIM115
        except OSError as exc:
            raise CommandError(f"cannot read {file}: {exc.strerror}") from exc
        bar: dict = {}

        def progress(done: int, total: int) -> None:
            if "p" not in bar:
                bar["p"] = Progress(self.stdout.write, max(total, 1), unit="records")
            bar["p"].update(min(done, bar["p"].total))

        try:
            with handle:
                result = scope_import(
                    lines=handle,
                    into=into,
                    actor=actor,
                    grants=grants,
                    principal_map=mapping,
                    progress=progress,
                )
        except ImportFileError as exc:
            raise CommandError(f"{file}: {exc.message}; nothing was imported") from exc
        except DomainError as exc:
            raise CommandError(f"{exc.message} Nothing was imported.") from exc
        counts = result.counts
        self.stdout.write(
            f"imported into {result.root.path}: {counts['scopes']} scopes, {counts['memories']} memories, "
            f"{counts['tombstones']} tombstones, {counts['relations']} relations, {counts['summaries']} summaries, "
            f"{counts['audit']} source audit events kept as import #{result.scope_import.pk}; "
            f"grants: {counts['grants'] - result.grants_dropped} kept, {result.grants_dropped} dropped"
            + (
                f"; {result.proposed_for_four_eyes} long-term commitments wait for two reviewers"
                if result.proposed_for_four_eyes
                else ""
            )
            + (
                f"; {counts['already_in_force']} statements already in force here came in as proposals"
                " (confirming them is refused)"
                if counts["already_in_force"]
                else ""
            )
        )
        if no_embed or not result.memory_ids:
            return
        embedding = Progress(self.stdout.write, len(result.memory_ids), unit="memories")
        done = 0
        step = 500
        for start in range(0, len(result.memory_ids), step):
            chunk = result.memory_ids[start : start + step]
            embed_memories(chunk)
            done += len(chunk)
            embedding.update(done, "embedded")
