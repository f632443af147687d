from governance.recall import assemble_context, recall_memories


def test_recall_finds_a_matching_memory_in_scope(project_scope, agent, remember):
    hit = remember(project_scope, "Slides are exported as PDF for the client")
    remember(project_scope, "The team lunch is on Friday")
    results = recall_memories(principal=agent, scope=project_scope, query="which export format?", k=5)
    assert results[0]["memory_id"] == hit.pk
    packet = assemble_context(principal=agent, scope=project_scope, query="export format", budget_tokens=500)
    assert packet["turn_id"]
    print(packet["text"], packet["trace"])
