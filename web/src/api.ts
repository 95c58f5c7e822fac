/**
 * The console's only way to the server: the public API under /svc/api with the signed-in user's
 * tokens. Every answer is the API's envelope; a failure becomes an ApiError carrying the API's own
 * message, which the page shows as it is.
 */
import type { Area, Fetch, Session } from './session.js';

/** The API's envelope (api.md 2.1); paged lists add page, perPage and isLastPage. */
export interface Envelope<T> {
  status: boolean;
  result: T;
  message?: string;
  errorMessage?: string;
  page?: number;
  perPage?: number;
  isLastPage?: boolean;
  [extra: string]: unknown;
}

/** A refused or failed call; `status` 0 when the server could not be reached. */
export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly body?: Record<string, unknown>,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export type Query = Record<string, string | number | boolean | undefined | null>;

export interface CallOptions {
  query?: Query;
  body?: unknown;
  signal?: AbortSignal;
}

/** `?a=1&b=x` from the set values of `query` (undefined, null and '' are left out). */
export function queryString(query: Query | undefined): string {
  if (!query) return '';
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== null && v !== '') params.set(k, String(v));
  const s = params.toString();
  return s ? `?${s}` : '';
}

export class Api {
  private readonly base: string;
  private readonly fetch: Fetch;

  constructor(
    private readonly session: Session,
    opts: { base?: string; fetch?: Fetch } = {},
  ) {
    this.base = opts.base ?? '/svc/api';
    this.fetch = opts.fetch ?? ((input, init) => fetch(input, init));
  }

  /**
   * One call. A missing or refused token waits for a new sign-in and the call is made again, so a
   * token that expires while a page is open costs the user a sign-in, not the page.
   */
  async call<T>(area: Area, method: string, path: string, opts: CallOptions = {}): Promise<Envelope<T>> {
    for (let attempt = 0; ; attempt++) {
      let token = this.session.token(area);
      if (!token) {
        await this.session.whenSignedIn(area);
        token = this.session.token(area);
        if (!token) throw new ApiError(`You have no access to ${area}.`, 403);
      }
      const headers: Record<string, string> = { authorization: `Bearer ${token}` };
      if (opts.body !== undefined) headers['content-type'] = 'application/json';
      let res: Response;
      try {
        res = await this.fetch(`${this.base}/${area}${path}${queryString(opts.query)}`, {
          method,
          headers,
          body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
          signal: opts.signal,
        });
      } catch (err) {
        if ((err as Error).name === 'AbortError') throw err;
        throw new ApiError(`Cannot reach netsvc: ${(err as Error).message}`, 0);
      }
      if (res.status === 401 && attempt < 2) {
        await this.session.whenSignedIn(area);
        continue;
      }
      let body: Envelope<T> | undefined;
      try {
        body = (await res.json()) as Envelope<T>;
      } catch {
        throw new ApiError(`netsvc answered HTTP ${res.status} without a JSON body`, res.status);
      }
      if (!res.ok || body.status === false) {
        throw new ApiError(body.errorMessage ?? body.message ?? `HTTP ${res.status}`, res.status, body);
      }
      return body;
    }
  }

  get<T>(area: Area, path: string, query?: Query, signal?: AbortSignal): Promise<Envelope<T>> {
    return this.call<T>(area, 'GET', path, { query, signal });
  }

  send<T>(area: Area, method: 'POST' | 'PUT' | 'PATCH' | 'DELETE', path: string, body?: unknown): Promise<Envelope<T>> {
    return this.call<T>(area, method, path, { body });
  }
}
