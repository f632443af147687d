"""Agent API routes (memories, events, recall, context, turns). Owned by the agent-API work."""

urlpatterns: list = []
