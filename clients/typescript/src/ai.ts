// Tools for the Vercel AI SDK: getContext (the packet for this turn), remember (a candidate a person
// reviews) and recordTurns (what was said and done). Pass them to generateText/streamText:
//   const tools = memgovTools({ scope: "acme/slides" });
//   await generateText({ model, tools, stopWhen: stepCountIs(5), prompt });
// A refusal of the service is thrown as an Error the model reads (the SDK sends it as the tool's error).
import { tool } from "ai";
import { z } from "zod";

import { type ClientOptions, MemgovClient } from "./client.js";
import { MemgovError, NotFound } from "./errors.js";

export const NOT_FOUND_HINT = "It does not exist, or it is outside the scopes this token can see.";

export interface MemgovToolsOptions extends ClientOptions {
  client?: MemgovClient;
  /** The scope the tools read and write, e.g. "acme/slides/deck-42". */
  scope: string;
  /** Token budget of getContext (default 1500). */
  budgetTokens?: number;
  /** The session: its recent turns, its overrides, and where recordTurns records (default "default"). */
  session?: string;
}

function refusal(error: unknown): never {
  if (error instanceof MemgovError) {
    const hint = error instanceof NotFound ? ` ${NOT_FOUND_HINT}` : "";
    throw new Error(`The memory service refused this (${error.status} ${error.code}): ${error.message}${hint}`);
  }
  throw error;
}

const KINDS = ["semantic", "preference", "convention", "method", "stage_fact", "external"] as const;
const ROLES = ["user", "assistant", "system", "tool_call", "tool_result"] as const;

export function memgovTools(options: MemgovToolsOptions) {
  const client = options.client ?? new MemgovClient(options);
  const { scope } = options;
  const session = options.session ?? "default";
  return {
    getContext: tool({
      description:
        "Get the context packet for this turn: the memories that apply to `query`. Rely on `text`. " +
        "constraints = IN FORCE (confirmed by a person; follow them); noLongerInForce = NOT in force (never act " +
        "on them; each says what replaced it); evidence = supporting memories, where candidates are unconfirmed " +
        "(not facts). Give `taskGoal` to pin the current task.",
      inputSchema: z.object({
        query: z.string().describe("The user's request, or what you need to know."),
        taskGoal: z.string().optional().describe("The current task's goal."),
      }),
      execute: async ({ query, taskGoal }) => {
        try {
          const ctx = await client.context({ scope, query, session, budget_tokens: options.budgetTokens ?? 1500,
                                             task: taskGoal ? { goal: taskGoal } : undefined });
          const brief = (b: { memory_id?: number | null; status: string; text: string }) =>
            ({ memoryId: b.memory_id ?? null, status: b.status, text: b.text });
          return {
            text: ctx.text, turnId: ctx.turn_id,
            constraintsInForce: ctx.packet.constraints.map(brief),
            noLongerInForce: ctx.packet.negative.map((b) => ({ ...brief(b), replacedBy: b.replaced_by ?? null })),
            evidence: ctx.packet.evidence.map(brief),
            budget: { limit: ctx.budget.limit, used: ctx.budget.used },
          };
        } catch (error) {
          return refusal(error);
        }
      },
    }),
    remember: tool({
      description:
        "Remember something for later turns. It is stored as a CANDIDATE that a person reviews, never as a " +
        "rule in force. kind: semantic (a fact), preference, convention (a standing rule), method, stage_fact, " +
        "external. A `key` (e.g. export_format) makes it a keyed fact.",
      inputSchema: z.object({
        text: z.string(),
        kind: z.enum(KINDS).default("semantic"),
        key: z.string().optional(),
      }),
      execute: async ({ text, kind, key }) => {
        try {
          const memory = await client.memories.create({ scope, text, kind, key, status: "candidate",
                                                        source: { kind: "user", ref: `session:${session}` } });
          return { memoryId: memory.id, status: memory.status, inForce: memory.status === "active",
                   note: "Stored as an unconfirmed candidate; not in force until a person confirms it." };
        } catch (error) {
          return refusal(error);
        }
      },
    }),
    recordTurns: tool({
      description:
        "Record the turns of this interaction as episodic memory, in order. A tool call and its result share " +
        "a call_id. Standing instructions in user turns become candidates for review. A re-sent ref adds nothing.",
      inputSchema: z.object({
        turns: z.array(z.object({
          role: z.enum(ROLES), content: z.string(), ref: z.string().optional(), call_id: z.string().optional(),
        })).min(1),
      }),
      execute: async ({ turns }) => {
        try {
          const created = await client.events.record({ scope, session, turns });
          return { created: created.map((m) => ({ memoryId: m.id, kind: m.kind, status: m.status })) };
        } catch (error) {
          return refusal(error);
        }
      },
    }),
  };
}
