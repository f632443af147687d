"""A LangGraph agent whose long-term memory is the governed service: the graph's store is MemgovStore
and the model has the get_context and remember tools. The chat model here is scripted (langchain-core's
fake model) so the example runs without an LLM; put any tool-calling chat model in its place.

    pip install "./clients/python[langgraph]"
    export MEMGOV_URL=http://127.0.0.1:8000 MEMGOV_TOKEN=...
    python examples/langgraph_agent.py acme/slides
"""

import sys

from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from langgraph.config import get_store
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition

from memgov.langchain import memgov_tools
from memgov.langgraph import MemgovStore

scope = sys.argv[1] if len(sys.argv) > 1 else "acme/slides"
namespace = tuple(scope.split("/"))

tools = memgov_tools(scope=scope, budget_tokens=600)
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
        AIMessage(content="Exported deck 42 following the rules in force, with page numbers."),
    ]
)


def recall(state: MessagesState):
    hits = get_store().search(namespace, query=state["messages"][-1].content, limit=3)
    return {
        "messages": [SystemMessage("Memories: " + "; ".join(h.value.get("text", str(h.value)) for h in hits))]
    }


def agent(state: MessagesState):
    return {"messages": [model.invoke(state["messages"])]}


def save(state: MessagesState):
    get_store().put(namespace + ("answers",), "last-answer", {"text": state["messages"][-1].content})
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
store = MemgovStore()
graph = builder.compile(store=store)

result = graph.invoke({"messages": [HumanMessage("Please export the slides")]})
for message in result["messages"]:
    print(f"{message.type:>6}: {message.content or message.tool_calls}")
saved = store.get(namespace + ("answers",), "last-answer")
print(f"stored answer: {saved.value['_memgov']['status']} (in force: {saved.value['_memgov']['in_force']})")
