"""/api/v1/: every route of the API, by resource, plus the schema and its docs page. Each resource is a
package of that name with its views (and their serializers) in views.py: governance/api/memories/, events/,
context/, turns/, scopes/, relations/, promotions/, review/, access/, operations/, administration/,
webhooks/, portability/; auth, errors, limits, schema and validation serve them all."""

from django.urls import path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from governance.api.access import views as access
from governance.api.administration import views as admin
from governance.api.context import views as context
from governance.api.disputes import views as disputes
from governance.api.events import views as events
from governance.api.memories import views as memories
from governance.api.operations import views as operations
from governance.api.portability import views as portability
from governance.api.promotions import views as promotions
from governance.api.relations import views as relations
from governance.api.review import views as review
from governance.api.scopes import views as scopes
from governance.api.turns import views as turns
from governance.api.webhooks import views as webhooks

urlpatterns = [
    path("schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("docs/", SpectacularSwaggerView.as_view(url_name="api-schema"), name="api-docs"),
    # Memories: the agent's operations, then the governing people's.
    path("memories", memories.MemoriesView.as_view(), name="api-memories"),
    path("memories/<int:memory_id>", memories.MemoryDetailView.as_view(), name="api-memory"),
    path(
        "memories/<int:memory_id>/supersede",
        memories.MemorySupersedeView.as_view(),
        name="api-memory-supersede",
    ),
    path(
        "memories/<int:memory_id>/confirm",
        memories.MemoryConfirmView.as_view(),
        name="api-gov-memory-confirm",
    ),
    path(
        "memories/<int:memory_id>/reject", memories.MemoryRejectView.as_view(), name="api-gov-memory-reject"
    ),
    path(
        "memories/<int:memory_id>/repropose",
        memories.MemoryReproposeView.as_view(),
        name="api-gov-memory-repropose",
    ),
    path(
        "memories/<int:memory_id>/retire", memories.MemoryRetireView.as_view(), name="api-gov-memory-retire"
    ),
    path(
        "memories/<int:memory_id>/forget", memories.MemoryForgetView.as_view(), name="api-gov-memory-forget"
    ),
    # Events, recall and context, turns, scopes.
    path("events", events.EventsView.as_view(), name="api-events"),
    path("recall", context.RecallView.as_view(), name="api-recall"),
    path("context", context.ContextView.as_view(), name="api-context"),
    path("turns/<int:turn_id>", turns.TurnDetailView.as_view(), name="api-turn"),
    path("scopes", scopes.ScopesView.as_view(), name="api-scopes"),
    path("scopes/<int:scope_id>", admin.ScopeDetailView.as_view(), name="api-gov-scope"),
    # Administration: workspaces, their members, teams, invitations (governance/api/administration/views.py).
    path("workspaces", admin.WorkspacesView.as_view(), name="api-gov-workspaces"),
    path("workspaces/<str:slug>", admin.WorkspaceView.as_view(), name="api-gov-workspace"),
    path(
        "workspaces/<str:slug>/members",
        admin.WorkspaceMembersView.as_view(),
        name="api-gov-workspace-members",
    ),
    path("teams", admin.TeamsView.as_view(), name="api-gov-teams"),
    path("teams/<str:group>/members", access.GroupMembersView.as_view(), name="api-gov-team-members"),
    path(
        "teams/<str:group>/members/<str:member>", access.GroupMemberView.as_view(), name="api-gov-team-member"
    ),
    path("invitations", admin.InvitationsView.as_view(), name="api-gov-invitations"),
    path("invitations/accept", admin.InvitationAcceptView.as_view(), name="api-gov-invitation-accept"),
    path("invitations/<int:invitation_id>", admin.InvitationView.as_view(), name="api-gov-invitation"),
    # Relations made by hand; promotion requested for chosen episodes.
    path("relations", relations.RelationsView.as_view(), name="api-gov-relations"),
    path("relations/<int:relation_id>", relations.RelationDetailView.as_view(), name="api-gov-relation"),
    path("promotions", promotions.PromotionRequestView.as_view(), name="api-promotions"),
    path("scopes/<int:scope_id>/export", portability.ScopeExportView.as_view(), name="api-gov-scope-export"),
    path("scopes/<int:scope_id>/import", portability.ScopeImportView.as_view(), name="api-gov-scope-import"),
    # Review.
    path("review", review.ReviewQueueView.as_view(), name="api-gov-review-queue"),
    # Proposed contradictions between unkeyed memories (governance/api/disputes/views.py).
    path("disputes", disputes.DisputesView.as_view(), name="api-gov-disputes"),
    path(
        "disputes/<int:dispute_id>/confirm",
        disputes.DisputeConfirmView.as_view(),
        name="api-gov-dispute-confirm",
    ),
    path(
        "disputes/<int:dispute_id>/dismiss",
        disputes.DisputeDismissView.as_view(),
        name="api-gov-dispute-dismiss",
    ),
    # Access: grants, group members, tokens.
    path("grants", access.GrantListView.as_view(), name="api-gov-grants"),
    path("grants/<int:grant_id>", access.GrantRevokeView.as_view(), name="api-gov-grant-revoke"),
    path("groups/<str:group>/members", access.GroupMembersView.as_view(), name="api-gov-group-members"),
    path(
        "groups/<str:group>/members/<str:member>",
        access.GroupMemberView.as_view(),
        name="api-gov-group-member",
    ),
    path("tokens", access.TokenIssueView.as_view(), name="api-gov-tokens"),
    path("tokens/<int:token_id>", access.TokenRevokeView.as_view(), name="api-gov-token-revoke"),
    # Operations: retention, summary, audit verification, propagation state.
    path("retention", operations.RetentionPolicyView.as_view(), name="api-gov-retention-policy"),
    path("summary", operations.SummaryView.as_view(), name="api-gov-summary"),
    path("audit/verify", operations.AuditVerifyView.as_view(), name="api-gov-audit-verify"),
    path("outbox/<int:outbox_id>", operations.OutboxView.as_view(), name="api-gov-outbox-state"),
    # Outbound events (webhooks) of a workspace: its owners only.
    path("webhooks", webhooks.WebhookListView.as_view(), name="api-gov-webhooks"),
    path("webhooks/<int:webhook_id>", webhooks.WebhookDetailView.as_view(), name="api-gov-webhook"),
    path(
        "webhooks/<int:webhook_id>/rotate-secret",
        webhooks.WebhookRotateSecretView.as_view(),
        name="api-gov-webhook-rotate-secret",
    ),
    path(
        "webhooks/<int:webhook_id>/deliveries",
        webhooks.WebhookDeliveriesView.as_view(),
        name="api-gov-webhook-deliveries",
    ),
    path(
        "webhooks/deliveries/<int:delivery_id>/redeliver",
        webhooks.WebhookRedeliverView.as_view(),
        name="api-gov-webhook-redeliver",
    ),
]
