"""Dashboard routes: one module per page family; `*.json` routes feed the charts."""

from django.urls import path

from memoryui.views import (
    curation,
    evaluation,
    governance,
    graph,
    memories,
    overview,
    review,
    summary,
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
    path("memories/<int:memory_id>/link/", curation.memory_link, name="memory-link"),
    path("memories/<int:memory_id>/link/choices/", curation.memory_link_choices, name="memory-link-choices"),
    path("memories/<int:memory_id>/unlink/", curation.memory_unlink, name="memory-unlink"),
    path("memories/<int:memory_id>/promote/", curation.memory_promote, name="memory-promote"),
    path("summary/rebuild/", summary.summary_rebuild, name="summary-rebuild"),
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
    path("evaluation/data.json", evaluation.evaluation_json, name="evaluation-data"),
    path("evaluation/upload/", evaluation.evaluation_upload, name="evaluation-upload"),
    path("evaluation/runs/<int:run_id>/", evaluation.evaluation_run, name="evaluation-run"),
]
