"""Dashboard routes: one module per page family; `*.json` routes feed the charts."""

from django.urls import path

from memoryui.views import (
    evaluation,
    governance,
    graph,
    memories,
    overview,
    portability,
    review,
    timeline,
    turns,
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
    path("portability/", portability.portability, name="portability"),
    path("portability/export/<int:scope_id>/", portability.scope_export_download, name="scope-export"),
    path("portability/import/", portability.scope_import_upload, name="scope-import"),
    path("evaluation/", evaluation.evaluation, name="evaluation"),
    path("evaluation/data.json", evaluation.evaluation_json, name="evaluation-data"),
]
