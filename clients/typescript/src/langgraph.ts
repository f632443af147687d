// A LangGraph.js store over the memory service: namespace ["acme", "slides"] is scope "acme/slides",
// an item key is a memory key. `put` is the governed write (a candidate for an agent's token); `get`
// returns the revision in force, else the newest unconfirmed one; `search` is recall in that scope;
// `delete` asks to retire the memory (people decide: an agent's token gets Forbidden).
import {
  BaseStore, type GetOperation, type Item, type ListNamespacesOperation, type MatchCondition, type Operation,
  type OperationResults, type PutOperation, type SearchOperation,
} from "@langchain/langgraph";

import { type ClientOptions, type Memory, type MemoryCreate, MemgovClient } from "./client.js";
import { NotFound } from "./errors.js";

const LIVE = ["active", "proposed", "candidate"]; // what a store read may return, in order of preference
export const META = "_memgov";
const UNKEYED_PREFIX = "memory-";
const DELETE_REASON = "Deleted through the LangGraph store.";

type SearchItem = Item & { score?: number };

export interface MemgovStoreOptions extends ClientOptions {
  client?: MemgovClient;
  /** The kind of memory a put writes when the value does not say (default semantic). */
  kind?: MemoryCreate["kind"];
  deleteMode?: "retire" | "forget";
  /** Open a missing namespace's scope through POST /scopes when the token may (default true). */
  openScopes?: boolean;
}

const path = (namespace: string[]) => namespace.join("/");
const namespaceOf = (scope: string) => scope.split("/");

function textOf(value: Record<string, unknown>): [string, string | undefined] {
  const rest = Object.fromEntries(Object.entries(value).filter(([k]) => k !== META));
  const keys = Object.keys(rest);
  if (typeof rest.text === "string" && keys.every((k) => k === "text" || k === "kind")) {
    return [rest.text, typeof rest.kind === "string" ? rest.kind : undefined];
  }
  return [JSON.stringify(Object.fromEntries(keys.sort().map((k) => [k, rest[k]]))), undefined];
}

function valueOf(memory: Memory): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(memory.text);
  } catch {
    parsed = undefined;
  }
  const value = parsed && typeof parsed === "object" && !Array.isArray(parsed)
    ? (parsed as Record<string, unknown>) : { text: memory.text, kind: memory.kind };
  return { ...value, [META]: { memory_id: memory.id, status: memory.status, revision: memory.revision,
                               in_force: memory.status === "active" } };
}

function itemOf(memory: Memory, score?: number): SearchItem {
  const at = memory.created_at ? new Date(memory.created_at) : new Date();
  return { namespace: namespaceOf(memory.scope), key: memory.key ? memory.key : `${UNKEYED_PREFIX}${memory.id}`,
           value: valueOf(memory), createdAt: at, updatedAt: at, ...(score === undefined ? {} : { score }) };
}

function matches(value: Record<string, unknown>, filter?: Record<string, unknown>): boolean {
  return !filter || Object.entries(filter).every(([k, v]) => JSON.stringify(value[k]) === JSON.stringify(v));
}

function namespaceMatches(ns: string[], cond: MatchCondition): boolean {
  const want = cond.path;
  if (want.length > ns.length) return false;
  const part = cond.matchType === "prefix" ? ns.slice(0, want.length) : ns.slice(ns.length - want.length);
  return want.every((p, i) => p === "*" || p === part[i]);
}

export class MemgovStore extends BaseStore {
  readonly client: MemgovClient;
  readonly kind: NonNullable<MemoryCreate["kind"]>;
  readonly deleteMode: "retire" | "forget";
  readonly openScopes: boolean;

  constructor(options: MemgovStoreOptions = {}) {
    super();
    this.client = options.client ?? new MemgovClient(options);
    this.kind = options.kind ?? "semantic";
    this.deleteMode = options.deleteMode ?? "retire";
    this.openScopes = options.openScopes ?? true;
  }

  async batch<Op extends Operation[]>(operations: Op): Promise<OperationResults<Op>> {
    const results = [];
    for (const op of operations) results.push(await this.#apply(op));
    return results as OperationResults<Op>;
  }

  async #apply(op: Operation): Promise<unknown> {
    if ("namespacePrefix" in op) return this.#search(op as SearchOperation);
    if ("value" in op) {
      const put = op as PutOperation;
      return put.value === null ? this.#delete(put.namespace, put.key) : this.#put(put.namespace, put.key, put.value);
    }
    if ("key" in op) {
      const found = await this.#find((op as GetOperation).namespace, (op as GetOperation).key);
      return found ? itemOf(found) : null;
    }
    return this.#listNamespaces(op as ListNamespacesOperation);
  }

  async #find(namespace: string[], key: string): Promise<Memory | null> {
    const scope = path(namespace);
    const byId = key.startsWith(UNKEYED_PREFIX) ? key.slice(UNKEYED_PREFIX.length) : "";
    try {
      if (/^\d+$/.test(byId)) {
        const found = await this.client.memories.get(Number(byId));
        return found.scope === scope && LIVE.includes(found.status) ? found : null;
      }
      const page = await this.client.memories.list({ scope, key });
      const rows = page.results.filter((m) => m.scope === scope && m.key === key && LIVE.includes(m.status));
      rows.sort((a, b) => LIVE.indexOf(a.status) - LIVE.indexOf(b.status) || b.revision - a.revision);
      return rows[0] ?? null;
    } catch (error) {
      if (error instanceof NotFound) return null;
      throw error;
    }
  }

  async #put(namespace: string[], key: string, value: Record<string, unknown>): Promise<void> {
    const [text, kind] = textOf(value);
    const write = { scope: path(namespace), text, key, kind: (kind ?? this.kind) as MemoryCreate["kind"],
                    source: { kind: "model_inference" as const, ref: "langgraph-store" } };
    try {
      await this.client.memories.create(write);
    } catch (error) {
      if (!(error instanceof NotFound) || !this.openScopes || namespace.length < 2) throw error;
      await this.#open(namespace);
      await this.client.memories.create(write);
    }
  }

  async #open(namespace: string[]): Promise<void> {
    try {
      await this.client.scopes.open(path(namespace.slice(0, -1)), namespace[namespace.length - 1]);
    } catch (error) {
      if (!(error instanceof NotFound) || namespace.length < 3) throw error;
      await this.#open(namespace.slice(0, -1));
      await this.client.scopes.open(path(namespace.slice(0, -1)), namespace[namespace.length - 1]);
    }
  }

  async #delete(namespace: string[], key: string): Promise<void> {
    const found = await this.#find(namespace, key);
    if (!found) return;
    if (this.deleteMode === "forget") await this.client.memories.forget(found.id, DELETE_REASON, "soft");
    else await this.client.memories.retire(found.id, DELETE_REASON);
  }

  async #search(op: SearchOperation): Promise<SearchItem[]> {
    const scope = path(op.namespacePrefix);
    const offset = op.offset ?? 0;
    const limit = op.limit ?? 10;
    const wanted = offset + limit;
    let found: SearchItem[] = [];
    try {
      if (op.query) {
        const hits = await this.client.recall({ scope, query: op.query,
                                                k: Math.min(100, Math.max(1, op.filter ? wanted * 2 : wanted)) });
        for (const hit of hits) found.push(itemOf(await this.client.memories.get(hit.memory_id), hit.score));
      } else {
        for (let page = 1; found.length < wanted * (op.filter ? 3 : 1); page++) {
          const answer = await this.client.memories.list({ scope, page });
          found = found.concat(answer.results.filter((m) => LIVE.includes(m.status)).map((m) => itemOf(m)));
          if (!answer.next) break;
        }
      }
    } catch (error) {
      if (error instanceof NotFound) return [];
      throw error;
    }
    return found.filter((item) => matches(item.value, op.filter)).slice(offset, offset + limit);
  }

  async #listNamespaces(op: ListNamespacesOperation): Promise<string[][]> {
    let spaces = (await this.client.scopes.list()).map((s) => namespaceOf(s.path));
    for (const cond of op.matchConditions ?? []) spaces = spaces.filter((ns) => namespaceMatches(ns, cond));
    if (op.maxDepth !== undefined) spaces = spaces.map((ns) => ns.slice(0, op.maxDepth));
    const unique = [...new Set(spaces.map((ns) => ns.join("\u0000")))].sort().map((s) => s.split("\u0000"));
    return unique.slice(op.offset, op.offset + op.limit);
  }
}
