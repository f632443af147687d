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
    parent = models.ForeignKey("self", null=True, blank=True, on_delete=models.PROTECT, related_name="children")
    name = models.CharField(max_length=63, validators=[slug_validator])
    path = models.CharField(max_length=512, unique=True)
    tree = LtreeField(null=True, blank=True)
    # Four-eyes: long-term commitments in this scope need two different reviewers.
    require_two_reviewers = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    objects = ScopeQuerySet.as_manager()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["parent", "name"], name="scope_unique_child_name"),
        ]
        indexes = [models.Index(fields=["workspace"])]

    def __str__(self) -> str:
        return self.path

    @property
    def depth(self) -> int:
        return self.path.count("/") + 1
