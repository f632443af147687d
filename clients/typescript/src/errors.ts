// One error class per `error` code of the service's error body ({error, message, ...}). Catch
// MemgovError for all of them, or a subclass for one case; each keeps `status`, `code` and `body`.

export type ErrorBody = { error?: string; message?: string; detail?: string; [field: string]: unknown };

export class MemgovError extends Error {
  static readonly code: string = "error";
  readonly status: number | undefined;
  readonly code: string;
  readonly body: ErrorBody;

  constructor(message: string, options: { status?: number; code?: string; body?: ErrorBody } = {}) {
    super(message);
    this.name = new.target.name;
    this.status = options.status;
    this.code = options.code ?? (new.target as typeof MemgovError).code;
    this.body = options.body ?? {};
  }
}

/** 400: the request's fields; `fields` says which field is wrong and why. */
export class InvalidInput extends MemgovError {
  static override readonly code: string = "invalid_input";
  get fields(): Record<string, unknown> {
    return (this.body.fields as Record<string, unknown>) ?? {};
  }
}
export class ParseError extends InvalidInput { static override readonly code = "parse_error"; }
export class NestingTooDeep extends InvalidInput { static override readonly code = "nesting_too_deep"; }
export class BadImportFile extends InvalidInput {
  static override readonly code = "bad_import_file";
  get line(): number | undefined { return this.body.line as number | undefined; }
}
export class NotAuthenticated extends MemgovError { static override readonly code: string = "not_authenticated"; }
export class AuthenticationFailed extends NotAuthenticated { static override readonly code = "authentication_failed"; }
export class Forbidden extends MemgovError { static override readonly code = "permission_denied"; }
/** 404: unknown, or outside the scopes the token can see (the same answer on purpose). */
export class NotFound extends MemgovError { static override readonly code = "not_found"; }
export class MethodNotAllowed extends MemgovError { static override readonly code = "method_not_allowed"; }
export class UnsupportedMediaType extends MemgovError { static override readonly code = "unsupported_media_type"; }
export class RequestTooLarge extends MemgovError { static override readonly code = "request_too_large"; }
export class ImportTooLarge extends MemgovError { static override readonly code = "import_too_large"; }
export class Conflict extends MemgovError { static override readonly code: string = "conflict"; }
export class KeyRevisionConflict extends Conflict { static override readonly code = "key_revision_conflict"; }
export class ActiveKeyExists extends Conflict { static override readonly code = "active_key_exists"; }
export class InvalidTransition extends Conflict { static override readonly code = "invalid_transition"; }
export class StaleRevision extends Conflict { static override readonly code = "stale_revision"; }
export class FourEyesRequired extends Conflict { static override readonly code = "four_eyes_required"; }
export class PromotionTextForgotten extends Conflict { static override readonly code = "promotion_text_forgotten"; }
export class LastOwner extends Conflict { static override readonly code = "last_owner"; }
export class ScopeArchived extends Conflict { static override readonly code = "scope_archived"; }
export class InvitationInvalid extends MemgovError { static override readonly code = "invitation_invalid"; }
/** 422: the pinned blocks alone exceed the budget; `needed` and `budget` say by how much. */
export class PinnedOverBudget extends MemgovError {
  static override readonly code = "pinned_over_budget";
  get needed(): number | undefined { return this.body.needed as number | undefined; }
  get budget(): number | undefined { return this.body.budget as number | undefined; }
}
/** 429, after the client's retries; `retryAfter` in seconds from the last answer. */
export class Throttled extends MemgovError {
  static override readonly code = "throttled";
  retryAfter: number | undefined;
}
/** 503, after the client's retries. */
export class ServiceUnavailable extends MemgovError { static override readonly code = "service_unavailable"; }
/** Any other 5xx. */
export class ServerError extends MemgovError { static override readonly code = "server_error"; }
/** The service could not be reached, or did not answer in time (`timeout`). */
export class APIConnectionError extends MemgovError {
  static override readonly code = "connection_error";
  readonly timeout: boolean;
  constructor(message: string, options: { timeout?: boolean; cause?: unknown } = {}) {
    super(message);
    this.timeout = options.timeout ?? false;
    if (options.cause !== undefined) (this as { cause?: unknown }).cause = options.cause;
  }
}

const CLASSES = [
  InvalidInput, ParseError, NestingTooDeep, BadImportFile, NotAuthenticated, AuthenticationFailed, Forbidden,
  NotFound, MethodNotAllowed, UnsupportedMediaType, RequestTooLarge, ImportTooLarge, Conflict, KeyRevisionConflict,
  ActiveKeyExists, InvalidTransition, StaleRevision, FourEyesRequired, PromotionTextForgotten, LastOwner,
  ScopeArchived, InvitationInvalid, PinnedOverBudget, Throttled, ServiceUnavailable,
] as const;

/** The class for each error code the service sends (its ErrorBody's list). */
export const ERROR_CLASSES: Readonly<Record<string, typeof MemgovError>> = Object.fromEntries(
  CLASSES.map((cls) => [cls.code, cls]),
);

const BY_STATUS: Record<number, typeof MemgovError> = {
  400: InvalidInput, 401: NotAuthenticated, 403: Forbidden, 404: NotFound, 405: MethodNotAllowed, 409: Conflict,
  413: RequestTooLarge, 415: UnsupportedMediaType, 422: PinnedOverBudget, 429: Throttled, 503: ServiceUnavailable,
};

/** The error for an error answer: by its `error` code, else by its HTTP status. */
export function errorFor(status: number, body: unknown): MemgovError {
  const data: ErrorBody = body && typeof body === "object" && !Array.isArray(body) ? (body as ErrorBody) : {};
  const code = typeof data.error === "string" ? data.error : "";
  const message = String(data.message ?? data.detail ?? `HTTP ${status}`);
  const cls = ERROR_CLASSES[code] ?? BY_STATUS[status] ?? (status >= 500 ? ServerError : MemgovError);
  return new cls(message, { status, code: code || undefined, body: data });
}
