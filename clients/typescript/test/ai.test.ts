import assert from "node:assert/strict";
import { test } from "node:test";

import { generateText, stepCountIs } from "ai";

import { MemgovClient } from "../src/index.js";
import { memgovTools } from "../src/ai.js";
import { scriptedModel } from "../examples/scripted-model.js";
import { AGENT, fresh, OWNER, URL_ } from "./helpers.js";

test("a generateText loop uses getContext, remember and recordTurns against the service", async () => {
  const owner = new MemgovClient({ url: URL_(), token: OWNER() });
  const task = await owner.scopes.open("acme/slides", fresh("ai"));
  const rule = await owner.memories.create({ scope: task.path, kind: "convention", key: "export_format",
                                             status: "active", text: "Export the slides as PPTX" });
  const model = scriptedModel([
    { toolCalls: [{ toolName: "getContext", input: { query: "export the deck", taskGoal: "Export deck 42" } }] },
    { toolCalls: [{ toolName: "remember", input: { text: "The user wants page numbers", kind: "preference" } },
                  { toolName: "recordTurns", input: { turns: [{ role: "user", content: "Export deck 42", ref: "u1" }] } }] },
    { toolCalls: [{ toolName: "getContext", input: { query: "x" } }] },
    { text: "Done." },
  ]);
  const tools = memgovTools({ url: URL_(), token: AGENT(), scope: task.path, budgetTokens: 500, session: "s1" });
  const result = await generateText({ model, prompt: "Export deck 42", tools, stopWhen: stepCountIs(6) });
  assert.equal(result.text, "Done.");
  const outputs = result.steps.flatMap((s) => s.toolResults).map((r) => [r.toolName, r.output] as const);
  const context = outputs[0][1] as { text: string; constraintsInForce: { memoryId: number }[] };
  assert.deepEqual(context.constraintsInForce.map((b) => b.memoryId), [rule.id]);
  assert.match(context.text, /Export the slides as PPTX/);
  const remembered = outputs.find(([name]) => name === "remember")![1] as { memoryId: number; status: string };
  assert.equal(remembered.status, "candidate");
  assert.equal((await owner.memories.get(remembered.memoryId)).status, "candidate");
  const recorded = outputs.find(([name]) => name === "recordTurns")![1] as { created: { kind: string }[] };
  assert.deepEqual(recorded.created.map((m) => m.kind), ["episodic"]);
  // The model saw what it was sent: the tool results went back into its next prompt.
  const secondPrompt = JSON.stringify(model.doGenerateCalls[1].prompt);
  assert.match(secondPrompt, /Export the slides as PPTX/);
});

test("a refusal of the service is a tool error the model reads", async () => {
  const model = scriptedModel([
    { toolCalls: [{ toolName: "getContext", input: { query: "x" } }] },
    { text: "I cannot see that scope." },
  ]);
  const tools = memgovTools({ url: URL_(), token: AGENT(), scope: "globex/slides" });
  const result = await generateText({ model, prompt: "x", tools, stopWhen: stepCountIs(3) });
  const errors = result.steps.flatMap((s) => s.content).filter((c) => c.type === "tool-error");
  assert.equal(errors.length, 1);
  assert.match(String((errors[0] as { error: unknown }).error), /404 not_found.*outside the scopes this token can see/);
  assert.match(JSON.stringify(model.doGenerateCalls[1].prompt), /404 not_found/);
});
