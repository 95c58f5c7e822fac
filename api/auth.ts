/**
 * Per-area token auth: `POST /{area}/auth` trades an api_id and secret for a
 * JWT; a bearer middleware checks it on every other route of the area,
 * including, on each request, that the credential was not replaced and the
 * area is still switched on for the entity and the user.
 */
import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { MiddlewareHandler } from 'hono';
import { errors as joseErrors, jwtVerify, SignJWT } from 'jose';
import { AREAS, type AdminStore, type Area, type CredentialRecord } from '../storage/admin/admin-store.js';
import { DUMMY_HASH, verifySecret } from '../storage/admin/secret-hash.js';
import { AUTH_FAILED, ForbiddenError, RateLimitedError, TOKEN_FAILED, UnauthorizedError } from './errors.js';
import type { AppEnv, Principal } from './context.js';
import { KnownSecrets } from './known-secrets.js';
import { fail } from './envelope.js';
import { failureSchema } from './schemas.js';
import { VerifyBudget, VerifyBusyError, type VerifyBudgetOptions } from './verify-budget.js';

/** Options of the token service. */
export interface AuthOptions {
  /** HMAC key of at least 32 bytes. */
  key: Uint8Array;
  tokenTtlSec: number;
  maxFailures: number;
  failureWindowSec: number;
  now: () => number;
  /** Bounds on scrypt verifications running and waiting; config.ts's defaults when absent. */
  verify?: VerifyBudgetOptions;
  /** Verified secrets remembered in memory (0: none); config.ts's default when absent. */
  knownSecrets?: number;
  /**
   * Told why each login was refused, for the operator's log: the client gets
   * the same 401 whatever the reason, so that it learns nothing from it.
   */
  onRefused?: (refusal: LoginRefusal) => void;
}

/** Why a login was refused. */
export type LoginRefusalReason =
  /** No credential has this api_id. */
  | 'unknown_api_id'
  /** The secret does not match the api_id's. */
  | 'wrong_secret'
  /** The entity or the user has the area switched off, or the user is gone. */
  | 'area_disabled'
  /** Credentials were issued again while the attempt was being checked. */
  | 'credential_reissued'
  /** Too many failures from the address in the window (429). */
  | 'rate_limited'
  /** The scrypt budget was full (429, the secret unchecked). */
  | 'busy';

/** One refused login, as `AuthOptions.onRefused` receives it (never the secret). */
export interface LoginRefusal {
  area: Area;
  /** The api_id sent, when the body was read (not for refusals before it). */
  apiId?: string;
  client: string;
  reason: LoginRefusalReason;
  /** For `rate_limited`: seconds until the address may try again. */
  retryAfterSec?: number;
}

/** The defaults of `auth.verify*` and `auth.knownSecrets` in config.ts, for services built without a configuration (tests). */
const DEFAULT_VERIFY: VerifyBudgetOptions = { concurrency: 1, queue: 4, queuePerAddress: 2 };
const DEFAULT_KNOWN_SECRETS = 1000;

/** The claims netsvc puts in a token, once its signature is verified. */
interface TokenClaims {
  sub: string;
  ent: string;
  cv: number;
  area: string;
  exp: number;
}

/** Verified tokens remembered (~300 bytes each); only tokens signed with the key can enter. */
const MAX_VERIFIED_TOKENS = 10_000;

/** What the auth endpoint did, for `/metrics`. */
export interface AuthCounters {
  /** Attempts refused by the per-address failure limit. */
  rateLimited: number;
  /** scrypt verifications started. */
  verifications: number;
  /** Attempts refused without hashing because the verification budget was full (on arrival or pushed out while waiting). */
  busyRefused: number;
  /** Logins whose secret was verified before, answered without scrypt. */
  knownSecretHits: number;
}

/**
 * Counts failed auth attempts per client address in a fixed window. No
 * library counts only failures, so this small map does it. Attempts still
 * being checked count against the limit too: the scrypt check is async, and
 * parallel requests must not all slip through before the first failure lands.
 * An address is forgotten when its window ends; at most `maxKeys` are held.
 * It also counts, without limiting on them, the attempts the verification
 * budget refused, so `pressure` can rank an address that keeps pushing behind
 * one that does not.
 */
export class FailureLimiter {
  private readonly hits = new Map<string, { failures: number; refused: number; inFlight: number; resetAt: number }>();
  constructor(
    private readonly max: number,
    private readonly windowMs: number,
    private readonly now: () => number,
    private readonly maxKeys = 100_000,
    /** When an operator last lifted this address's lockout (`netsvc admin unlock`), ms; 0: never. */
    private readonly unlockedAt: (address: string) => number = () => 0,
  ) {}

  private entry(address: string) {
    const t = this.now();
    let entry = this.hits.get(address);
    if (entry && t >= entry.resetAt && entry.inFlight === 0) {
      this.hits.delete(address);
      entry = undefined;
    }
    if (!entry) {
      if (this.hits.size >= this.maxKeys) this.hits.delete(this.hits.keys().next().value as string);
      entry = { failures: 0, refused: 0, inFlight: 0, resetAt: t + this.windowMs };
      this.hits.set(address, entry);
    }
    return entry;
  }

  /** The seconds an attempt from `address` would have to wait now (0: none), reserving nothing. */
  wait(address: string): number {
    const entry = this.entry(address);
    if (entry.failures + entry.inFlight < this.max) return 0;
    // Lifted by an operator since this window began: a fresh window, nothing counted.
    const unlocked = entry.failures > 0 ? this.unlockedAt(address) : 0;
    if (unlocked > 0 && unlocked >= entry.resetAt - this.windowMs) {
      entry.failures = 0;
      entry.refused = 0;
      entry.resetAt = this.now() + this.windowMs;
      if (entry.inFlight < this.max) return 0;
    }
    return Math.max(1, Math.ceil((entry.resetAt - this.now()) / 1000));
  }

  /**
   * Starts an attempt: returns 0 and reserves a place, or the seconds to wait
   * when failures plus attempts under way have reached the limit.
   */
  begin(address: string): number {
    const wait = this.wait(address);
    if (wait === 0) this.entry(address).inFlight++;
    return wait;
  }

  /** Ends an attempt that `begin` let through, counting it as a failure or not. */
  end(address: string, failed: boolean): void {
    const entry = this.hits.get(address);
    if (!entry) return;
    entry.inFlight = Math.max(0, entry.inFlight - 1);
    if (failed) entry.failures++;
  }

  /**
   * Ends an attempt that `begin` let through and the verification budget
   * refused: not a failure (the secret was never checked), but remembered
   * for `pressure` until the window ends.
   */
  refuse(address: string): void {
    const entry = this.hits.get(address);
    if (!entry) return;
    entry.inFlight = Math.max(0, entry.inFlight - 1);
    entry.refused++;
  }

  /** Remembers, for `pressure`, an attempt the budget refused before `begin`. */
  refusedEarly(address: string): void {
    this.entry(address).refused++;
  }

  /**
   * How hard an address pushes: its failures and budget refusals in the
   * window plus its attempts under way. 0 for an address with nothing recent.
   */
  pressure(address: string): number {
    const entry = this.hits.get(address);
    if (!entry) return 0;
    return entry.failures + entry.refused + entry.inFlight;
  }
}

/** Issues and checks tokens against the admin store. */
export class AuthService {
  readonly limiter: FailureLimiter;
  readonly budget: VerifyBudget;
  private readonly known: KnownSecrets;
  private rateLimited = 0;
  private knownSecretHits = 0;
  /** Tokens whose signature was verified, by their exact text; the oldest goes first. */
  private readonly verifiedTokens = new Map<string, TokenClaims>();

  constructor(
    private readonly store: AdminStore,
    private readonly opts: AuthOptions,
  ) {
    if (opts.key.length < 32) throw new Error('auth key must be at least 32 bytes');
    this.limiter = new FailureLimiter(opts.maxFailures, opts.failureWindowSec * 1000, opts.now, undefined, (address) =>
      store.unlockRequestedAt(address),
    );
    this.budget = new VerifyBudget(opts.verify ?? DEFAULT_VERIFY);
    this.known = new KnownSecrets(opts.knownSecrets ?? DEFAULT_KNOWN_SECRETS);
  }

  /** Counters of the auth endpoint, read at scrape time. */
  get counters(): Readonly<AuthCounters> {
    const b = this.budget.counters;
    return {
      rateLimited: this.rateLimited,
      verifications: b.started,
      busyRefused: b.refused + b.evicted,
      knownSecretHits: this.knownSecretHits,
    };
  }

  /** scrypt verifications waiting for the budget now. */
  get verifyQueueDepth(): number {
    return this.budget.queued;
  }

  private allowed(entity: string, user: string, area: Area, version?: number): boolean {
    const state = this.store.principalState(entity, user);
    if (!state) return false;
    if (version !== undefined && state.credentialVersion !== version) return false;
    return state.entityAreas[area] && state.userAreas[area];
  }

  /**
   * Refuses at once an attempt from `client` that the per-address limit or
   * the verification budget would refuse anyway; run before the request body
   * is read, so that in a storm a refusal costs as little as an HTTP answer
   * can. `login` checks both again.
   */
  precheck(area: Area, client: string): void {
    const wait = this.limiter.wait(client);
    if (wait > 0) {
      this.rateLimited++;
      this.opts.onRefused?.({ area, client, reason: 'rate_limited', retryAfterSec: wait });
      throw new RateLimitedError(`Too many failed authentication attempts. Try again in ${wait} s.`, wait);
    }
    if (!this.budget.wouldAdmit(client, this.limiter.pressure(client))) {
      this.budget.countRefused();
      this.limiter.refusedEarly(client);
      this.opts.onRefused?.({ area, client, reason: 'busy' });
      throw new VerifyBusyError();
    }
  }

  /** Why a login whose checks ran was refused. */
  private refusalReason(cred: CredentialRecord | undefined, good: boolean): LoginRefusalReason {
    if (!cred) return 'unknown_api_id';
    if (!good) return 'wrong_secret';
    const state = this.store.principalState(cred.entity, cred.user);
    return state && state.credentialVersion !== cred.credentialVersion ? 'credential_reissued' : 'area_disabled';
  }

  /**
   * Trades credentials for a token; every failure is the same UnauthorizedError.
   * A secret is checked by scrypt within the verification budget (429
   * VerifyBusyError, unhashed, when it is full), unless it was verified before.
   */
  async login(area: Area, apiId: string, secret: string, client: string): Promise<{ token: string; expiresIn: number }> {
    const wait = this.limiter.begin(client);
    if (wait > 0) {
      this.rateLimited++;
      this.opts.onRefused?.({ area, apiId, client, reason: 'rate_limited', retryAfterSec: wait });
      throw new RateLimitedError(`Too many failed authentication attempts. Try again in ${wait} s.`, wait);
    }
    let outcome: 'ok' | 'failed' | 'busy' = 'failed';
    let cred: CredentialRecord | undefined;
    let good: boolean;
    try {
      cred = this.store.findCredential(apiId);
      const stored = cred?.secretHash ?? DUMMY_HASH;
      good = cred !== undefined && this.known.has(apiId, stored, secret);
      if (good) this.knownSecretHits++;
      else {
        // An unknown api_id costs the same scrypt, so its answer does not tell it apart from a wrong secret.
        // Ranked without this attempt itself, so a lone attempt from a quiet address ranks 0.
        good = await this.budget.run(
          client,
          () => this.limiter.pressure(client) - 1,
          () => verifySecret(secret, stored),
        );
        if (good && cred) this.known.add(apiId, stored, secret);
      }
      // The version check catches credentials issued again while this attempt waited.
      outcome = cred && good && this.allowed(cred.entity, cred.user, area, cred.credentialVersion) ? 'ok' : 'failed';
    } catch (err) {
      if (err instanceof VerifyBusyError) {
        outcome = 'busy';
        this.opts.onRefused?.({ area, apiId, client, reason: 'busy' });
      }
      throw err;
    } finally {
      if (outcome === 'busy') this.limiter.refuse(client);
      else this.limiter.end(client, outcome === 'failed');
    }
    if (outcome !== 'ok' || !cred) {
      this.opts.onRefused?.({ area, apiId, client, reason: this.refusalReason(cred, good) });
      throw new UnauthorizedError(AUTH_FAILED);
    }
    const nowSec = Math.floor(this.opts.now() / 1000);
    const token = await new SignJWT({ ent: cred.entity, area, cv: cred.credentialVersion })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject(cred.user)
      .setIssuer('netsvc')
      .setIssuedAt(nowSec)
      .setExpirationTime(nowSec + this.opts.tokenTtlSec)
      .sign(this.opts.key);
    return { token, expiresIn: this.opts.tokenTtlSec };
  }

  /**
   * Verifies a token's signature and claims (jose) and remembers them: a token
   * is checked on every request, and jose's HMAC runs on the thread pool, so
   * each check waited a full turn of the event loop behind whatever else was
   * ready (in a login storm, ~100 ms). Its claims never change; what can
   * (expiry, revocation, switches) is checked on every request.
   */
  private async verifyToken(token: string): Promise<TokenClaims> {
    let payload;
    try {
      ({ payload } = await jwtVerify(token, this.opts.key, {
        algorithms: ['HS256'],
        issuer: 'netsvc',
        currentDate: new Date(this.opts.now()),
      }));
    } catch (err) {
      const why = err instanceof joseErrors.JWTExpired ? ': token expired.' : ': invalid token.';
      throw new UnauthorizedError(TOKEN_FAILED + why);
    }
    const { sub, ent, cv, exp, area } = payload;
    if (
      typeof sub !== 'string' ||
      typeof ent !== 'string' ||
      typeof cv !== 'number' ||
      typeof area !== 'string' ||
      typeof exp !== 'number'
    ) {
      throw new UnauthorizedError(`${TOKEN_FAILED}: invalid token.`);
    }
    const claims = { sub, ent, cv, area, exp };
    if (this.verifiedTokens.size >= MAX_VERIFIED_TOKENS)
      this.verifiedTokens.delete(this.verifiedTokens.keys().next().value as string);
    this.verifiedTokens.set(token, claims);
    return claims;
  }

  /** Checks a bearer token for `area`: 401 when it is not valid now, 403 when it belongs to another area. */
  async check(token: string, area: Area): Promise<Principal> {
    const claims = this.verifiedTokens.get(token) ?? (await this.verifyToken(token));
    if (claims.exp <= Math.floor(this.opts.now() / 1000)) {
      this.verifiedTokens.delete(token);
      throw new UnauthorizedError(`${TOKEN_FAILED}: token expired.`);
    }
    const { sub, ent, cv, area: tokenArea } = claims;
    if (tokenArea !== area) throw new ForbiddenError(`This token is for the ${tokenArea} API, not ${area}.`);
    if (!this.allowed(ent, sub, area, cv)) throw new UnauthorizedError(`${TOKEN_FAILED}: token revoked or access disabled.`);
    return { user: sub, entity: ent, area };
  }
}

/**
 * Middleware for `POST /{area}/auth`, mounted before the body is read: an
 * attempt that would be refused anyway (per-address limit, full verification
 * budget) is answered 429 at once, so a storm costs little more than its HTTP
 * answers (measured: a quarter less CPU per refused attempt than refusing
 * after parsing the body and looking up the credential).
 */
export function authPrecheck(
  auth: AuthService,
  clientAddress: (c: Parameters<MiddlewareHandler<AppEnv>>[0]) => string,
): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const area = c.req.param('area');
    // Another path under /:area/auth is not a login route: it gets its 404 without the check.
    if (c.req.method === 'POST' && area !== undefined && (AREAS as readonly string[]).includes(area))
      auth.precheck(area as Area, clientAddress(c));
    await next();
  };
}

// The login routes of every area (app.ts mounts them under /svc/api/<area>/auth).
const AUTH_PATH = new RegExp(`^/svc/api/(${AREAS.join('|')})/auth(?:\\?|$)`);

/**
 * The refusal of `authPrecheck`, given on Node's request before Hono builds a
 * Request and a Response for it: in a storm of new connections each refused
 * attempt then costs the event loop a fraction of what the framework's path
 * costs, so the requests queued behind the storm (an honest login, a
 * dashboard's poll) wait less. Answers with the same status, headers and
 * envelope as the middleware; returns true when it answered.
 */
export function refuseAuthEarly(auth: AuthService, req: IncomingMessage, res: ServerResponse): boolean {
  if (req.method !== 'POST') return false;
  const m = AUTH_PATH.exec(req.url ?? '');
  if (!m) return false;
  try {
    auth.precheck(m[1] as Area, req.socket.remoteAddress ?? 'unknown');
    return false;
  } catch (err) {
    if (!(err instanceof RateLimitedError)) throw err;
    const body = JSON.stringify(fail(err.message));
    res.writeHead(429, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(body),
      'retry-after': String(err.retryAfterSec),
    });
    res.end(body);
    return true;
  }
}

/** Middleware that requires a valid bearer token of `area` and puts the principal in the context. */
export function bearerAuth(auth: AuthService, area: Area): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const header = c.req.header('authorization') ?? '';
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!match) throw new UnauthorizedError(`${TOKEN_FAILED}: missing bearer token.`);
    c.set('principal', await auth.check(match[1]!, area));
    await next();
  };
}

const credentialsSchema = z
  .object({
    api_id: z.string().min(1).max(200).openapi({ example: 'nsv_1a2b3c4d5e6f7a8b9c0d' }),
    secret: z.string().min(1).max(500).openapi({ example: 'kq3…' }),
  })
  .openapi('Credentials');

const tokenSchema = z
  .object({
    status: z.literal(true),
    message: z.string(),
    result: z.object({
      access_token: z.string(),
      token_type: z.literal('Bearer'),
      expires_in: z.number().int().openapi({ description: 'Seconds until the token expires' }),
    }),
  })
  .openapi('TokenResponse');

/** Adds `POST /auth` of one area to its router. */
export function registerAuthRoute(
  router: OpenAPIHono<AppEnv>,
  area: Area,
  auth: AuthService,
  clientAddress: (c: Parameters<MiddlewareHandler<AppEnv>>[0]) => string,
): void {
  const route = createRoute({
    method: 'post',
    path: '/auth',
    tags: [area],
    summary: `Get a bearer token for the ${area} API`,
    security: [],
    request: { body: { required: true, content: { 'application/json': { schema: credentialsSchema } } } },
    responses: {
      200: { description: 'Token issued', content: { 'application/json': { schema: tokenSchema } } },
      400: { description: 'Malformed body', content: { 'application/json': { schema: failureSchema } } },
      401: {
        description: 'Wrong credentials, or area/user switched off',
        content: { 'application/json': { schema: failureSchema } },
      },
      429: {
        description:
          'Too many failed attempts from this address, or too many authentication attempts being checked at once (auth.verify*: answered at once, without checking the secret). `Retry-After` gives the seconds to wait.',
        headers: {
          'Retry-After': { description: 'Seconds to wait before trying again', schema: { type: 'integer', minimum: 1 } },
        },
        content: { 'application/json': { schema: failureSchema } },
      },
    },
  });
  router.openapi(route, async (c) => {
    const { api_id, secret } = c.req.valid('json');
    const { token, expiresIn } = await auth.login(area, api_id, secret, clientAddress(c));
    return c.json(
      {
        status: true as const,
        message: 'Authentication successful.',
        result: { access_token: token, token_type: 'Bearer' as const, expires_in: expiresIn },
      },
      200,
    );
  });
}
