"""Walls by identity (issue 20): a team's home workspace, audit events and evaluation sandboxes by id, and
agents capped at the agent role. The data steps, decided here and documented in docs/governance.md:

- A team's home is the workspace of its earliest grant. A team that held grants in several workspaces is
  split: it keeps its home, and for every other workspace a new team "<name>-<slug>" (made unique) with
  the same members takes over its grants there, so no membership change reaches a foreign workspace. A
  team with no grant gets the workspace where its creator (the audit event `principal.create`) held its
  earliest grant; a team with neither stays without a home, and only the system can grant it or manage it.
- An agent's grant above the agent role becomes an agent grant on the same scope (or goes, when the agent
  already holds that); an agent's token bound above the agent role is capped at it; an agent is taken out
  of every team that holds a role above the agent role.
- Every audit event written before this migration is given the scope (and workspace) that holds its path
  now: a path freed and taken again before the upgrade cannot be told apart after the fact. From here on
  the services write the ids with the event.

The migration writes no audit events of its own (the chain is the services'); what it changed is said in
the release notes of this change."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


ABOVE_AGENT = ("reviewer", "curator", "owner")


def _unique_name(Principal, base):
    name, n = base[:150], 2
    while Principal.objects.filter(name=name).exists():
        suffix = f"-{n}"
        name, n = base[:150 - len(suffix)] + suffix, n + 1
    return name


def homes_for_teams(apps, schema_editor):
    Principal = apps.get_model("governance", "Principal")
    Grant = apps.get_model("governance", "Grant")
    AuditEvent = apps.get_model("governance", "AuditEvent")
    Workspace = apps.get_model("governance", "Workspace")
    for team in Principal.objects.filter(kind="group").order_by("pk"):
        grants = list(Grant.objects.filter(principal=team).select_related("scope").order_by("pk"))
        if grants:
            home = grants[0].scope.workspace_id
            for workspace_id in sorted({g.scope.workspace_id for g in grants} - {home}):
                slug = Workspace.objects.get(pk=workspace_id).slug
                twin = Principal.objects.create(kind="group", workspace_id=workspace_id,
                                                name=_unique_name(Principal, f"{team.name}-{slug}"))
                twin.members.set(team.members.all())
                Grant.objects.filter(principal=team, scope__workspace_id=workspace_id).update(principal=twin)
        else:
            created = AuditEvent.objects.filter(action="principal.create", target_type="principal",
                                                target_id=str(team.pk)).order_by("pk").first()
            first = (Grant.objects.filter(principal_id=created.actor_id).select_related("scope").order_by("pk").first()
                     if created is not None and created.actor_id else None)
            home = first.scope.workspace_id if first is not None else None
        if home is not None:
            Principal.objects.filter(pk=team.pk).update(workspace_id=home)


def agents_at_most_agent(apps, schema_editor):
    Principal = apps.get_model("governance", "Principal")
    Grant = apps.get_model("governance", "Grant")
    ApiToken = apps.get_model("governance", "ApiToken")
    for grant in Grant.objects.filter(principal__kind="agent", role__in=ABOVE_AGENT).order_by("pk"):
        if Grant.objects.filter(principal_id=grant.principal_id, scope_id=grant.scope_id, role="agent").exists():
            grant.delete()
        else:
            Grant.objects.filter(pk=grant.pk).update(role="agent")
    ApiToken.objects.filter(principal__kind="agent", max_role__in=ABOVE_AGENT).update(max_role="agent")
    Membership = Principal.groups.through
    Membership.objects.filter(from_principal__kind="agent",
                              to_principal__grants__role__in=ABOVE_AGENT).delete()


AUDIT_BY_ID = """
ALTER TABLE governance_auditevent DISABLE TRIGGER audit_append_only;
UPDATE governance_auditevent a SET scope_id = s.id, workspace_id = s.workspace_id
  FROM governance_scope s WHERE a.scope_path <> '' AND s.path = a.scope_path;
UPDATE governance_auditevent a SET workspace_id = w.id
  FROM governance_workspace w WHERE a.workspace_id IS NULL AND a.target_type = 'workspace'
  AND a.target_id = w.id::text;
ALTER TABLE governance_auditevent ENABLE TRIGGER audit_append_only;
"""


class Migration(migrations.Migration):

    dependencies = [
        ('governance', '0026_purged_hash_index'),
        # Main's migrations made on 0026 in parallel (0029-0033, merged by 0034): following their merge too
        # keeps one leaf, so no merge migration is needed (different tables).
        ('governance', '0034_merge_overrides_tsvector'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name='auditevent',
            name='scope',
            field=models.ForeignKey(blank=True, db_constraint=False, null=True, on_delete=django.db.models.deletion.DO_NOTHING, related_name='+', to='governance.scope'),
        ),
        migrations.AddField(
            model_name='auditevent',
            name='workspace',
            field=models.ForeignKey(blank=True, db_constraint=False, null=True, on_delete=django.db.models.deletion.DO_NOTHING, related_name='+', to='governance.workspace'),
        ),
        migrations.AddField(
            model_name='evaluationrun',
            name='sandbox_workspace',
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to='governance.workspace'),
        ),
        migrations.AddField(
            model_name='principal',
            name='workspace',
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='teams', to='governance.workspace'),
        ),
        migrations.AddConstraint(
            model_name='principal',
            constraint=models.CheckConstraint(condition=models.Q(('workspace__isnull', True), ('kind', 'group'), _connector='OR'), name='principal_home_only_for_teams'),
        ),
        migrations.RunPython(homes_for_teams, migrations.RunPython.noop),
        migrations.RunPython(agents_at_most_agent, migrations.RunPython.noop),
        migrations.RunSQL(AUDIT_BY_ID, migrations.RunSQL.noop),
    ]
