import assert from "node:assert/strict";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { test } from "node:test";

import {
  APIConnectionError, AuthenticationFailed, Forbidden, InvalidInput, inForce, MemgovClient, MemgovError, MISSING_TOKEN,
  NotAuthenticated, NotFound, PinnedOverBudget, ServiceUnavailable, Throttled,
} from "../src/index.js";
import { AGENT, fresh, OWNER, REVIEWER, URL_ } from "./helpers.js";

const agent = () => new MemgovClient({ url: URL_(), token: AGENT() });
const reviewer = () => new MemgovClient({ url: URL_(), token: REVIEWER() });
const owner = () => new MemgovClient({ url: URL_(), token: OWNER() });

test("an agent's write is a candidate; a reviewer confirms it and the packet has it in force", async () => {
  const task = await agent().scopes.open("acme/slides", fresh("deck"));
  assert.equal(task.created, true);
  const written = await agent().memories.create({
    scope: task.path, kind: "convention", key: "export_format", text: "Export the slides as PDF",
    source: { kind: "user", ref: "t1" },
  });
  assert.equal(written.status, "candidate");
  assert.equal(inForce(written), false);
  assert.equal((await agent().memories.get(written.id)).text, "Export the slides as PDF");

  const state = await reviewer().memories.confirm(written.id, "the user said so");
  assert.equal(state.status, "active");

  const ctx = await agent().context({ scope: task.path, query: "which format do we export?", budget_tokens: 400,
                                      task: "Export deck 42", session: "s1" });
  assert.deepEqual(ctx.packet.constraints.map((b) => b.memory_id), [written.id]);
  assert.match(ctx.text, /## Constraints in force\n- Export the slides as PDF \[export_format r1\]/);
  assert.ok(ctx.budget.used > 0 && ctx.budget.used <= 400);
  const turn = await agent().turns.get(ctx.turn_id!);
  assert.equal(turn.text, ctx.text);
});

test("events, recall, scopes and the memory list", async () => {
  const task = await agent().scopes.open("acme/slides", fresh("events"));
  const created = await agent().events.record({ scope: task.path, session: "s1", turns: [
    { role: "user", content: "From now on, always number the slides.", ref: "u1" },
    { role: "assistant", content: "Numbered.", ref: "a1" },
  ] });
  // The answer lists the episodes only (it must not tell which sentence went unextracted because its text
  // was forgotten); the extracted candidate is in the memory list below.
  assert.deepEqual(created.map((m) => m.kind), ["episodic", "episodic"]);
  const again = await agent().events.record({ scope: task.path, session: "s1", turns: [
    { role: "user", content: "From now on, always number the slides.", ref: "u1" }] });
  assert.deepEqual(again, []);
  const hits = await agent().recall({ scope: task.path, query: "number the slides", k: 5 });
  assert.ok(hits.some((h) => h.text.includes("number the slides")));
  const paths = (await agent().scopes.list()).map((s) => s.path);
  assert.ok(paths.includes("acme/slides") && paths.includes(task.path));
  const page = await agent().memories.list({ scope: task.path });
  assert.ok(page.results.length >= 3);
  // A standing instruction would last beyond its session: it waits in the review queue at once.
  assert.ok(page.results.some((m) => m.status === "proposed" && m.text.includes("number the slides")),
            "the standing instruction waits for review");
});

test("each error code is its own class, with the status and body", async () => {
  await assert.rejects(agent().recall({ scope: "globex/slides", query: "x" }), (e: unknown) =>
    e instanceof NotFound && e.status === 404 && e.code === "not_found");
  const written = await agent().memories.create({ scope: "acme/slides", text: "x", status: "proposed",
                                                  kind: "convention" });
  await assert.rejects(agent().memories.confirm(written.id), (e: unknown) =>
    e instanceof Forbidden && e.status === 403);
  await assert.rejects(agent().memories.create({ scope: "acme/slides", text: "" }), (e: unknown) =>
    e instanceof InvalidInput && "text" in e.fields);
  await assert.rejects(new MemgovClient({ url: URL_(), token: "mem_unknown" }).scopes.list(), (e: unknown) =>
    e instanceof AuthenticationFailed && e instanceof NotAuthenticated && e.status === 401);
  const task = await owner().scopes.open("acme/slides", fresh("pinned"));
  await owner().memories.create({ scope: task.path, kind: "convention", key: "long", status: "active",
                                  text: "A rule in force that takes more than three tokens to say" });
  await assert.rejects(agent().context({ scope: task.path, query: "x", budget_tokens: 3 }), (e: unknown) =>
    e instanceof PinnedOverBudget && (e.needed ?? 0) > 3 && e.budget === 3 && e instanceof MemgovError);
  await assert.rejects(new MemgovClient({ url: "http://127.0.0.1:9", token: "x", maxRetries: 1, backoffMs: 1 })
    .scopes.list(), (e: unknown) => e instanceof APIConnectionError && !e.timeout);
});

test("governance: review queue, grants, tokens, export and import", async () => {
  const task = await owner().scopes.open("acme/slides", fresh("gov"));
  const proposal = await agent().memories.create({ scope: task.path, text: "Never use slide transitions",
                                                   kind: "convention", status: "proposed" });
  const queue = await reviewer().review.queue(task.path);
  assert.deepEqual(queue.map((i) => i.memory.id), [proposal.id]);
  assert.equal((await reviewer().memories.reject(proposal.id, "not wanted")).status, "rejected");

  const grant = await owner().grants.add({ principal: "slides-agent", scope: task.path, role: "viewer" });
  assert.ok((await owner().grants.list(task.path)).some((g) => g.id === grant.id));
  await owner().grants.revoke(grant.id, "done");

  const issued = await owner().tokens.issue({ principal: "slides-agent", scope: task.path });
  const mine = (await owner().tokens.list(true)).find((t) => issued.token.slice(4, 12) === t.prefix);
  assert.ok(mine, "the new token is listed");
  assert.ok((await new MemgovClient({ url: URL_(), token: issued.token }).scopes.list()).length >= 1);
  await owner().tokens.revoke(mine!.id, "done");
  await assert.rejects(new MemgovClient({ url: URL_(), token: issued.token }).scopes.list(), NotAuthenticated);

  await owner().memories.create({ scope: task.path, kind: "convention", key: "export_format", status: "active",
                                  text: "Export the slides as PPTX" });
  const lines = await owner().scopes.export(task.id);
  assert.equal(lines[0].type, "header");
  assert.equal(lines[lines.length - 1].type, "end");
  const memories = lines.filter((l) => l.type === "memory");
  assert.ok(memories.some((m) => m.type === "memory" && m.text === "Export the slides as PPTX" && m.status === "active"));
  const parent = (await owner().scopes.list()).find((s) => s.path === "acme")!;
  const text = await owner().scopes.exportText(task.id);
  const preview = await owner().scopes.import(parent.id, text, { name: fresh("copy"), preview: true });
  assert.equal(preview.preview, true);
  assert.equal(preview.counts.memories, memories.length);
  await assert.rejects(agent().scopes.export(task.id), (e: unknown) => e instanceof NotFound || e instanceof Forbidden);
});

test("URL and token come from MEMGOV_URL and MEMGOV_TOKEN", async () => {
  const client = new MemgovClient();
  assert.equal(client.baseUrl, URL_().replace(/\/$/, "") + "/api/v1");
  assert.ok((await client.scopes.list()).length >= 1);
  const saved = process.env.MEMGOV_TOKEN;
  delete process.env.MEMGOV_TOKEN;
  try {
    assert.throws(() => new MemgovClient(), { message: MISSING_TOKEN });
  } finally {
    process.env.MEMGOV_TOKEN = saved;
  }
});

/** A real HTTP server that answers what the test scripts (the service cannot be made to throttle on demand). */
async function scripted(answers: Array<{ status: number; headers?: Record<string, string>; body?: unknown }>) {
  const seen: number[] = [];
  const keys: Array<string | undefined> = [];
  const server = createServer((request, response) => {
    seen.push(Date.now());
    keys.push(request.headers["idempotency-key"] as string | undefined);
    const answer = answers[Math.min(seen.length - 1, answers.length - 1)];
    response.writeHead(answer.status, { "Content-Type": "application/json", ...(answer.headers ?? {}) });
    response.end(JSON.stringify(answer.body ?? {}));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, seen, keys, close: () => new Promise((resolve) => server.close(resolve)) };
}

test("429 and 503 are retried, waiting what Retry-After says", async () => {
  const server = await scripted([
    { status: 429, headers: { "Retry-After": "1" }, body: { error: "throttled", message: "slow down" } },
    { status: 503, headers: { "Retry-After": "0" }, body: { error: "service_unavailable", message: "busy" } },
    { status: 200, body: [{ id: 1, path: "acme" }] },
  ]);
  try {
    const scopes = await new MemgovClient({ url: server.url, token: "t" }).scopes.list();
    assert.deepEqual(scopes.map((s) => s.path), ["acme"]);
    assert.equal(server.seen.length, 3);
    assert.ok(server.seen[1] - server.seen[0] >= 950, `waited ${server.seen[1] - server.seen[0]} ms, not 1 s`);
  } finally {
    await server.close();
  }
});

test("a write sends one Idempotency-Key, the same on its retry; reads send none; it can be turned off", async () => {
  const server = await scripted([
    { status: 503, headers: { "Retry-After": "0" }, body: { error: "service_unavailable", message: "busy" } },
    { status: 201, body: { id: 1, text: "x" } },
  ]);
  try {
    const client = new MemgovClient({ url: server.url, token: "t" });
    await client.memories.create({ scope: "a", text: "x" });
    assert.equal(server.keys.length, 2);
    assert.match(server.keys[0] ?? "", /^[0-9a-f-]{36}$/);
    assert.equal(server.keys[1], server.keys[0], "the retry is the same request: the same key");
    await client.memories.create({ scope: "a", text: "x" });
    assert.notEqual(server.keys[2], server.keys[0], "a new call is a new request: a new key");
    await client.request({ method: "GET", path: "/memories" });
    assert.equal(server.keys[3], undefined);
    await client.request({ method: "POST", path: "/recall", json: { scope: "a", query: "q" } });
    assert.equal(server.keys[4], undefined, "a read sent as POST carries no key");
    await new MemgovClient({ url: server.url, token: "t", idempotencyKeys: false }).memories.create({ scope: "a", text: "x" });
    assert.equal(server.keys[5], undefined);
  } finally {
    await server.close();
  }
});

test("after the retries the error says so; Retry-After is capped; other errors are not retried", async () => {
  const throttled = await scripted([{ status: 429, headers: { "Retry-After": "120" },
                                      body: { error: "throttled", message: "slow down" } }]);
  try {
    const started = Date.now();
    await assert.rejects(new MemgovClient({ url: throttled.url, token: "t", maxRetries: 2, maxBackoffMs: 50 })
      .scopes.list(), (e: unknown) => e instanceof Throttled && e.retryAfter === 120);
    assert.equal(throttled.seen.length, 3);
    assert.ok(Date.now() - started < 5000, "the 120 s Retry-After was capped at maxBackoffMs");
  } finally {
    await throttled.close();
  }
  const unavailable = await scripted([{ status: 503, body: { error: "service_unavailable", message: "busy" } }]);
  try {
    await assert.rejects(new MemgovClient({ url: unavailable.url, token: "t", maxRetries: 1, backoffMs: 1 })
      .scopes.list(), ServiceUnavailable);
    assert.equal(unavailable.seen.length, 2);
  } finally {
    await unavailable.close();
  }
  const refused = await scripted([{ status: 403, body: { error: "permission_denied", message: "no" } }]);
  try {
    await assert.rejects(new MemgovClient({ url: refused.url, token: "t" }).memories.create({ scope: "a", text: "x" }),
                         Forbidden);
    assert.equal(refused.seen.length, 1, "a write that reached the service is never sent twice");
  } finally {
    await refused.close();
  }
});
