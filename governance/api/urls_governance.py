"""Governance API routes: confirm/reject/retire/forget, grants, teams and tokens, review queue, retention,
summaries, audit verification and propagation state."""

from django.urls import path

from governance.api import governance_views as v

urlpatterns = [
    path("memories/<int:memory_id>/confirm", v.MemoryConfirmView.as_view(), name="api-gov-memory-confirm"),
    path("memories/<int:memory_id>/reject", v.MemoryRejectView.as_view(), name="api-gov-memory-reject"),
    path("memories/<int:memory_id>/retire", v.MemoryRetireView.as_view(), name="api-gov-memory-retire"),
    path("memories/<int:memory_id>/forget", v.MemoryForgetView.as_view(), name="api-gov-memory-forget"),
    path("grants", v.GrantListView.as_view(), name="api-gov-grants"),
    path("grants/<int:grant_id>", v.GrantRevokeView.as_view(), name="api-gov-grant-revoke"),
    path("groups/<str:group>/members", v.GroupMembersView.as_view(), name="api-gov-group-members"),
    path("groups/<str:group>/members/<str:member>", v.GroupMemberView.as_view(), name="api-gov-group-member"),
    path("tokens", v.TokenIssueView.as_view(), name="api-gov-tokens"),
    path("tokens/<int:token_id>", v.TokenRevokeView.as_view(), name="api-gov-token-revoke"),
    path("review", v.ReviewQueueView.as_view(), name="api-gov-review-queue"),
    path("retention", v.RetentionPolicyView.as_view(), name="api-gov-retention-policy"),
    path("summary", v.SummaryView.as_view(), name="api-gov-summary"),
    path("audit/verify", v.AuditVerifyView.as_view(), name="api-gov-audit-verify"),
    path("outbox/<int:outbox_id>", v.OutboxView.as_view(), name="api-gov-outbox-state"),
]
