"""Governance API routes (confirm/reject/retire/forget, grants, audit). Owned by the governance work."""

urlpatterns: list = []
