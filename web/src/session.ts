/**
 * Who is signed in: one bearer token per area, from each area's own POST /{area}/auth with the same
 * API id and secret. The secret is never kept; tokens live in sessionStorage (this tab only).
 *
 * When a token is refused (expired, or the user's access changed), the area is marked as needing a
 * new sign-in and every request to it waits (`whenSignedIn`) while the page stays as it is; signing in
 * again resumes them.
 */
export const AREAS = ['netflow', 'logviewer', 'hotspot'] as const;
export type Area = (typeof AREAS)[number];

interface Token {
  value: string;
  /** Epoch ms. */
  expiresAt: number;
}

interface Stored {
  apiId: string;
  tokens: Partial<Record<Area, Token>>;
}

const STORAGE_KEY = 'netsvc.session';

/** Sign-in refused: the message is the API's (bad secret, locked out, no access to any area). */
export class SignInError extends Error {}

/** What `fetch` does; injected so that tests can drive it. */
export type Fetch = (input: string, init?: RequestInit) => Promise<Response>;

export interface SessionOptions {
  base?: string;
  fetch?: Fetch;
  storage?: Pick<Storage, 'getItem' | 'setItem' | 'removeItem'>;
  now?: () => number;
}

async function errorText(res: Response): Promise<string> {
  try {
    const body = (await res.json()) as { errorMessage?: string; message?: string };
    return body.errorMessage ?? body.message ?? `HTTP ${res.status}`;
  } catch {
    return `HTTP ${res.status} ${res.statusText}`;
  }
}

export class Session {
  private state: Stored | undefined;
  /** Areas whose token was refused since the last sign-in. */
  private stale = new Set<Area>();
  private waiting: Array<() => void> = [];
  private listeners = new Set<() => void>();
  private readonly base: string;
  private readonly fetch: Fetch;
  private readonly storage: SessionOptions['storage'];
  private readonly now: () => number;

  constructor(opts: SessionOptions = {}) {
    this.base = opts.base ?? '/svc/api';
    this.fetch = opts.fetch ?? ((input, init) => fetch(input, init));
    this.storage = opts.storage;
    this.now = opts.now ?? Date.now;
    const saved = this.storage?.getItem(STORAGE_KEY);
    if (saved) {
      try {
        this.state = JSON.parse(saved) as Stored;
      } catch {
        this.storage?.removeItem(STORAGE_KEY);
      }
    }
  }

  /** Re-render hook: called on sign-in, sign-out and when a sign-in becomes needed. */
  subscribe(fn: () => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  private changed(): void {
    if (this.state) this.storage?.setItem(STORAGE_KEY, JSON.stringify(this.state));
    else this.storage?.removeItem(STORAGE_KEY);
    for (const fn of this.listeners) fn();
  }

  get signedIn(): boolean {
    return this.state !== undefined;
  }

  get apiId(): string | undefined {
    return this.state?.apiId;
  }

  /** Areas the user signed in to (whether or not their token is still good). */
  get areas(): Area[] {
    return AREAS.filter((a) => this.state?.tokens[a] !== undefined);
  }

  /** True while a refused token waits for the user to sign in again. */
  get needsSignIn(): boolean {
    return this.stale.size > 0;
  }

  /** A token believed good, or undefined when the area has none or it has expired by the clock. */
  token(area: Area): string | undefined {
    const t = this.state?.tokens[area];
    if (!t || this.stale.has(area) || t.expiresAt <= this.now()) return undefined;
    return t.value;
  }

  /**
   * Signs in to every area with one credential. Resolves with the areas that issued a token; throws
   * SignInError with the API's own message when none did.
   */
  async signIn(apiId: string, secret: string): Promise<Area[]> {
    // Requests of the open page wait on this sign-in: they must resume as the user who made them,
    // not as another (perhaps another entity's), under a page still showing the first one's data.
    if (this.stale.size > 0 && this.state && apiId !== this.state.apiId) {
      throw new SignInError(`Sign in again as ${this.state.apiId}, or sign out to change user.`);
    }
    const results = await Promise.all(
      AREAS.map(async (area) => {
        let res: Response;
        try {
          res = await this.fetch(`${this.base}/${area}/auth`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ api_id: apiId, secret }),
          });
        } catch (err) {
          return { area, error: `Cannot reach netsvc (${(err as Error).message})`, status: 0 };
        }
        if (!res.ok) return { area, error: await errorText(res), status: res.status };
        const body = (await res.json()) as { result: { access_token: string; expires_in: number } };
        return { area, token: { value: body.result.access_token, expiresAt: this.now() + body.result.expires_in * 1000 } };
      }),
    );
    const tokens: Partial<Record<Area, Token>> = {};
    for (const r of results) if ('token' in r && r.token) tokens[r.area] = r.token;
    if (Object.keys(tokens).length === 0) {
      // A wrong secret is refused by every area alike; a 403 (no access) says less than a 401 or 429.
      const failures = results.filter((r): r is { area: Area; error: string; status: number } => 'error' in r);
      const worst = failures.find((f) => f.status !== 403) ?? failures[0];
      throw new SignInError(worst?.error ?? 'Sign-in failed');
    }
    this.state = { apiId, tokens };
    this.stale.clear();
    this.changed();
    const resume = this.waiting;
    this.waiting = [];
    for (const fn of resume) fn();
    return Object.keys(tokens) as Area[];
  }

  /** Marks an area's token as refused and waits until the user has signed in again. */
  whenSignedIn(area: Area): Promise<void> {
    this.stale.add(area);
    const wait = new Promise<void>((resolve) => this.waiting.push(resolve));
    this.changed();
    return wait;
  }

  signOut(): void {
    this.state = undefined;
    this.stale.clear();
    this.waiting = [];
    this.changed();
  }
}
