"""Agent API routes (memories, events, recall, context, turns). Owned by the agent-API work."""

from django.urls import path

from governance.api import views_agent as v
from governance.api import views_scopes

urlpatterns = [
    path("memories", v.MemoriesView.as_view(), name="api-memories"),
    path("memories/<int:memory_id>", v.MemoryDetailView.as_view(), name="api-memory"),
    path("memories/<int:memory_id>/supersede", v.MemorySupersedeView.as_view(), name="api-memory-supersede"),
    path("events", v.EventsView.as_view(), name="api-events"),
    path("recall", v.RecallView.as_view(), name="api-recall"),
    path("context", v.ContextView.as_view(), name="api-context"),
    path("turns/<int:turn_id>", v.TurnDetailView.as_view(), name="api-turn"),
    path("scopes", views_scopes.ScopesView.as_view(), name="api-scopes"),
]
