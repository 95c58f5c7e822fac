/**
 * What every hotspot resource module shares (api/routes/hotspot/): the
 * dependencies, the schema pieces of several routes, the parameter parsing,
 * the mapping of store refusals to the API's errors, and the per-request
 * helpers (store of the caller's entity, actor, store call).
 */
import { z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import ipaddr from 'ipaddr.js';
import type { AttributeCatalogue } from '../../../storage/radius/attribute-catalogue.js';
import { normaliseMac } from '../../../storage/radius/mac.js';
import { isUserId, NAME_MAX, RadiusStoreError, type RadiusStore } from '../../../storage/radius/radius-store.js';
import type { AppEnv } from '../../context.js';
import { BadRequestError, ConflictError, ForbiddenError, NotFoundError, UnavailableError } from '../../errors.js';
import { pageOf, pageParams, parseTimeParam, textParam, timeParam, type PageParams } from '../../params.js';
import { failureSchema } from '../../schemas.js';

/** What the hotspot routes are built from. */
export interface HotspotRouteDeps {
  /** The RADIUS store of an entity; undefined when the entity has no RADIUS database. */
  storeOf: (entity: string) => RadiusStore | undefined;
  catalogue: AttributeCatalogue;
  /** IANA zone in which startTime/endTime without an offset are read. */
  timezone: string;
  /** Largest perPage; larger values are reduced (default 2000). */
  maxPerPage?: number;
  /** Told about every RADIUS database that cannot be used (answered 503), with the driver's reason in `cause`, for the log. */
  onStoreError?: (entity: string, err: RadiusStoreError) => void;
}

const DEFAULT_PER_PAGE = 100;
export const PROFILE = /^[A-Za-z0-9_-]+$/;

// ------------------------------------------------------------------ schemas

export const json = <T extends z.ZodType>(schema: T, description: string) => ({
  description,
  content: { 'application/json': { schema } },
});
export const failure = (description: string) => json(failureSchema, description);
export const notFound = { 404: failure('Unknown user or profile') };
export const unavailable = {
  503: failure('The entity\u2019s RADIUS database cannot be reached, did not answer in time, is full, or has no tables yet'),
};

export const q = textParam;

export const pageQuery = pageParams('Page size, default 100; larger than the maximum is reduced');

export const timeParams = {
  startTime: timeParam(
    'startTime',
    'From this time on (inclusive): YYYY-MM-DD, YYYY-MM-DD HH:mm[:ss] in the service zone, or ISO 8601',
    '2026-03-25',
  ),
  endTime: timeParam('endTime', 'Up to this time (inclusive), same forms', '2026-03-26'),
};

export const pagedSchema = <T extends z.ZodType>(item: T, name: string) =>
  z
    .object({
      status: z.literal(true),
      page: z.number().int(),
      perPage: z.number().int(),
      isLastPage: z.boolean(),
      message: z.string(),
      result: z.array(item),
    })
    .openapi(name);

export const userIdParam = z.object({
  userId: z
    .string()
    .regex(/^\d{1,10}$/, 'must be an integer')
    .openapi({ param: { name: 'userId', in: 'path' }, example: '12' }),
});

/** A profile name in the path: the name rule of api.md 2.4 (and of `netsvc profile`), at most NAME_MAX characters. */
export const profileNameParam = z
  .string()
  .regex(PROFILE, 'must be letters, digits, - and _')
  .max(NAME_MAX, `must be at most ${NAME_MAX} characters`)
  .openapi({ param: { name: 'profileName', in: 'path' }, example: 'gold' });

export const messageResult = <T extends z.ZodType>(result: T, name: string) =>
  z.object({ status: z.literal(true), message: z.string(), result }).openapi(name);

/** The `result: []` api.md shows on some answers (z.never would break the OpenAPI document). */
export const emptyResult = z.array(z.string()).max(0).openapi({ description: 'Always empty', example: [] });

export const tags = ['hotspot'];

// ------------------------------------------------------------------ parsing

/** The startTime/endTime of a request as epoch ms (instants, so a range across a DST change compares as time passed). */
export function timeRange(query: { startTime?: string; endTime?: string }, zone: string): { from?: number; to?: number } {
  const from = query.startTime === undefined ? undefined : parseTimeParam('startTime', query.startTime, zone).toMillis();
  const to = query.endTime === undefined ? undefined : parseTimeParam('endTime', query.endTime, zone).toMillis();
  if (from !== undefined && to !== undefined && to < from)
    throw new BadRequestError('endTime', "Invalid parameter 'endTime': it must not be before 'startTime'.");
  return { from, to };
}

export function macParam(name: string, value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const mac = normaliseMac(value);
  if (!mac) throw new BadRequestError(name, `Invalid parameter '${name}': '${value}' is not a MAC address.`);
  return mac;
}

export function ipParam(name: string, value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const ok =
    ipaddr.IPv4.isValidFourPartDecimal(value) || (value.includes(':') && !value.includes('%') && ipaddr.IPv6.isValid(value));
  if (!ok) throw new BadRequestError(name, `Invalid parameter '${name}': '${value}' is not an IP address.`);
  return value;
}

export function userIdOf(text: string): number {
  const id = Number(text);
  if (!Number.isSafeInteger(id) || id < 1)
    throw new BadRequestError('userId', "Invalid parameter 'userId': must be an integer of at least 1.");
  // Past every backend's id column: no such user, and PostgreSQL would refuse to compare it.
  if (!isUserId(id)) throw new NotFoundError(`User with ID: ${id} not found.`);
  return id;
}

/** Turns store refusals into the API's typed errors. */
export function apiError(err: unknown): unknown {
  if (!(err instanceof RadiusStoreError)) return err;
  switch (err.code) {
    case 'user_not_found':
    case 'profile_not_found':
      return new NotFoundError(err.message);
    case 'username_taken':
      return new ConflictError(err.message);
    case 'profile_attached':
      return new ConflictError(err.message, { result: [] });
    case 'profile_in_use':
      return new ConflictError(err.message);
    case 'invalid':
      return new BadRequestError(err.param, err.message);
    // Fixed texts: the store's message names tables and the driver's reason, which are for the operator's log, not the client.
    case 'schema_missing':
      return new UnavailableError(
        'The RADIUS database is not ready: its tables are missing (netsvc db migrate).',
        {},
        { cause: err },
      );
    case 'unavailable':
      return new UnavailableError('The RADIUS database cannot be reached right now.', {}, { cause: err });
    case 'storage_full':
      return new UnavailableError(
        'The RADIUS database has no space left: nothing was changed. Free space on its disk, then try again.',
        {},
        { cause: err },
      );
  }
}

/** The per-request helpers every resource module's handlers use, built once from the deps. */
export interface HotspotKit {
  /** IANA zone of startTime/endTime without an offset. */
  zone: string;
  catalogue: AttributeCatalogue;
  /** Page and perPage of a query, the default and the maximum applied. */
  pageFor: (query: { page?: string; perPage?: string }) => PageParams;
  /** The RADIUS store of the caller's entity (403 when it has none). */
  storeFor: (c: Context<AppEnv>) => RadiusStore;
  /** Who makes the change, for the stamps. */
  actor: (c: Context<AppEnv>) => { name: string };
  /** Runs a store call of the request, its refusals turned into the API's errors. */
  call: <T>(c: Context<AppEnv>, fn: () => Promise<T>) => Promise<T>;
}

export function hotspotKit(deps: HotspotRouteDeps): HotspotKit {
  const max = deps.maxPerPage ?? 2000;
  return {
    zone: deps.timezone,
    catalogue: deps.catalogue,
    pageFor: (query) => pageOf(query, DEFAULT_PER_PAGE, max),
    storeFor: (c) => {
      const entity = c.get('principal').entity;
      const store = deps.storeOf(entity);
      if (!store) throw new ForbiddenError(`Entity '${entity}' has no RADIUS database.`);
      return store;
    },
    actor: (c) => ({ name: c.get('principal').user }),
    call: async (c, fn) => {
      try {
        return await fn();
      } catch (err) {
        if (
          err instanceof RadiusStoreError &&
          (err.code === 'unavailable' || err.code === 'schema_missing' || err.code === 'storage_full')
        ) {
          deps.onStoreError?.(c.get('principal').entity, err);
        }
        throw apiError(err);
      }
    },
  };
}
