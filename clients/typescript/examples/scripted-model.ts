// A scripted model for examples and tests: each call of the model answers the next step of a script,
// tool calls or text, through the AI SDK's own MockLanguageModelV3 (from "ai/test"). Any tool-calling
// model from an AI SDK provider goes in its place.
import { MockLanguageModelV3 } from "ai/test";

export type ScriptedStep =
  | { toolCalls: Array<{ toolName: string; input: Record<string, unknown> }> }
  | { text: string };

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 10, text: 10, reasoning: 0 },
};

export function scriptedModel(steps: ScriptedStep[]): MockLanguageModelV3 {
  let call = 0;
  return new MockLanguageModelV3({
    doGenerate: async () => {
      const step = steps[Math.min(call, steps.length - 1)];
      const n = call++;
      if ("text" in step) {
        return { content: [{ type: "text", text: step.text }], finishReason: { unified: "stop", raw: "stop" },
                 usage, warnings: [] };
      }
      return {
        content: step.toolCalls.map((c, i) => ({ type: "tool-call" as const, toolCallId: `call-${n}-${i}`,
                                                 toolName: c.toolName, input: JSON.stringify(c.input) })),
        finishReason: { unified: "tool-calls", raw: "tool_calls" }, usage, warnings: [],
      };
    },
  });
}
