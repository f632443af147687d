// A LangGraph.js graph whose long-term memory is the memory service (MemgovStore): one node recalls
// what applies from the store, another saves what it learned (a candidate a person reviews).
//   MEMGOV_URL=... MEMGOV_TOKEN=... npm run example:langgraph -- acme/slides
import { Annotation, type LangGraphRunnableConfig, StateGraph } from "@langchain/langgraph";

import { MemgovStore } from "../src/langgraph.js";

const scope = process.argv[2] ?? process.env.MEMGOV_SCOPE ?? "acme/slides";
const namespace = scope.split("/");

const State = Annotation.Root({
  request: Annotation<string>(),
  memories: Annotation<string[]>(),
  answer: Annotation<string>(),
});

const graph = new StateGraph(State)
  .addNode("recall_memories", async (state, config: LangGraphRunnableConfig) => {
    const found = await config.store!.search(namespace, { query: state.request, limit: 3 });
    return { memories: found.map((i) => `${i.value.text} (${i.value._memgov.status})`) };
  })
  .addNode("respond", async (state, config: LangGraphRunnableConfig) => {
    const answer = `Exported deck 42 following: ${state.memories.join("; ")}`;
    await config.store!.put(namespace, "last_export_note", { text: "Deck 42 was exported as PPTX", kind: "semantic" });
    return { answer };
  })
  .addEdge("__start__", "recall_memories")
  .addEdge("recall_memories", "respond")
  .compile({ store: new MemgovStore() });

const out = await graph.invoke({ request: "export the deck" });
console.log(`memories: ${JSON.stringify(out.memories)}`);
console.log(`answer: ${out.answer}`);
const saved = await new MemgovStore().get(namespace, "last_export_note");
console.log(`saved: ${saved?.value.text} -> ${saved?.value._memgov.status} (in force: ${saved?.value._memgov.in_force})`);
