// The memory governance service's TypeScript client: `new MemgovClient()` reads MEMGOV_URL and
// MEMGOV_TOKEN. Tools for the Vercel AI SDK are in "memgov/ai", a LangGraph.js store in "memgov/langgraph".
export * from "./client.js";
export * from "./errors.js";
export type { components, paths } from "./schema.js";
