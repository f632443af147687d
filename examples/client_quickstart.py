"""The Python client in a few lines: open the task scope, record what happened, remember a rule, and
get the context packet for the next turn.

    pip install ./clients/python
    export MEMGOV_URL=http://127.0.0.1:8000 MEMGOV_TOKEN=...      # python manage.py create_token ...
    python examples/client_quickstart.py acme/slides
"""

import sys

import memgov

project = sys.argv[1] if len(sys.argv) > 1 else "acme/slides"

with memgov.Client() as client:  # MEMGOV_URL and MEMGOV_TOKEN from the environment
    task = client.scopes.open(parent=project, name="deck-42")
    print(f"scope: {task.path} ({'opened' if task.created else 'already open'})")

    created = client.events.record(
        scope=task.path,
        session="demo-1",
        turns=[
            {
                "role": "user",
                "content": "Please render deck 42. From now on, always number the slides.",
                "ref": "u1",
            },
            {"role": "tool_call", "content": "render(deck=42)", "call_id": "call-1", "ref": "c1"},
            {"role": "tool_result", "content": "rendered 12 slides", "call_id": "call-1", "ref": "r1"},
            {"role": "assistant", "content": "Done: 12 slides.", "ref": "a1"},
        ],
    )
    print(f"recorded: {', '.join(f'{m.kind}/{m.status}' for m in created)}")

    rule = client.memories.create(
        scope=task.path,
        kind="convention",
        key="slide_font",
        text="Use the Inter font on every slide",
        source_kind="user",
        source_ref="u1",
    )
    print(f"remembered memory {rule.id}: {rule.status} (in force: {rule.in_force})")

    try:
        ctx = client.context(
            scope=task.path,
            query="render the deck again",
            budget_tokens=600,
            task={"goal": "Re-render deck 42", "state": "rendered once"},
            session="demo-1",
        )
    except memgov.PinnedOverBudget as exc:
        sys.exit(f"the pinned blocks need {exc.needed} tokens; raise the budget")
    print(f"turn {ctx.turn_id}: {ctx.budget.used}/{ctx.budget.limit} tokens ({ctx.budget.counter})")
    for slot, block in ctx.packet.blocks():
        print(f"  [{slot}] {block.status:<9} {block.text[:70]}")
    print("--- packet text ---")
    print(ctx.text)
