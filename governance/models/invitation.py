import hashlib
import secrets

from django.db import models


class Invitation(models.Model):
    """A one-time link for someone without an account: whoever opens it before `expires_at` chooses a
    user name and password, and the new user gets `role` on `scope`'s subtree. Only the SHA-256 of the
    link's token is stored; the raw token is shown once, to the person who invites."""

    scope = models.ForeignKey("governance.Scope", on_delete=models.CASCADE, related_name="invitations")
    role = models.CharField(max_length=10)
    note = models.CharField(max_length=200, blank=True, default="")  # who it is for, as the inviter wrote it
    token_hash = models.CharField(max_length=64, unique=True)
    prefix = models.CharField(max_length=8)
    created_by = models.ForeignKey(
        "governance.Principal", null=True, on_delete=models.SET_NULL, related_name="invitations_sent"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    accepted_at = models.DateTimeField(null=True, blank=True)
    accepted_by = models.ForeignKey(
        "governance.Principal",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="invitations_accepted",
    )
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=models.Q(role__in=["agent", "viewer", "reviewer", "curator", "owner"]),
                name="invitation_role_valid",
            ),
        ]

    def __str__(self) -> str:
        return f"invitation {self.prefix}… ({self.role} @ {self.scope_id})"

    @staticmethod
    def generate() -> str:
        return secrets.token_urlsafe(32)

    @staticmethod
    def hash(raw: str) -> str:
        return hashlib.sha256(raw.encode()).hexdigest()
