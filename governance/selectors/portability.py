"""What an export of a scope subtree reads: the subtree's scopes, grants, memories, relations, summaries and
audit events, each as a QuerySet the exporter walks with iterator() (bounded memory), and the principals
they name."""

from __future__ import annotations

from django.db.models import CharField, Q, QuerySet
from django.db.models.functions import Cast

from governance.models import AuditEvent, Grant, Memory, Principal, Relation, Scope, Summary


def subtree_scopes(root: Scope) -> QuerySet[Scope]:
    """The root and every scope below it, parents before children."""
    return Scope.objects.subtree_of(root).order_by("path")


def subtree_grants(root: Scope) -> QuerySet[Grant]:
    return Grant.objects.filter(scope__tree__descendant_of=root.tree).order_by("pk")


def subtree_memories(root: Scope) -> QuerySet[Memory]:
    """Every memory row of the subtree (all revisions, tombstones too), in id order: an older revision comes
    before the one that superseded it. The embedding is not read (never exported)."""
    return (
        Memory.objects.filter(scope__tree__descendant_of=root.tree)
        .order_by("pk")
        .defer("embedding", "lexical")
    )


def subtree_relations(root: Scope) -> QuerySet[Relation]:
    """Relations with both ends inside the subtree (a link to a memory outside it cannot be carried)."""
    return Relation.objects.filter(
        source__scope__tree__descendant_of=root.tree, target__scope__tree__descendant_of=root.tree
    ).order_by("pk")


def subtree_summaries(root: Scope) -> QuerySet[Summary]:
    return Summary.objects.filter(scope__tree__descendant_of=root.tree).order_by("pk")


def subtree_audit_events(root: Scope) -> QuerySet[AuditEvent]:
    """The audit events recorded in the subtree (by the identity of the scope they concern, never its
    path), in chain order."""
    return AuditEvent.objects.filter(scope_id__in=Scope.objects.subtree_of(root).values("pk")).order_by("pk")


# What an export's audit section carries: the history of what the file itself carries (its scopes,
# memories, relations, summaries), never the events about tokens (key prefixes), grants, teams,
# invitations, webhooks (their URLs) or evaluation runs, and nothing about a memory that is forgotten (its
# events hold the content hash of the text; the tombstone says when and by whom).
EXPORTED_AUDIT_TARGETS = ("scope", "memory", "relation", "summary")


def exported_audit_events(root: Scope) -> QuerySet[AuditEvent]:
    """The audit events an export of `root` carries (EXPORTED_AUDIT_TARGETS), whole, so an importer can
    check each event's hash."""
    forgotten = (
        Memory.objects.filter(scope__tree__descendant_of=root.tree, status="forgotten")
        .annotate(ref=Cast("pk", CharField()))
        .values("ref")
    )
    return (
        subtree_audit_events(root)
        .filter(target_type__in=EXPORTED_AUDIT_TARGETS)
        .exclude(target_type="memory", target_id__in=forgotten)
    )


def forget_records(root: Scope, memory_ids: list[int]) -> dict[str, tuple]:
    """When and by whom each of these memories was forgotten: {memory id as text: (at, actor name)}, the
    latest forget event of each (one query)."""
    rows = (
        subtree_audit_events(root)
        .filter(
            target_type="memory",
            target_id__in=[str(i) for i in memory_ids],
            action__in=("memory.forget", "memory.forget_hard"),
        )
        .order_by("pk")
        .values_list("target_id", "at", "actor_name")
    )
    return {target: (at, name) for target, at, name in rows}


def referenced_principals(root: Scope) -> QuerySet[Principal]:
    """Every principal the export names: grant holders and givers, memory writers and confirmers, relation
    and summary authors. Names and kinds only are exported; never tokens or passwords."""
    tree = root.tree
    q = (
        Q(grants__scope__tree__descendant_of=tree)
        | Q(grants_given__scope__tree__descendant_of=tree)
        | Q(memories__scope__tree__descendant_of=tree)
    )
    ids = set(Principal.objects.filter(q).values_list("pk", flat=True).distinct())
    ids |= set(
        Memory.objects.filter(scope__tree__descendant_of=tree, confirmed_by__isnull=False)
        .values_list("confirmed_by", flat=True)
        .distinct()
    )
    ids |= set(subtree_relations(root).filter(actor__isnull=False).values_list("actor", flat=True).distinct())
    ids |= set(
        subtree_summaries(root).filter(built_by__isnull=False).values_list("built_by", flat=True).distinct()
    )
    return Principal.objects.filter(pk__in=ids).order_by("pk")
