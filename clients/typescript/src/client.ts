// MemgovClient: the memory governance API over `fetch`, typed from the service's OpenAPI document
// (src/schema.ts, generated). Every call goes through the same API and token as any other: what a
// token may do is decided by the service.

import { APIConnectionError, errorFor, Throttled } from "./errors.js";
import type { components } from "./schema.js";

type S = components["schemas"];
export type Memory = S["MemoryOutput"];
export type MemoryPage = S["MemoryPageOutput"];
export type MemoryState = S["MemoryStateOutput"];
export type ForgetResult = S["ForgetOutput"];
export type RecallHit = S["RecallItemOutput"];
export type Context = S["ContextOutput"];
export type Packet = S["PacketOutput"];
export type Block = S["BlockOutput"];
export type Turn = S["TurnOutput"];
export type Scope = S["ScopeOutput"];
export type ScopeCreated = S["ScopeCreatedOutput"];
export type ReviewItem = S["ReviewItemOutput"];
export type Grant = S["GrantOutput"];
export type IssuedToken = S["TokenIssuedOutput"];
export type TokenInfo = S["TokenOutput"];
export type Relation = S["RelationOutput"];
export type ImportResult = S["ScopeImportOutput"];
export type ExportLine = S["ExportLine"];
export type TurnInput = S["TurnInputRequest"];
/** A memory to write: `kind` defaults to semantic, `source` to a model inference. */
export type MemoryCreate = Omit<S["MemoryCreateInputRequest"], "source" | "kind"> & {
  kind?: S["MemoryCreateInputRequest"]["kind"];
  source?: S["SourceInputRequest"];
};
export type ContextRequest = Omit<S["ContextInputRequest"], "task"> & { task?: S["TaskInputRequest"] | string };
export type RecallRequest = S["RecallInputRequest"];

export const USER_AGENT = "memgov-typescript/0.1";
export const MISSING_URL = "No service URL: pass { url } or set MEMGOV_URL (e.g. http://127.0.0.1:8000).";
export const MISSING_TOKEN = "No API token: pass { token } or set MEMGOV_TOKEN (see `manage.py create_token`).";
const RETRY_STATUSES = new Set([429, 503]);
// Failures before a request reached the service: safe to retry for every method.
const RETRYABLE_CONNECT = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "UND_ERR_CONNECT_TIMEOUT"]);

export interface ClientOptions {
  /** The service, e.g. http://127.0.0.1:8000 (default: MEMGOV_URL). */
  url?: string;
  /** An API token (default: MEMGOV_TOKEN). */
  token?: string;
  /** Per request (default 30 s, MEMGOV_TIMEOUT in seconds). */
  timeoutMs?: number;
  /** Retries of 429, 503 and a refused connection (default 3). */
  maxRetries?: number;
  /** First backoff when the answer has no Retry-After (default 500 ms; exponential, full jitter). */
  backoffMs?: number;
  /** Cap of any wait, Retry-After included (default 30 s). */
  maxBackoffMs?: number;
  /** Another fetch (a test's, a proxy's). */
  fetch?: typeof fetch;
  /** Send a fresh `Idempotency-Key` with every write (POST, PUT, PATCH, DELETE), the same one on each of
   * its retries, so a retried write is stored once (default true; docs/api.md, "Idempotency keys"). */
  idempotencyKeys?: boolean;
}

const WRITE_METHODS = new Set(["POST", "PUT", "PATCH", "DELETE"]);
// Reads sent as POST (their bodies are questions): no automatic key, so the service answers them as reads
// (a replica may serve them; nothing is stored for a replay). A retried /context stores its turn again.
const POST_READS = new Set(["/recall", "/context"]);

type Query = Record<string, string | number | boolean | undefined | null>;
interface Call {
  method: string;
  path: string;
  json?: unknown;
  query?: Query;
  form?: FormData;
  text?: boolean;
  /** This write's Idempotency-Key (default: a fresh UUID when the client sends keys). */
  idempotencyKey?: string;
}

function env(name: string): string | undefined {
  const value = typeof process !== "undefined" ? process.env?.[name] : undefined;
  return value ? value : undefined;
}

function clean<T extends Record<string, unknown>>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined && v !== null)) as T;
}

/** Seconds from a Retry-After header (a number or an HTTP date), or undefined. */
export function retryAfterSeconds(header: string | null): number | undefined {
  if (!header) return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds)) return Math.max(0, seconds);
  const when = Date.parse(header);
  return Number.isNaN(when) ? undefined : Math.max(0, (when - Date.now()) / 1000);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export class MemgovClient {
  readonly baseUrl: string;
  readonly timeoutMs: number;
  readonly maxRetries: number;
  readonly backoffMs: number;
  readonly maxBackoffMs: number;
  readonly idempotencyKeys: boolean;
  readonly #token: string;
  readonly #fetch: typeof fetch;

  readonly memories = {
    /** Write a memory. Without `status` an agent's write is a candidate; `active` needs the confirm right. */
    create: (body: MemoryCreate) =>
      this.request<Memory>({ method: "POST", path: "/memories", json: clean({ kind: "semantic", source: { kind: "model_inference", ref: "" }, ...body }) }),
    get: (id: number) => this.request<Memory>({ method: "GET", path: `/memories/${int(id)}` }),
    /** One page (50) of the memories the token can see, newest first. */
    list: (query: { scope?: string; status?: string; kind?: string; key?: string; q?: string; page?: number } = {}) =>
      this.request<MemoryPage>({ method: "GET", path: "/memories", query }),
    supersede: (id: number, body: S["SupersedeInputRequest"]) =>
      this.request<Memory>({ method: "POST", path: `/memories/${int(id)}/supersede`, json: body }),
    confirm: (id: number, reason = "") =>
      this.request<MemoryState>({ method: "POST", path: `/memories/${int(id)}/confirm`, json: { reason } }),
    reject: (id: number, reason: string) =>
      this.request<MemoryState>({ method: "POST", path: `/memories/${int(id)}/reject`, json: { reason } }),
    retire: (id: number, reason: string) =>
      this.request<MemoryState>({ method: "POST", path: `/memories/${int(id)}/retire`, json: { reason } }),
    /** Out of every read at once; `hard` also purges the text (owner). */
    forget: (id: number, reason: string, mode: "soft" | "hard" = "soft") =>
      this.request<ForgetResult>({ method: "POST", path: `/memories/${int(id)}/forget`, json: { mode, reason } }),
  };

  readonly events = {
    /** Record one interaction; returns the episodic memories and the candidates extracted from it. */
    record: async (body: { scope: string; session: string; turns: TurnInput[]; at?: string }) =>
      (await this.request<S["EventOutput"]>({ method: "POST", path: "/events", json: clean(body) })).created,
  };

  readonly turns = {
    get: (id: number) => this.request<Turn>({ method: "GET", path: `/turns/${int(id)}` }),
  };

  readonly scopes = {
    /** Open (or re-open) the child scope `name` under `parent`; `created` says which. */
    open: (parent: string, name: string) =>
      this.request<ScopeCreated>({ method: "POST", path: "/scopes", json: { parent, name } }),
    list: (under?: string) => this.request<Scope[]>({ method: "GET", path: "/scopes", query: { under } }),
    /** The scope's subtree as JSON lines (curators and owners). */
    exportText: (scopeId: number) =>
      this.request<string>({ method: "GET", path: `/scopes/${int(scopeId)}/export`, text: true }),
    /** The same, parsed: one ExportLine per line. */
    export: async (scopeId: number): Promise<ExportLine[]> =>
      (await this.scopes.exportText(scopeId)).split("\n").filter(Boolean).map((line) => JSON.parse(line)),
    /** Import an export file into scope `scopeId` (or a new child `name` of it); owners of the target. */
    import: (scopeId: number, content: string | Uint8Array,
             options: { name?: string; grants?: "drop" | "keep"; preview?: boolean } = {}) => {
      const form = new FormData();
      form.set("file", new Blob([content as BlobPart], { type: "application/x-ndjson" }), "export.jsonl");
      if (options.name) form.set("name", options.name);
      form.set("grants", options.grants ?? "drop");
      form.set("preview", options.preview ? "true" : "false");
      return this.request<ImportResult>({ method: "POST", path: `/scopes/${int(scopeId)}/import`, form });
    },
  };

  readonly review = {
    queue: (scope?: string) => this.request<ReviewItem[]>({ method: "GET", path: "/review", query: { scope } }),
  };

  readonly relations = {
    link: (body: S["RelationCreateInputRequest"]) =>
      this.request<Relation>({ method: "POST", path: "/relations", json: body }),
    unlink: (id: number, reason: string) =>
      this.request<Relation>({ method: "DELETE", path: `/relations/${int(id)}`, json: { reason } }),
  };

  readonly promotions = {
    request: (body: S["PromotionRequestInputRequest"]) =>
      this.request<Memory>({ method: "POST", path: "/promotions", json: body }),
  };

  readonly grants = {
    list: (scope?: string) => this.request<Grant[]>({ method: "GET", path: "/grants", query: { scope } }),
    add: (body: S["GrantInputRequest"]) => this.request<Grant>({ method: "POST", path: "/grants", json: body }),
    /** Take a grant away; the reason is required (kept in the audit event; an empty one is a 400). */
    revoke: (id: number, reason: string) =>
      this.request<void>({ method: "DELETE", path: `/grants/${int(id)}`, json: { reason } }),
  };

  readonly tokens = {
    /** A new token bound to `scope`'s subtree and at most `role`; the raw token is shown once. */
    issue: (body: { principal: string; scope: string; role?: S["TokenInputRequest"]["role"]; expires_at?: string }) =>
      this.request<IssuedToken>({ method: "POST", path: "/tokens", json: clean({ role: "agent", ...body }) }),
    list: (active = false) =>
      this.request<TokenInfo[]>({ method: "GET", path: "/tokens", query: { active: active ? "1" : undefined } }),
    /** Revoke a token; the reason is required (kept in the audit event; an empty one is a 400). */
    revoke: (id: number, reason: string) =>
      this.request<void>({ method: "DELETE", path: `/tokens/${int(id)}`, json: { reason } }),
  };

  constructor(options: ClientOptions = {}) {
    const url = options.url ?? env("MEMGOV_URL");
    const token = options.token ?? env("MEMGOV_TOKEN");
    if (!url) throw new TypeError(MISSING_URL);
    if (!token) throw new TypeError(MISSING_TOKEN);
    let base = url.replace(/\/+$/, "");
    if (!base.endsWith("/api/v1")) base += "/api/v1";
    this.baseUrl = base;
    this.#token = token;
    this.timeoutMs = options.timeoutMs ?? (env("MEMGOV_TIMEOUT") ? Number(env("MEMGOV_TIMEOUT")) * 1000 : 30_000);
    this.maxRetries = options.maxRetries ?? 3;
    this.backoffMs = options.backoffMs ?? 500;
    this.maxBackoffMs = options.maxBackoffMs ?? 30_000;
    this.#fetch = options.fetch ?? globalThis.fetch.bind(globalThis);
    this.idempotencyKeys = options.idempotencyKeys ?? true;
  }

  /** The k best memories for `query` in `scope` and its ancestors (candidates with their status). */
  async recall(body: RecallRequest): Promise<RecallHit[]> {
    return (await this.request<S["RecallOutput"]>({ method: "POST", path: "/recall", json: clean(body) })).results;
  }

  /** The context packet for this turn within `budget_tokens` (stored as a turn); `text` goes into the
   * prompt. Throws PinnedOverBudget when the pinned blocks do not fit. */
  async context(body: ContextRequest): Promise<Context> {
    const task = typeof body.task === "string" ? { goal: body.task } : body.task;
    return this.request<Context>({ method: "POST", path: "/context", json: clean({ ...body, task }) });
  }

  /** Wait before retry number `attempt` (0-based): Retry-After when given (capped), else backoff. */
  retryWaitMs(response: Response | undefined, attempt: number): number {
    const after = response ? retryAfterSeconds(response.headers.get("Retry-After")) : undefined;
    if (after !== undefined) return Math.min(after * 1000, this.maxBackoffMs);
    return Math.random() * Math.min(this.maxBackoffMs, this.backoffMs * 2 ** attempt);
  }

  /** Send one call: retries 429/503 and a refused connection (a write with the same Idempotency-Key);
   * throws the error class of the answer. */
  async request<T>(call: Call): Promise<T> {
    const url = new URL(this.baseUrl + call.path);
    for (const [name, value] of Object.entries(call.query ?? {})) {
      if (value !== undefined && value !== null) url.searchParams.set(name, String(value));
    }
    const headers: Record<string, string> = {
      Authorization: `Token ${this.#token}`, Accept: "application/json", "User-Agent": USER_AGENT,
    };
    // One key per call, kept across its retries: a retried write the service already stored is replayed.
    const auto = this.idempotencyKeys && !POST_READS.has(call.path);
    const key = call.idempotencyKey ?? (auto ? globalThis.crypto.randomUUID() : undefined);
    if (key !== undefined && WRITE_METHODS.has(call.method)) headers["Idempotency-Key"] = key;
    let body: string | FormData | undefined;
    if (call.form) body = call.form;
    else if (call.json !== undefined) {
      body = JSON.stringify(call.json);
      headers["Content-Type"] = "application/json";
    }
    for (let attempt = 0; ; attempt++) {
      let response: Response;
      try {
        response = await this.#fetch(url, {
          method: call.method, headers, body, signal: AbortSignal.timeout(this.timeoutMs),
        });
      } catch (error) {
        const err = error as { name?: string; cause?: { code?: string } };
        if (err?.name === "TimeoutError" || err?.name === "AbortError") {
          throw new APIConnectionError(`No answer within ${this.timeoutMs} ms from ${this.baseUrl}`,
                                       { timeout: true, cause: error });
        }
        if (RETRYABLE_CONNECT.has(err?.cause?.code ?? "") && attempt < this.maxRetries) {
          await sleep(this.retryWaitMs(undefined, attempt));
          continue;
        }
        throw new APIConnectionError(`Could not reach ${this.baseUrl}: ${err?.cause?.code ?? String(error)}`,
                                     { cause: error });
      }
      if (RETRY_STATUSES.has(response.status) && attempt < this.maxRetries) {
        await response.body?.cancel();
        await sleep(this.retryWaitMs(response, attempt));
        continue;
      }
      return this.#read<T>(response, call);
    }
  }

  async #read<T>(response: Response, call: Call): Promise<T> {
    if (response.status >= 400) {
      const raw = await response.text();
      let data: unknown;
      try {
        data = JSON.parse(raw);
      } catch {
        data = { message: raw.slice(0, 500) || response.statusText };
      }
      const error = errorFor(response.status, data);
      if (error instanceof Throttled) error.retryAfter = retryAfterSeconds(response.headers.get("Retry-After"));
      throw error;
    }
    if (call.text) return (await response.text()) as T;
    if (response.status === 204) return undefined as T;
    const raw = await response.text();
    return (raw ? JSON.parse(raw) : undefined) as T;
  }
}

function int(value: number): number {
  if (!Number.isInteger(value)) throw new TypeError(`an integer id is expected, not ${value}`);
  return value;
}

/** A memory in force: confirmed (or a record of what happened). Candidates and proposals are not. */
export function inForce(memory: { status: string }): boolean {
  return memory.status === "active";
}
