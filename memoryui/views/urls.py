"""Dashboard routes: one module per page family; `*.json` routes feed the charts."""

from django.urls import path

from memoryui.views import (
    admin,
    evaluation,
    governance,
    graph,
    memories,
    overview,
    review,
    timeline,
    turns,
    webhooks,
)

app_name = "dashboard"

urlpatterns = [
    path("", overview.overview, name="overview"),
    path("charts/activation.json", overview.activation_histogram_json, name="activation-histogram"),
    path("memories/", memories.memory_list, name="memories"),
    path("memories/<int:memory_id>/", memories.memory_detail, name="memory"),
    path("memories/<int:memory_id>/activation.json", memories.memory_activation_json, name="memory-activation"),
    path("memories/<int:memory_id>/act/", memories.memory_act, name="memory-act"),
    path("timeline/", timeline.timeline, name="timeline"),
    path("timeline/data.json", timeline.timeline_json, name="timeline-data"),
    path("graph/", graph.graph, name="graph"),
    path("graph/data.json", graph.graph_json, name="graph-data"),
    path("turns/", turns.turn_list, name="turns"),
    path("turns/try/", turns.turn_try, name="turn-try"),
    path("turns/<int:turn_id>/", turns.turn_detail, name="turn"),
    path("turns/<int:turn_id>/replay/", turns.turn_replay, name="turn-replay"),
    path("review/", review.review, name="review"),
    path("review/act/", review.review_act, name="review-act"),
    path("governance/", governance.governance, name="governance"),
    path("governance/verify/", governance.audit_verify, name="audit-verify"),
    path("governance/grants/add/", governance.grant_create, name="grant-add"),
    path("governance/grants/revoke/", governance.grant_delete, name="grant-revoke"),
    path("governance/tokens/revoke/", governance.token_delete, name="token-revoke"),
    path("evaluation/", evaluation.evaluation, name="evaluation"),
    # Administration (memoryui/views/admin.py): workspaces, members, scope settings, invitation links.
    path("workspaces/", admin.workspaces, name="workspaces"),
    path("workspaces/new/", admin.workspace_new, name="workspace-new"),
    path("workspaces/<str:slug>/members/", admin.members, name="members"),
    path("workspaces/<str:slug>/rename/", admin.workspace_edit, name="workspace-rename"),
    path("workspaces/<str:slug>/members/add/", admin.member_add, name="member-add"),
    path("workspaces/<str:slug>/invitations/", admin.invitation_new, name="invitation-new"),
    path("workspaces/<str:slug>/invitations/withdraw/", admin.invitation_withdraw, name="invitation-withdraw"),
    path("workspaces/<str:slug>/teams/", admin.team_new, name="team-new"),
    path("workspaces/<str:slug>/teams/members/", admin.team_member_add, name="team-member-add"),
    path("workspaces/<str:slug>/teams/members/remove/", admin.team_member_remove, name="team-member-remove"),
    path("workspaces/<str:slug>/scopes/", admin.scope_new, name="scope-new"),
    path("scopes/<int:scope_id>/settings/", admin.scope_settings, name="scope-settings"),
    path("scopes/<int:scope_id>/settings/change/", admin.scope_settings_change, name="scope-settings-change"),
    path("invite/<str:token>/", admin.invite, name="invite"),
    path("evaluation/data.json", evaluation.evaluation_json, name="evaluation-data"),
    path("webhooks/", webhooks.webhooks, name="webhooks"),
    path("webhooks/add/", webhooks.webhook_create, name="webhook-create"),
    path("webhooks/<int:webhook_id>/act/", webhooks.webhook_act, name="webhook-act"),
    path("webhooks/deliveries/<int:delivery_id>/redeliver/", webhooks.webhook_redeliver, name="webhook-redeliver"),
]
