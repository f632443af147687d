import hashlib
import secrets

from django.conf import settings
from django.db import models


class PrincipalKind(models.TextChoices):
    USER = "user", "User"
    GROUP = "group", "Group (team)"
    AGENT = "agent", "Agent"


# The names an import gives principals of a file that match nobody here ("import:<workspace id>:<name>",
# services/portability/names.py): provenance only. A person's user name never holds ':', so no one signs up
# under one, and such a principal is never a person (permissions/owners.py: it keeps no scope governed).
IMPORT_PLACEHOLDER_PREFIX = "import:"


class Principal(models.Model):
    """Whoever acts: a person (linked to a Django user), a team, or an agent holding API tokens.
    Grants are given to principals; a user also holds the grants of every group it belongs to."""

    kind = models.CharField(max_length=10, choices=PrincipalKind.choices)
    # One namespace for users, agents and teams without a home (across the installation: a person's name
    # is their address, like a user name on a code host); a team's name is unique within its workspace
    # only, so two workspaces may each have a team "ops" (docs/governance.md, "Names").
    name = models.CharField(max_length=150)
    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.CASCADE, related_name="principal"
    )
    groups = models.ManyToManyField(
        "self", symmetrical=False, blank=True, related_name="members", limit_choices_to={"kind": "group"}
    )
    # A team's home: the one workspace where it may hold grants and whose owners manage its members
    # (governance.permissions.resolve). Null for users and agents, who belong to the workspaces where
    # they hold a grant or a team of theirs does; and for a team the system made before its first grant.
    workspace = models.ForeignKey(
        "governance.Workspace", null=True, blank=True, on_delete=models.CASCADE, related_name="teams"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=models.Q(kind__in=["user", "group", "agent"]), name="principal_kind_valid"
            ),
            models.CheckConstraint(
                condition=models.Q(workspace__isnull=True) | models.Q(kind="group"),
                name="principal_home_only_for_teams",
            ),
            models.UniqueConstraint(
                fields=["name"], condition=models.Q(workspace__isnull=True), name="principal_name_unique"
            ),
            models.UniqueConstraint(
                fields=["workspace", "name"],
                condition=models.Q(workspace__isnull=False),
                name="team_name_unique_in_workspace",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.kind}:{self.name}"

    def principal_ids(self) -> list[int]:
        """This principal and the groups it belongs to: whose grants apply to it."""
        return [self.pk, *self.groups.values_list("pk", flat=True)]


def hash_token(raw: str) -> str:
    return hashlib.sha256(raw.encode()).hexdigest()


class ApiToken(models.Model):
    """An agent's (or person's) API token. Only its SHA-256 is stored; the raw key is shown once.

    A token is bound at issue to a scope subtree and a highest role: it acts with the smaller of that
    bound and its principal's grants at the time of each request (governance.permissions applies it).
    A token without a bound (issued by the system before bounds existed, or by the system actor without
    one) is limited by its principal's grants alone."""

    principal = models.ForeignKey(Principal, on_delete=models.CASCADE, related_name="tokens")
    prefix = models.CharField(max_length=8)
    key_hash = models.CharField(max_length=64, unique=True)
    scope = models.ForeignKey(
        "governance.Scope", null=True, blank=True, on_delete=models.CASCADE, related_name="tokens"
    )
    max_role = models.CharField(max_length=10, blank=True, default="")
    expires_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=models.Q(max_role__in=["", "agent", "viewer", "reviewer", "curator", "owner"]),
                name="token_max_role_valid",
            ),
            # Both halves of the bound or neither: a scope without a role cap (or the reverse) is a bug.
            models.CheckConstraint(
                condition=models.Q(scope__isnull=True, max_role="")
                | models.Q(scope__isnull=False) & ~models.Q(max_role=""),
                name="token_bound_whole",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.prefix}… ({self.principal.name})"

    @staticmethod
    def generate() -> str:
        return "mem_" + secrets.token_urlsafe(32)


class Role(models.TextChoices):
    AGENT = "agent", "Agent"
    VIEWER = "viewer", "Viewer"
    REVIEWER = "reviewer", "Reviewer"
    CURATOR = "curator", "Curator"
    OWNER = "owner", "Owner"


# Higher roles include the rights of lower ones, except that `agent` and `viewer` are side by side:
# an agent writes candidates and asks for context; a viewer reads. Both rank below reviewer.
ROLE_RANK = {Role.AGENT: 1, Role.VIEWER: 1, Role.REVIEWER: 2, Role.CURATOR: 3, Role.OWNER: 4}


class Grant(models.Model):
    """A role for a principal on a scope subtree. Who may revoke what is decided by grants, not code."""

    principal = models.ForeignKey(Principal, on_delete=models.CASCADE, related_name="grants")
    scope = models.ForeignKey("governance.Scope", on_delete=models.CASCADE, related_name="grants")
    role = models.CharField(max_length=10, choices=Role.choices)
    granted_by = models.ForeignKey(
        Principal, null=True, blank=True, on_delete=models.SET_NULL, related_name="grants_given"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=models.Q(role__in=[r.value for r in Role]), name="grant_role_valid"
            ),
            models.UniqueConstraint(fields=["principal", "scope", "role"], name="grant_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.principal} {self.role} @ {self.scope}"
