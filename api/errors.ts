/**
 * The service's typed errors. Handlers throw these; the one error handler in
 * `app.ts` turns them into the failure envelope with the right status.
 * Code branches on the class or `status`, never on message text.
 */

/** Base of every error that becomes an HTTP answer. */
export abstract class ApiError extends Error {
  abstract readonly status: 400 | 401 | 403 | 404 | 409 | 413 | 429 | 500 | 503;
  /** Extra top-level fields of the failure body (api.md shows `result: []` for some). */
  readonly extra: Record<string, unknown>;
  constructor(message: string, extra: Record<string, unknown> = {}, options?: { cause?: unknown }) {
    super(message, options);
    this.extra = extra;
  }
}

/** A bad parameter or body; the message names the parameter and the rule. */
export class BadRequestError extends ApiError {
  override readonly name = 'BadRequestError';
  readonly status = 400 as const;
  constructor(
    readonly param: string | undefined,
    message: string,
    extra?: Record<string, unknown>,
  ) {
    super(message, extra);
  }
}

/** Missing, invalid, expired or revoked token, or failed credentials. */
export class UnauthorizedError extends ApiError {
  override readonly name = 'UnauthorizedError';
  readonly status = 401 as const;
}

/** A valid token used outside its area or entity. */
export class ForbiddenError extends ApiError {
  override readonly name = 'ForbiddenError';
  readonly status = 403 as const;
}

/** Unknown route, user, profile, … */
export class NotFoundError extends ApiError {
  override readonly name = 'NotFoundError';
  readonly status = 404 as const;
}

/** The request conflicts with what is stored (duplicate name, profile already attached). */
export class ConflictError extends ApiError {
  override readonly name = 'ConflictError';
  readonly status = 409 as const;
}

/** Request body over the configured limit. */
export class PayloadTooLargeError extends ApiError {
  override readonly name = 'PayloadTooLargeError';
  readonly status = 413 as const;
}

/** Too many failed attempts from one client address. */
export class RateLimitedError extends ApiError {
  override readonly name = 'RateLimitedError';
  readonly status = 429 as const;
  constructor(
    message: string,
    readonly retryAfterSec: number,
  ) {
    super(message);
  }
}

/** A backend the request needs (database, resolver) is not reachable. */
export class UnavailableError extends ApiError {
  override readonly name = 'UnavailableError';
  readonly status = 503 as const;
}

/** The generic message every token failure starts with (decisions.md). */
export const TOKEN_FAILED = 'Token validation failed';
/** The one answer to any failed credential check, so it gives no hint which part was wrong. */
export const AUTH_FAILED = 'Authentication failed: invalid credentials or access not enabled.';
