// An agent loop with the Vercel AI SDK and the memory service's tools: the model asks for the context
// packet, remembers what the user asked for (a candidate a person reviews), records the turns, and
// answers. Its model is scripted (the AI SDK's MockLanguageModelV3) so that it runs without an LLM;
// any tool-calling model goes in its place (e.g. openai("gpt-4.1") from @ai-sdk/openai).
//   MEMGOV_URL=... MEMGOV_TOKEN=... npm run example:ai -- acme/slides
import { generateText, stepCountIs } from "ai";

import { memgovTools } from "../src/ai.js";
import { scriptedModel } from "./scripted-model.js";

const scope = process.argv[2] ?? process.env.MEMGOV_SCOPE ?? "acme/slides";
const prompt = "Please export deck 42. And put page numbers on every slide from now on.";

const model = scriptedModel([
  { toolCalls: [{ toolName: "getContext", input: { query: "export deck 42", taskGoal: "Export deck 42" } }] },
  { toolCalls: [
    { toolName: "remember", input: { text: "The user wants page numbers on every slide", kind: "preference" } },
    { toolName: "recordTurns", input: { turns: [
      { role: "user", content: prompt, ref: "u1" },
      { role: "assistant", content: "Exported deck 42 as PPTX, with page numbers.", ref: "a1" }] } },
  ] },
  { text: "Exported deck 42 as PPTX (the export format in force), with page numbers." },
]);

const result = await generateText({
  model, prompt, tools: memgovTools({ scope, session: "example-session", budgetTokens: 600 }),
  stopWhen: stepCountIs(5),
});

console.log(`user: ${prompt}`);
for (const step of result.steps) {
  for (const call of step.toolCalls) console.log(`tool call: ${call.toolName}(${JSON.stringify(call.input)})`);
  for (const out of step.toolResults) {
    const value = out.output as Record<string, unknown>;
    if (out.toolName === "getContext") {
      console.log(`tool result: getContext -> ${JSON.stringify((value.constraintsInForce as unknown[]) ?? [])}`);
      console.log(`--- packet text ---\n${value.text}\n---`);
    } else {
      console.log(`tool result: ${out.toolName} -> ${JSON.stringify(value)}`);
    }
  }
}
console.log(`assistant: ${result.text}`);
console.log(`steps: ${result.steps.length}`);
