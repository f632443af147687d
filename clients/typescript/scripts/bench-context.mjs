// The same /context request N times through MemgovClient (after `npm run build`); prints the times in ms
// as JSON for benchmarks/bench_clients.py. MEMGOV_URL, MEMGOV_TOKEN, MEMGOV_SCOPE.
import { MemgovClient } from "../dist/src/index.js";

const n = Number(process.argv[2] ?? 30);
const client = new MemgovClient();
const body = { scope: process.env.MEMGOV_SCOPE ?? "acme/slides", query: "how do we export the deck?", budget_tokens: 600 };
await client.context(body);
const out = [];
for (let i = 0; i < n; i++) {
  const started = performance.now();
  await client.context(body);
  out.push(performance.now() - started);
}
console.log(JSON.stringify(out));
