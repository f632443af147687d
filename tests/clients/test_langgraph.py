"""MemgovStore (LangGraph BaseStore) and the LangChain tools against the running service, and a LangGraph
graph that uses both end to end, driven by a scripted chat model (langchain-core's fake)."""

from __future__ import annotations

import asyncio

import pytest
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langgraph.config import get_store
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition

import memgov
from governance.models import Memory, Scope, Status
from governance.services.memory import MemoryInput, memory_record
from memgov.langchain import memgov_tools
from memgov.langgraph import MemgovStore
from tests.conftest import wait_for


@pytest.fixture
def rule_in_force(project_scope):
    return memory_record(
        item=MemoryInput(
            scope=project_scope,
            kind="convention",
            key="export_format",
            status="active",
            text="Export the slides as PPTX",
            source_kind="reviewer",
        ),
        actor=None,
    )


def test_store_put_is_a_governed_write_and_get_returns_what_is_in_force(
    service, agent_token, curator, token_for
):
    store = MemgovStore(service, agent_token)
    ns = ("acme", "slides")
    store.put(ns, "deadline", {"text": "The deadline is Friday"})
    item = store.get(ns, "deadline")
    assert item.value["text"] == "The deadline is Friday" and item.namespace == ns and item.key == "deadline"
    assert item.value["_memgov"]["status"] == "candidate" and item.value["_memgov"]["in_force"] is False

    memgov.Client(service, token_for(curator)).memories.confirm(item.value["_memgov"]["memory_id"])
    store.put(ns, "deadline", {"text": "The deadline is Monday"})  # the agent's next revision: a candidate
    now = store.get(ns, "deadline")
    assert now.value["text"] == "The deadline is Friday" and now.value["_memgov"]["in_force"] is True

    store.put(ns, "profile", {"name": "Ada", "team": "slides"})  # any dict round-trips as JSON
    assert {k: v for k, v in store.get(ns, "profile").value.items() if k != "_memgov"} == {
        "name": "Ada",
        "team": "slides",
    }
    assert store.get(ns, "never-written") is None


def test_store_opens_namespaces_searches_lists_and_leaves_deleting_to_people(
    service, agent_token, curator, token_for
):
    store = MemgovStore(service, agent_token)
    store.put(
        ("acme", "slides", "user-7"), "likes", {"text": "User 7 likes charts in blue", "kind": "preference"}
    )
    assert Scope.objects.filter(path="acme/slides/user-7").exists()
    assert ("acme", "slides", "user-7") in store.list_namespaces(prefix=("acme", "slides"))
    assert store.list_namespaces(prefix=("acme",), max_depth=2) == [("acme", "slides")]

    listed = store.search(("acme", "slides"))
    assert [i.key for i in listed] == ["likes"]
    found = wait_for(lambda: store.search(("acme", "slides", "user-7"), query="blue charts"), timeout=20)
    assert found[0].key == "likes" and found[0].score > 0 and found[0].value["kind"] == "preference"
    assert store.search(("acme", "slides"), filter={"kind": "semantic"}) == []

    with pytest.raises(memgov.Forbidden):  # an agent cannot retire: that is a curator's decision
        store.delete(("acme", "slides", "user-7"), "likes")
    assert store.get(("acme", "slides", "user-7"), "likes") is not None
    MemgovStore(service, token_for(curator)).delete(("acme", "slides", "user-7"), "likes")
    assert store.get(("acme", "slides", "user-7"), "likes") is None
    assert Memory.objects.get(scope__path="acme/slides/user-7", key="likes").status == Status.RETIRED


def test_store_async_methods(service, agent_token, other_workspace_scope):
    store = MemgovStore(service, agent_token)

    async def go():
        await store.aput(("acme", "slides"), "tone", {"text": "Keep a formal tone"})
        item = await store.aget(("acme", "slides"), "tone")
        listed = await store.asearch(("acme", "slides"))
        with pytest.raises(memgov.NotFound):
            await store.aput(("globex", "slides"), "x", {"text": "not mine"})
        return item, listed

    item, listed = asyncio.run(go())
    assert item.value["text"] == "Keep a formal tone" and [i.key for i in listed] == ["tone"]


def _graph(tools):
    model = FakeMessagesListChatModel(
        responses=[
            AIMessage(
                content="",
                tool_calls=[
                    {
                        "name": "get_context",
                        "args": {"query": "export the deck", "task_goal": "Export deck 42"},
                        "id": "c1",
                    },
                    {
                        "name": "remember",
                        "args": {"text": "The user wants page numbers on every slide", "kind": "preference"},
                        "id": "c2",
                    },
                ],
            ),
            AIMessage(content="Exported deck 42 as PPTX, with page numbers."),
        ]
    )

    def recall(state: MessagesState):
        hits = get_store().search(("acme", "slides"), query=state["messages"][-1].content, limit=3)
        return {"messages": [SystemMessage("Memories: " + "; ".join(h.value.get("text", "") for h in hits))]}

    def agent(state: MessagesState):
        return {"messages": [model.invoke(state["messages"])]}

    def save(state: MessagesState):
        get_store().put(("acme", "slides", "answers"), "last-answer", {"text": state["messages"][-1].content})
        return {}

    builder = StateGraph(MessagesState)
    builder.add_node("recall", recall)
    builder.add_node("agent", agent)
    builder.add_node("tools", ToolNode(tools))
    builder.add_node("save", save)
    builder.add_edge(START, "recall")
    builder.add_edge("recall", "agent")
    builder.add_conditional_edges("agent", tools_condition, {"tools": "tools", "__end__": "save"})
    builder.add_edge("tools", "agent")
    return builder


def test_a_langgraph_agent_with_the_store_and_tools_runs_end_to_end(service, agent_token, rule_in_force):
    tools = memgov_tools(url=service, token=agent_token, scope="acme/slides", budget_tokens=600)
    graph = _graph(tools).compile(store=MemgovStore(service, agent_token))
    result = graph.invoke({"messages": [HumanMessage("Please export the slides")]})

    messages = result["messages"]
    assert "Export the slides as PPTX" in messages[1].content  # the recall node searched the store
    tool_answers = {m.tool_call_id: m.content for m in messages if isinstance(m, ToolMessage)}
    assert "Constraints in force" in tool_answers["c1"] and "Export the slides as PPTX" in tool_answers["c1"]
    assert "candidate" in tool_answers["c2"] and "not in force" in tool_answers["c2"]
    assert messages[-1].content.startswith("Exported deck 42")

    remembered = Memory.objects.get(text="The user wants page numbers on every slide")
    assert remembered.status == Status.CANDIDATE and remembered.scope.path == "acme/slides"
    saved = Memory.objects.get(scope__path="acme/slides/answers", key="last-answer")
    assert saved.status == Status.CANDIDATE and saved.text.startswith("Exported deck 42")
    assert Memory.objects.get(pk=rule_in_force.pk).status == Status.ACTIVE


def test_the_same_graph_runs_async_through_the_async_client(service, agent_token, rule_in_force):
    tools = memgov_tools(url=service, token=agent_token, scope="acme/slides", budget_tokens=600)
    graph = _graph(tools).compile(store=MemgovStore(service, agent_token))
    result = asyncio.run(graph.ainvoke({"messages": [HumanMessage("Please export the slides")]}))
    tool_answers = [m.content for m in result["messages"] if isinstance(m, ToolMessage)]
    assert any("Export the slides as PPTX" in a for a in tool_answers)
    assert Memory.objects.filter(
        scope__path="acme/slides/answers", key="last-answer", status=Status.CANDIDATE
    ).exists()
