from django.contrib.postgres.fields import ArrayField
from django.core.validators import RegexValidator
from django.db import models

from governance.models.fields import LtreeField

SLUG_RE = r"^[a-z0-9][a-z0-9_-]{0,62}$"
slug_validator = RegexValidator(SLUG_RE, "Use lowercase letters, digits, '-' and '_' (at most 63).")


class Workspace(models.Model):
    """The root of a scope tree: nothing is ever visible across workspaces."""

    slug = models.CharField(max_length=63, unique=True, validators=[slug_validator])
    name = models.CharField(max_length=200)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return self.slug


class AgentWrite(models.TextChoices):
    """What an agent's token may write in a scope (governance.permissions.scopes decides)."""

    PROPOSE = "propose", "Agents record episodes and propose memories"
    EPISODES = "episodes", "Agents record episodes only"
    NONE = "none", "Agents write nothing"


class SessionOverrides(models.TextChoices):
    """Whose account of a user's correction sets a rule aside for that session (governance.recall.session):
    the strictest setting on the scope or above it applies."""

    ANY = "any", "The user's correction counts in its session, also as an agent relayed it"
    END_USER = (
        "end_user",
        "Only turns posted with a person's token (the end user's, or a trusted app's) count",
    )
    OFF = "off", "No session overrides: a correction waits for a person like any proposal"


class ScopeQuerySet(models.QuerySet):
    def ancestors_of(self, scope: "Scope") -> "ScopeQuerySet":
        """The scope itself and every ancestor: what a read in `scope` may see."""
        return self.filter(tree__ancestor_of=scope.tree)

    def subtree_of(self, scope: "Scope") -> "ScopeQuerySet":
        return self.filter(tree__descendant_of=scope.tree)


class Scope(models.Model):
    """A node in a workspace's tree (workspace > project/user > task). `path` is what people type
    ("demo/slides/export"); `tree` is the same node as an ltree of ids for ancestor/subtree queries."""

    workspace = models.ForeignKey(Workspace, on_delete=models.PROTECT, related_name="scopes")
    parent = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="children"
    )
    name = models.CharField(max_length=63, validators=[slug_validator])
    path = models.CharField(max_length=512, unique=True)
    tree = LtreeField(null=True, blank=True)
    # Four-eyes: long-term commitments in this scope need two different reviewers.
    require_two_reviewers = models.BooleanField(default=False)
    # Archived: takes no new writes and is left out of pickers; its memories stay readable by grant.
    archived_at = models.DateTimeField(null=True, blank=True)
    # What agents may write here; the strictest setting on the scope or above it applies.
    agent_write = models.CharField(max_length=10, choices=AgentWrite.choices, default=AgentWrite.PROPOSE)
    # The lowest role that may open a child scope here ("" = settings.SCOPE_CREATE_ROLE); the strictest
    # setting on the scope or above it applies.
    child_scope_role = models.CharField(max_length=10, blank=True, default="")
    # Session overrides (docs/governance.md, "The session's requirements"): whose corrections count, and which rules
    # no session may set aside (binding: these keys, or every rule; long-term commitments under four-eyes
    # are binding anyway). The strictest setting on the scope or above it applies.
    session_overrides = models.CharField(
        max_length=10, choices=SessionOverrides.choices, default=SessionOverrides.ANY
    )
    binding_keys = ArrayField(models.CharField(max_length=200), default=list, blank=True)
    rules_binding = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    objects = ScopeQuerySet.as_manager()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["parent", "name"], name="scope_unique_child_name"),
            models.CheckConstraint(
                condition=models.Q(agent_write__in=["propose", "episodes", "none"]),
                name="scope_agent_write_valid",
            ),
            models.CheckConstraint(
                condition=models.Q(child_scope_role__in=["", "agent", "reviewer", "curator", "owner"]),
                name="scope_child_scope_role_valid",
            ),
            models.CheckConstraint(
                condition=models.Q(session_overrides__in=["any", "end_user", "off"]),
                name="scope_session_overrides_valid",
            ),
        ]
        indexes = [models.Index(fields=["workspace"])]

    def __str__(self) -> str:
        return self.path

    @property
    def depth(self) -> int:
        return self.path.count("/") + 1
