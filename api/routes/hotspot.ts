/**
 * The hotspot area (api.md 2.4 and 4.3, decisions.md Hotspot): sessions,
 * login attempts and quota purchases, local users, their profiles and their
 * access attributes. FreeRADIUS's database is reached only through the
 * entity's RadiusStore; this module checks parameters, converts attribute
 * units through the catalogue, and shapes the envelopes.
 */
import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
import ipaddr from 'ipaddr.js';
import { DateTime } from 'luxon';
import { freeradiusWouldUnquote, type AttributeCatalogue } from '../../storage/radius/attribute-catalogue.js';
import { normaliseMac } from '../../storage/radius/mac.js';
import { usernameFor } from '../../storage/radius/username.js';
import {
  INFO_FIELD_MAX,
  INFO_FIELDS,
  isUserId,
  NAME_MAX,
  RadiusStoreError,
  type AttributeRow,
  type AttributeWrite,
  type InfoField,
  type RadiusStore,
  type UserInfo,
  type UserType,
} from '../../storage/radius/radius-store.js';
import type { AppEnv } from '../context.js';
import { paged } from '../envelope.js';
import { BadRequestError, ConflictError, ForbiddenError, NotFoundError, UnavailableError } from '../errors.js';
import { checkYears, pageOf, pageParams, parseTimeParam, textParam, timeParam } from '../params.js';
import { createRouter } from '../router.js';
import { authFailures, failureSchema } from '../schemas.js';

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
/** Items one attach-access/detach-access request may carry. */
export const MAX_BULK_ITEMS = 100;
const PROFILE = /^[A-Za-z0-9_-]+$/;
const EMAIL = /^[^\s@'"<>()\\,;:]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+$/;
const CONTROL = /[\u0000-\u001f\u007f]/;

// ------------------------------------------------------------------ schemas

const json = <T extends z.ZodType>(schema: T, description: string) => ({
  description,
  content: { 'application/json': { schema } },
});
const failure = (description: string) => json(failureSchema, description);
const notFound = { 404: failure('Unknown user or profile') };
const unavailable = {
  503: failure('The entity\u2019s RADIUS database cannot be reached, did not answer in time, is full, or has no tables yet'),
};

const q = textParam;

const pageQuery = pageParams('Page size, default 100; larger than the maximum is reduced');

const timeParams = {
  startTime: timeParam(
    'startTime',
    'From this time on (inclusive): YYYY-MM-DD, YYYY-MM-DD HH:mm[:ss] in the service zone, or ISO 8601',
    '2026-03-25',
  ),
  endTime: timeParam('endTime', 'Up to this time (inclusive), same forms', '2026-03-26'),
};

const sessionFilterParams = {
  username: q('username', NAME_MAX, 'Exact user name'),
  hotspot: q('hotspot', 64, 'NAS identifier: the shortname of the NAS in FreeRADIUS\u2019s nas table'),
  nas: q('nas', 45, 'NAS IP address', '10.0.0.1'),
  macaddress: q('macaddress', 32, 'Client MAC, any common notation', 'AA-BB-CC-DD-EE-FF'),
  calledstationid: q('calledstationid', 32, 'Device (called station) MAC, any common notation'),
};

const pagedSchema = <T extends z.ZodType>(item: T, name: string) =>
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

const historicalRecord = z
  .object({
    radacctid: z.number().int(),
    hotspot: z.string(),
    username: z.string(),
    macaddress: z.string().openapi({ example: 'AA-BB-CC-DD-EE-FF' }),
    ipaddress: z.string(),
    acctstarttime: z.string().nullable().openapi({ example: '2026-03-25 09:00:00' }),
    acctstoptime: z.string().nullable(),
    acctsessiontime: z.number().int().openapi({ description: 'Seconds' }),
    calledstationid: z.string(),
    acctinputoctets: z.number().int(),
    acctoutputoctets: z.number().int(),
    acctterminatecause: z.string(),
    nas: z.string(),
  })
  .openapi('HistoricalSession');

const onlineRecord = z
  .object({
    radacctid: z.number().int(),
    hotspot: z.string(),
    username: z.string(),
    nas: z.string(),
    macaddress: z.string(),
    calledstationid: z.string(),
    ipaddress: z.string(),
    starttime: z.string().nullable(),
    traffic: z.string().openapi({ example: '1.50 MB' }),
    name: z.string(),
    totaltime: z.string().openapi({ example: '1d 01:00:00' }),
  })
  .openapi('OnlineSession');

const attemptRecord = z
  .object({ id: z.number().int(), username: z.string(), pass: z.literal('********'), reply: z.string(), authdate: z.string() })
  .openapi('LoginAttempt');

const purchaseRecord = z
  .object({
    id: z.number().int(),
    transaction_time: z.string(),
    username: z.string(),
    plan_name: z.string(),
    currency: z.string(),
    amount: z.string().openapi({ example: '10.00' }),
    user_profiles: z.string(),
    remarks: z.string(),
    create_by: z.string(),
    create_at: z.string(),
  })
  .openapi('QuotaPurchase');

const nullableText = z.string().nullable();
const userSummary = z
  .object({
    id: z.number().int(),
    username: z.string(),
    usertype: z.enum(['Username-Password', 'Auth-Type']).nullable(),
    profile: z.string().nullable().openapi({ example: 'gold, silver' }),
    firstname: nullableText,
    lastname: nullableText,
    email: nullableText,
    mobile: nullableText,
    gender: nullableText,
    disabled: z.boolean(),
  })
  .openapi('HotspotUser');

const userDetail = userSummary
  .extend({
    ...(Object.fromEntries(INFO_FIELDS.map((f) => [f, nullableText])) as Record<InfoField, typeof nullableText>),
    password: z.string().nullable().openapi({ example: 'S*******' }),
    createddate: z.string(),
    createdby: z.string(),
    updateddate: nullableText,
    updatedby: nullableText,
  })
  .openapi('HotspotUserDetail');

const stampSchema = z.object({
  id: z.string(),
  username: z.string(),
  createdby: z.string(),
  createddate: z.string(),
  updatedby: z.string().nullable(),
  updateddate: z.string().nullable(),
});

const infoBody = Object.fromEntries(
  INFO_FIELDS.map((f) => [
    f,
    z.string().max(INFO_FIELD_MAX[f], `must be at most ${INFO_FIELD_MAX[f]} characters`).nullable().optional(),
  ]),
) as Record<InfoField, z.ZodOptional<z.ZodNullable<z.ZodString>>>;

const usernameField = z.string().min(1, 'must not be empty').max(NAME_MAX, `must be at most ${NAME_MAX} characters`).openapi({
  description: 'Letters, digits and @ . _ : / - (FreeRADIUS\u2019s safe characters); a MAC in any notation for usertype mac',
  example: 'alice',
});
const passwordField = z.string().min(1, 'must not be empty').max(128, 'must be at most 128 characters (RADIUS User-Password)');
const profilesField = z
  .string()
  .max(2000, 'must be at most 2000 characters')
  .openapi({ description: 'One profile name or several separated by commas', example: 'gold,silver' });

const createBody = z
  .object({
    username: usernameField,
    usertype: z.enum(['user', 'mac', 'pin']),
    password: passwordField.optional(),
    disabled: z.boolean().optional(),
    profiles: profilesField.optional(),
    ...infoBody,
  })
  .openapi('HotspotUserCreate');

const updateBody = z
  .object({
    username: usernameField.optional(),
    password: passwordField.optional(),
    disabled: z.boolean().optional(),
    profiles: profilesField.optional(),
    ...infoBody,
  })
  .openapi('HotspotUserUpdate');

const profileBody = z.object({
  profileName: z.string().min(1, 'must not be empty').max(NAME_MAX, `must be at most ${NAME_MAX} characters`),
});

const attributeValue = z.union([z.string().max(1000, 'must be at most 1000 characters'), z.number()]);
const attachBody = z
  .object({
    attribute: z.string().max(64, 'must be at most 64 characters').optional(),
    value: attributeValue.optional(),
    attributes: z
      .array(z.object({ attribute: z.string().max(64, 'must be at most 64 characters'), value: attributeValue }))
      .max(MAX_BULK_ITEMS, `must hold at most ${MAX_BULK_ITEMS} items`)
      .optional(),
  })
  .openapi('AttachAccess');
const detachBody = z
  .object({
    attribute: z.string().max(64, 'must be at most 64 characters').optional(),
    attributes: z
      .array(z.object({ attribute: z.string().max(64, 'must be at most 64 characters') }))
      .max(MAX_BULK_ITEMS, `must hold at most ${MAX_BULK_ITEMS} items`)
      .optional(),
  })
  .openapi('DetachAccess');

const userIdParam = z.object({
  userId: z
    .string()
    .regex(/^\d{1,10}$/, 'must be an integer')
    .openapi({ param: { name: 'userId', in: 'path' }, example: '12' }),
});

const accessValue = z.object({
  id: z.string(),
  format: z.string(),
  value: z.union([z.number(), z.string(), z.array(z.union([z.number(), z.string()]))]),
});

const messageResult = <T extends z.ZodType>(result: T, name: string) =>
  z.object({ status: z.literal(true), message: z.string(), result }).openapi(name);

const attachAccessResponse = z
  .object({
    status: z.boolean(),
    message: z.string(),
    details: z.object({
      success: z.array(
        z.object({
          attribute: z.string(),
          value: z.union([z.number(), z.string()]),
          action: z.enum(['added', 'updated', 'unchanged']),
        }),
      ),
      errors: z.array(z.string()),
    }),
    result: z.object({ id: z.string(), username: z.string(), user_access: z.record(z.string(), accessValue) }),
  })
  .openapi('AttachAccessResult');

const detachAccessResponse = z
  .object({
    status: z.boolean(),
    message: z.string(),
    details: z.object({
      success: z.array(z.object({ attribute: z.string(), action: z.literal('detached'), message: z.string() })),
      skipped: z.array(z.object({ attribute: z.string(), message: z.string() })),
      errors: z.array(z.string()),
    }),
    result: z.object({ id: z.string(), username: z.string() }),
  })
  .openapi('DetachAccessResult');

/** The `result: []` api.md shows on some answers (z.never would break the OpenAPI document). */
const emptyResult = z.array(z.string()).max(0).openapi({ description: 'Always empty', example: [] });

const conflictSchema = z
  .object({ status: z.literal(false), errorMessage: z.string(), result: emptyResult })
  .openapi('AttachProfileConflict');

// ------------------------------------------------------------------ routes

const tags = ['hotspot'];

const historicalRoute = createRoute({
  method: 'get',
  path: '/historical-sessions',
  tags,
  summary: 'Accounting sessions (radacct), newest first; filters exact, MACs in any notation',
  request: { query: z.object({ ...sessionFilterParams, ipaddress: q('ipaddress', 45, 'User IP'), ...timeParams, ...pageQuery }) },
  responses: {
    200: json(pagedSchema(historicalRecord, 'HistoricalSessions'), 'Paged sessions'),
    ...authFailures,
    ...unavailable,
  },
});

const onlineRoute = createRoute({
  method: 'get',
  path: '/online-sessions',
  tags,
  summary: 'Sessions without a stop time, newest first',
  request: { query: z.object({ ...sessionFilterParams, ...timeParams, ...pageQuery }) },
  responses: { 200: json(pagedSchema(onlineRecord, 'OnlineSessions'), 'Paged online sessions'), ...authFailures, ...unavailable },
});

const attemptsRoute = createRoute({
  method: 'get',
  path: '/login-attempts',
  tags,
  summary: 'Authentication log (radpostauth), newest first; the password is never shown',
  request: {
    query: z.object({
      username: q('username', NAME_MAX, 'Exact user name'),
      reply: z
        .enum(['Access-Accept', 'Access-Reject'])
        .optional()
        .openapi({ param: { name: 'reply', in: 'query' }, description: 'Access-Accept or Access-Reject' }),
      ...timeParams,
      ...pageQuery,
    }),
  },
  responses: { 200: json(pagedSchema(attemptRecord, 'LoginAttempts'), 'Paged login attempts'), ...authFailures, ...unavailable },
});

const quotaRoute = createRoute({
  method: 'get',
  path: '/quota-purchase-report',
  tags,
  summary: 'Quota purchases, newest first; remarks is a substring match, the rest exact',
  request: {
    query: z.object({
      transaction_time: q('transaction_time', 19, 'YYYY-MM-DD (that day) or YYYY-MM-DD HH:mm:ss (exact)'),
      username: q('username', NAME_MAX, 'Exact user name'),
      plan_name: q('plan_name', 128, 'Exact plan name'),
      user_profiles: q('user_profiles', 500, 'Exact profile list'),
      remarks: q('remarks', 1000, 'Substring of the remarks'),
      ...timeParams,
      ...pageQuery,
    }),
  },
  responses: { 200: json(pagedSchema(purchaseRecord, 'QuotaPurchases'), 'Paged purchases'), ...authFailures, ...unavailable },
});

const listUsersRoute = createRoute({
  method: 'get',
  path: '/users',
  tags,
  summary: 'Local users, newest first',
  request: {
    query: z.object({
      id: z
        .string()
        .regex(/^\d{1,10}$/, 'must be an integer')
        .optional()
        .openapi({ param: { name: 'id', in: 'query' }, description: 'One user by id' }),
      username: q('username', NAME_MAX, 'Exact user name'),
      ...pageQuery,
    }),
  },
  responses: { 200: json(pagedSchema(userSummary, 'HotspotUsers'), 'Paged users'), ...authFailures, ...unavailable },
});

const getUserRoute = createRoute({
  method: 'get',
  path: '/users/{userId}',
  tags,
  summary: 'One user, detail form (password masked)',
  request: { params: userIdParam },
  responses: {
    200: json(messageResult(z.array(userDetail), 'HotspotUserResult'), 'The user'),
    ...authFailures,
    ...unavailable,
    ...notFound,
  },
});

const createUserRoute = createRoute({
  method: 'post',
  path: '/users',
  tags,
  summary: 'Create a user: user (password), mac (MAC) or pin',
  request: { body: { content: { 'application/json': { schema: createBody } }, required: true } },
  responses: {
    200: json(messageResult(stampSchema, 'HotspotUserCreated'), 'Created'),
    ...authFailures,
    ...unavailable,
    ...notFound,
    409: failure('Username already exists'),
  },
});

const updateUserRoute = createRoute({
  method: 'post',
  path: '/users/{userId}',
  tags,
  summary: 'Update a user: any subset of the fields; profiles replaces the set; username renames',
  request: { params: userIdParam, body: { content: { 'application/json': { schema: updateBody } }, required: true } },
  responses: {
    200: json(messageResult(z.array(userDetail), 'HotspotUserUpdated'), 'Updated'),
    ...authFailures,
    ...unavailable,
    ...notFound,
    409: failure('Username already exists'),
  },
});

const deleteUserRoute = createRoute({
  method: 'delete',
  path: '/users/{userId}',
  tags,
  summary: 'Delete a user (radcheck, radreply, radusergroup, info); history stays',
  request: { params: userIdParam },
  responses: {
    200: json(messageResult(z.object({ id: z.string(), username: z.string() }), 'HotspotUserDeleted'), 'Deleted'),
    ...authFailures,
    ...unavailable,
    ...notFound,
  },
});

const attachProfileRoute = createRoute({
  method: 'post',
  path: '/users/{userId}/actions/attach-profile',
  tags,
  summary: 'Attach a profile to a user',
  request: { params: userIdParam, body: { content: { 'application/json': { schema: profileBody } }, required: true } },
  responses: {
    200: json(
      messageResult(z.object({ username: z.string(), attached: z.string(), profile: z.string() }), 'ProfileAttached'),
      'Attached',
    ),
    ...authFailures,
    ...unavailable,
    ...notFound,
    409: json(conflictSchema, 'The user already has the profile'),
  },
});

const detachProfileRoute = createRoute({
  method: 'post',
  path: '/users/{userId}/actions/detach-profile',
  tags,
  summary: 'Detach a profile from a user (not attached: status true, nothing to do)',
  request: { params: userIdParam, body: { content: { 'application/json': { schema: profileBody } }, required: true } },
  responses: {
    200: json(
      z
        .object({
          status: z.literal(true),
          message: z.string(),
          result: z.union([z.object({ username: z.string(), detached: z.string(), profile: z.string() }), emptyResult]),
        })
        .openapi('ProfileDetached'),
      'Detached, or nothing to detach',
    ),
    ...authFailures,
    ...unavailable,
    ...notFound,
  },
});

const profilesRoute = createRoute({
  method: 'get',
  path: '/profiles',
  tags,
  summary: 'Profiles (FreeRADIUS groups) by name',
  request: { query: z.object({ ...pageQuery }) },
  responses: {
    200: json(
      pagedSchema(z.object({ groupname: z.string(), description: z.string() }).openapi('Profile'), 'Profiles'),
      'Paged profiles',
    ),
    ...authFailures,
    ...unavailable,
  },
});

const profileUsersRoute = createRoute({
  method: 'get',
  path: '/profiles/{profileName}/users',
  tags,
  summary: 'Users attached to a profile',
  request: {
    params: z.object({
      profileName: z
        .string()
        .regex(PROFILE, 'must be letters, digits, - and _')
        .max(NAME_MAX, `must be at most ${NAME_MAX} characters`)
        .openapi({ param: { name: 'profileName', in: 'path' }, example: 'gold' }),
    }),
    query: z.object({ ...pageQuery }),
  },
  responses: {
    200: json(
      pagedSchema(
        z
          .object({
            id: z.string(),
            username: z.string(),
            firstname: z.string(),
            lastname: z.string(),
            profileName: z.string(),
            priority: z.string(),
          })
          .openapi('ProfileUser'),
        'ProfileUsers',
      ),
      'Paged profile users',
    ),
    ...authFailures,
    ...unavailable,
    ...notFound,
  },
});

const definitionsRoute = createRoute({
  method: 'get',
  path: '/user-access',
  tags,
  summary: 'Access attribute definitions (the catalogue)',
  responses: {
    200: json(
      messageResult(
        z.record(z.string(), z.object({ text: z.string(), format: z.string(), multiple: z.boolean() })),
        'AccessDefinitions',
      ),
      'Definitions by attribute name',
    ),
    ...authFailures,
  },
});

const userAccessRoute = createRoute({
  method: 'get',
  path: '/user-access/{userId}',
  tags,
  summary: 'Access attributes set on a user',
  request: { params: userIdParam },
  responses: {
    200: json(
      messageResult(
        z.object({ id: z.string(), username: z.string(), attributes: z.array(z.record(z.string(), accessValue)) }),
        'UserAccess',
      ),
      'The user’s attributes',
    ),
    ...authFailures,
    ...unavailable,
    ...notFound,
  },
});

const attachAccessRoute = createRoute({
  method: 'post',
  path: '/user-access/{userId}/actions/attach-access',
  tags,
  summary: 'Add attributes or update their values; per-item failures in details.errors',
  request: { params: userIdParam, body: { content: { 'application/json': { schema: attachBody } }, required: true } },
  responses: {
    200: json(attachAccessResponse, 'Processed (some items may have failed)'),
    400: json(attachAccessResponse, 'Every item failed, or the body is malformed'),
    401: authFailures[401],
    403: authFailures[403],
    ...unavailable,
    ...notFound,
  },
});

const detachAccessRoute = createRoute({
  method: 'post',
  path: '/user-access/{userId}/actions/detach-access',
  tags,
  summary: 'Remove attributes from a user',
  request: { params: userIdParam, body: { content: { 'application/json': { schema: detachBody } }, required: true } },
  responses: {
    200: json(detachAccessResponse, 'Processed'),
    400: json(detachAccessResponse, 'Every item failed, or the body is malformed'),
    401: authFailures[401],
    403: authFailures[403],
    ...unavailable,
    ...notFound,
  },
});

// ------------------------------------------------------------------ parsing

/** The startTime/endTime of a request as epoch ms (instants, so a range across a DST change compares as time passed). */
function timeRange(query: { startTime?: string; endTime?: string }, zone: string): { from?: number; to?: number } {
  const from = query.startTime === undefined ? undefined : parseTimeParam('startTime', query.startTime, zone).toMillis();
  const to = query.endTime === undefined ? undefined : parseTimeParam('endTime', query.endTime, zone).toMillis();
  if (from !== undefined && to !== undefined && to < from)
    throw new BadRequestError('endTime', "Invalid parameter 'endTime': it must not be before 'startTime'.");
  return { from, to };
}

function macParam(name: string, value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const mac = normaliseMac(value);
  if (!mac) throw new BadRequestError(name, `Invalid parameter '${name}': '${value}' is not a MAC address.`);
  return mac;
}

function ipParam(name: string, value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const ok =
    ipaddr.IPv4.isValidFourPartDecimal(value) || (value.includes(':') && !value.includes('%') && ipaddr.IPv6.isValid(value));
  if (!ok) throw new BadRequestError(name, `Invalid parameter '${name}': '${value}' is not an IP address.`);
  return value;
}

function userIdOf(text: string): number {
  const id = Number(text);
  if (!Number.isSafeInteger(id) || id < 1)
    throw new BadRequestError('userId', "Invalid parameter 'userId': must be an integer of at least 1.");
  // Past every backend's id column: no such user, and PostgreSQL would refuse to compare it.
  if (!isUserId(id)) throw new NotFoundError(`User with ID: ${id} not found.`);
  return id;
}

/** Profile names of a `profiles` string: split on commas, trimmed, each checked, duplicates dropped. */
export function parseProfiles(text: string): string[] {
  const out: string[] = [];
  for (const raw of text.split(',')) {
    const name = raw.trim();
    if (!name) continue;
    if (!PROFILE.test(name) || name.length > NAME_MAX) {
      throw new BadRequestError(
        'profiles',
        `Invalid parameter 'profiles': '${name}' is not a profile name (letters, digits, - and _).`,
      );
    }
    if (!out.includes(name)) out.push(name);
  }
  return out;
}

/** The name a new user is stored under (username.ts), checked before the store is asked. */
function checkUsername(name: string, usertype: UserType): string {
  try {
    return usernameFor(usertype, name);
  } catch (err) {
    throw apiError(err);
  }
}

function checkPassword(password: string): string {
  if (CONTROL.test(password))
    throw new BadRequestError('password', "Invalid parameter 'password': must not contain control characters.");
  if (freeradiusWouldUnquote(password)) {
    throw new BadRequestError(
      'password',
      "Invalid parameter 'password': must not be wrapped in quotes (FreeRADIUS would strip or expand them).",
    );
  }
  return password;
}

function checkInfo(body: Partial<Record<InfoField, string | null | undefined>>): UserInfo {
  const out: UserInfo = {};
  for (const f of INFO_FIELDS) {
    const v = body[f];
    if (v === undefined) continue;
    if (v !== null && CONTROL.test(v))
      throw new BadRequestError(f, `Invalid parameter '${f}': must not contain control characters.`);
    if (f === 'email' && v !== null && v !== '' && !EMAIL.test(v))
      throw new BadRequestError(f, `Invalid parameter 'email': '${v}' is not an email address.`);
    if (f === 'birthdate' && v !== null && v !== '') {
      const d = DateTime.fromFormat(v, 'yyyy-LL-dd');
      if (!/^\d{4}-\d{2}-\d{2}$/.test(v) || !d.isValid || d.year < 1900 || d > DateTime.now()) {
        throw new BadRequestError(f, `Invalid parameter 'birthdate': '${v}' is not a past date YYYY-MM-DD.`);
      }
    }
    out[f] = v;
  }
  return out;
}

/** Turns store refusals into the API's typed errors. */
function apiError(err: unknown): unknown {
  if (!(err instanceof RadiusStoreError)) return err;
  switch (err.code) {
    case 'user_not_found':
    case 'profile_not_found':
      return new NotFoundError(err.message);
    case 'username_taken':
      return new ConflictError(err.message);
    case 'profile_attached':
      return new ConflictError(err.message, { result: [] });
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

/** Builds the hotspot routes (mounted under /svc/api/hotspot behind the area's bearer auth). */
export function createHotspotRoutes(deps: HotspotRouteDeps): OpenAPIHono<AppEnv> {
  const router = createRouter();
  const zone = deps.timezone;
  const max = deps.maxPerPage ?? 2000;
  const pageFor = (query: { page?: string; perPage?: string }) => pageOf(query, DEFAULT_PER_PAGE, max);
  const cat = deps.catalogue;

  const storeFor = (c: Context<AppEnv>): RadiusStore => {
    const entity = c.get('principal').entity;
    const store = deps.storeOf(entity);
    if (!store) throw new ForbiddenError(`Entity '${entity}' has no RADIUS database.`);
    return store;
  };
  const actor = (c: Context<AppEnv>) => ({ name: c.get('principal').user });

  /** Runs a store call of the request, its refusals turned into the API's errors. */
  const call = async <T>(c: Context<AppEnv>, fn: () => Promise<T>): Promise<T> => {
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
  };

  /** The user_access map: attribute name → id, format and value in the client's unit. */
  const accessMap = (rows: AttributeRow[]) => {
    const out: Record<string, z.infer<typeof accessValue>> = {};
    for (const r of rows) {
      const def = cat.get(r.attribute);
      const value = cat.fromStored(def, r.value);
      const prev = out[r.attribute];
      if (def?.multiple) {
        // A repeatable attribute collects its values; ids are joined in row order.
        const values = prev ? (Array.isArray(prev.value) ? prev.value : [prev.value]) : [];
        out[r.attribute] = { id: prev ? `${prev.id},${r.id}` : String(r.id), format: def.format, value: [...values, value] };
      } else {
        out[r.attribute] = { id: String(r.id), format: def?.format ?? 'String', value };
      }
    }
    return out;
  };

  router.openapi(historicalRoute, async (c) => {
    const qy = c.req.valid('query');
    const page = pageFor(qy);
    const rows = await call(c, () =>
      storeFor(c).historicalSessions(
        {
          username: qy.username,
          hotspot: qy.hotspot,
          nas: ipParam('nas', qy.nas),
          macaddress: macParam('macaddress', qy.macaddress),
          calledstationid: macParam('calledstationid', qy.calledstationid),
          ipaddress: ipParam('ipaddress', qy.ipaddress),
          ...timeRange(qy, zone),
        },
        page,
      ),
    );
    return c.json(paged(rows, page.page, page.perPage), 200);
  });

  router.openapi(onlineRoute, async (c) => {
    const qy = c.req.valid('query');
    const page = pageFor(qy);
    const rows = await call(c, () =>
      storeFor(c).onlineSessions(
        {
          username: qy.username,
          hotspot: qy.hotspot,
          nas: ipParam('nas', qy.nas),
          macaddress: macParam('macaddress', qy.macaddress),
          calledstationid: macParam('calledstationid', qy.calledstationid),
          ...timeRange(qy, zone),
        },
        page,
      ),
    );
    return c.json(paged(rows, page.page, page.perPage), 200);
  });

  router.openapi(attemptsRoute, async (c) => {
    const qy = c.req.valid('query');
    const page = pageFor(qy);
    const rows = await call(c, () =>
      storeFor(c).loginAttempts({ username: qy.username, reply: qy.reply, ...timeRange(qy, zone) }, page),
    );
    return c.json(paged(rows, page.page, page.perPage) as z.infer<ReturnType<typeof pagedSchema<typeof attemptRecord>>>, 200);
  });

  router.openapi(quotaRoute, async (c) => {
    const qy = c.req.valid('query');
    const page = pageFor(qy);
    if (qy.transaction_time !== undefined) {
      const tt = qy.transaction_time;
      const valid =
        (/^\d{4}-\d{2}-\d{2}$/.test(tt) && DateTime.fromISO(tt).isValid) ||
        (/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/.test(tt) && DateTime.fromFormat(tt, 'yyyy-LL-dd HH:mm:ss').isValid);
      if (!valid)
        throw new BadRequestError(
          'transaction_time',
          `Invalid parameter 'transaction_time': '${tt}' is not YYYY-MM-DD or YYYY-MM-DD HH:mm:ss.`,
        );
      checkYears('transaction_time', DateTime.fromISO(tt.slice(0, 10), { zone }));
    }
    const rows = await call(c, () =>
      storeFor(c).quotaPurchases(
        {
          transaction_time: qy.transaction_time,
          username: qy.username,
          plan_name: qy.plan_name,
          user_profiles: qy.user_profiles,
          remarks: qy.remarks,
          ...timeRange(qy, zone),
        },
        page,
      ),
    );
    return c.json(paged(rows, page.page, page.perPage), 200);
  });

  router.openapi(listUsersRoute, async (c) => {
    const qy = c.req.valid('query');
    const page = pageFor(qy);
    const rows = await call(c, () =>
      storeFor(c).listUsers({ id: qy.id === undefined ? undefined : Number(qy.id), username: qy.username }, page),
    );
    return c.json(paged(rows, page.page, page.perPage), 200);
  });

  router.openapi(getUserRoute, async (c) => {
    const id = userIdOf(c.req.valid('param').userId);
    const user = await call(c, () => storeFor(c).getUser(id));
    if (!user) throw new NotFoundError(`User with ID: ${id} not found.`);
    return c.json({ status: true as const, message: 'User retrieved successfully.', result: [user] }, 200);
  });

  router.openapi(createUserRoute, async (c) => {
    const b = c.req.valid('json');
    const username = checkUsername(b.username, b.usertype);
    if (b.usertype === 'user' && b.password === undefined)
      throw new BadRequestError('password', "Missing required parameter 'password'.");
    if (b.usertype !== 'user' && b.password !== undefined) {
      throw new BadRequestError(
        'password',
        `Invalid parameter 'password': a '${b.usertype}' user has no password (it authenticates by Auth-Type := Accept).`,
      );
    }
    const stamp = await call(c, () =>
      storeFor(c).createUser(
        {
          username,
          usertype: b.usertype,
          password: b.password === undefined ? undefined : checkPassword(b.password),
          disabled: b.disabled,
          profiles: b.profiles === undefined ? undefined : parseProfiles(b.profiles),
          ...checkInfo(b),
        },
        actor(c),
      ),
    );
    return c.json({ status: true as const, message: `User '${stamp.username}' created successfully.`, result: stamp }, 200);
  });

  router.openapi(updateUserRoute, async (c) => {
    const id = userIdOf(c.req.valid('param').userId);
    const b = c.req.valid('json');
    // The username is checked by the store against the user's stored type (a MAC only for a mac user).
    const user = await call(c, () =>
      storeFor(c).updateUser(
        id,
        {
          username: b.username,
          password: b.password === undefined ? undefined : checkPassword(b.password),
          disabled: b.disabled,
          profiles: b.profiles === undefined ? undefined : parseProfiles(b.profiles),
          ...checkInfo(b),
        },
        actor(c),
      ),
    );
    return c.json({ status: true as const, message: `User '${user.username}' updated successfully.`, result: [user] }, 200);
  });

  router.openapi(deleteUserRoute, async (c) => {
    const id = userIdOf(c.req.valid('param').userId);
    const gone = await call(c, () => storeFor(c).deleteUser(id));
    return c.json({ status: true as const, message: `User '${gone.username}' deleted successfully.`, result: gone }, 200);
  });

  router.openapi(attachProfileRoute, async (c) => {
    const id = userIdOf(c.req.valid('param').userId);
    const profile = c.req.valid('json').profileName.trim();
    if (!PROFILE.test(profile))
      throw new BadRequestError('profileName', "Invalid parameter 'profileName': use letters, digits, - and _ only.");
    const m = await call(c, () => storeFor(c).attachProfile(id, profile, actor(c)));
    return c.json(
      {
        status: true as const,
        message: `Profile '${profile}' attached to user '${m.username}'.`,
        result: { username: m.username, attached: profile, profile: m.profile },
      },
      200,
    );
  });

  router.openapi(detachProfileRoute, async (c) => {
    const id = userIdOf(c.req.valid('param').userId);
    const profile = c.req.valid('json').profileName.trim();
    if (!PROFILE.test(profile))
      throw new BadRequestError('profileName', "Invalid parameter 'profileName': use letters, digits, - and _ only.");
    const m = await call(c, () => storeFor(c).detachProfile(id, profile, actor(c)));
    if (!m.changed) {
      return c.json(
        {
          status: true as const,
          message: `User '${m.username}' is not attached to profile '${profile}'; no action needed.`,
          result: [] as string[],
        },
        200,
      );
    }
    return c.json(
      {
        status: true as const,
        message: `Profile '${profile}' detached from user '${m.username}'.`,
        result: { username: m.username, detached: profile, profile: m.profile },
      },
      200,
    );
  });

  router.openapi(profilesRoute, async (c) => {
    const page = pageFor(c.req.valid('query'));
    const rows = await call(c, () => storeFor(c).listProfiles(page));
    return c.json(paged(rows, page.page, page.perPage), 200);
  });

  router.openapi(profileUsersRoute, async (c) => {
    const page = pageFor(c.req.valid('query'));
    const name = c.req.valid('param').profileName;
    const rows = await call(c, () => storeFor(c).profileUsers(name, page));
    return c.json(paged(rows, page.page, page.perPage), 200);
  });

  router.openapi(definitionsRoute, (c) => {
    storeFor(c);
    return c.json({ status: true as const, message: 'Access attribute definitions.', result: cat.publicMap() }, 200);
  });

  router.openapi(userAccessRoute, async (c) => {
    const id = userIdOf(c.req.valid('param').userId);
    const u = await call(c, () => storeFor(c).userAttributes(id));
    const attributes = u.attributes.map((r) => {
      const def = cat.get(r.attribute);
      return { [r.attribute]: { id: String(r.id), format: def?.format ?? 'String', value: cat.fromStored(def, r.value) } };
    });
    return c.json(
      {
        status: true as const,
        message: `Attributes of user '${u.username}'.`,
        result: { id: u.id, username: u.username, attributes },
      },
      200,
    );
  });

  router.openapi(attachAccessRoute, async (c) => {
    const id = userIdOf(c.req.valid('param').userId);
    const b = c.req.valid('json');
    const items =
      b.attributes ??
      (b.attribute !== undefined
        ? [{ attribute: b.attribute, value: b.value }]
        : (() => {
            throw new BadRequestError('attribute', "Missing required parameter 'attribute' (or 'attributes').");
          })());
    const store = storeFor(c);
    const errors: string[] = [];
    const accepted: Array<{ attribute: string; value: number | string; write: AttributeWrite }> = [];
    for (const item of items) {
      const def = cat.get(item.attribute);
      if (!def) {
        errors.push(`Unknown attribute '${item.attribute}'.`);
        continue;
      }
      if (item.value === undefined) {
        errors.push(`${def.name}: value is required.`);
        continue;
      }
      const stored = cat.toStored(def, item.value);
      if (!stored.ok) {
        errors.push(stored.error);
        continue;
      }
      accepted.push({ attribute: def.name, value: cat.fromStored(def, stored.value), write: cat.userWrite(def, stored.value) });
    }
    const actions = accepted.length
      ? await call(c, () =>
          store.setUserAttributes(
            id,
            accepted.map((a) => a.write),
            actor(c),
          ),
        )
      : [];
    const u = await call(c, () => store.userAttributes(id));
    const success = accepted.map((a, i) => ({ attribute: a.attribute, value: a.value, action: actions[i]! }));
    const body = {
      status: success.length > 0,
      message: `Processed ${items.length} attribute(s): ${success.length} succeeded, ${errors.length} failed.`,
      details: { success, errors },
      result: { id: u.id, username: u.username, user_access: accessMap(u.attributes) },
    };
    return success.length ? c.json(body, 200) : c.json(body, 400);
  });

  router.openapi(detachAccessRoute, async (c) => {
    const id = userIdOf(c.req.valid('param').userId);
    const b = c.req.valid('json');
    const items =
      b.attributes ??
      (b.attribute !== undefined
        ? [{ attribute: b.attribute }]
        : (() => {
            throw new BadRequestError('attribute', "Missing required parameter 'attribute' (or 'attributes').");
          })());
    const store = storeFor(c);
    const errors: string[] = [];
    const known: Array<{ attribute: string; table: 'check' | 'reply' }> = [];
    for (const item of items) {
      const def = cat.get(item.attribute);
      if (!def) errors.push(`Unknown attribute '${item.attribute}'.`);
      else known.push({ attribute: def.name, table: def.table });
    }
    const counts = known.length ? await call(c, () => store.unsetUserAttributes(id, known, actor(c))) : [];
    const u = await call(c, () => store.userAttributes(id));
    const success: Array<{ attribute: string; action: 'detached'; message: string }> = [];
    const skipped: Array<{ attribute: string; message: string }> = [];
    known.forEach((k, i) => {
      if ((counts[i] ?? 0) > 0)
        success.push({ attribute: k.attribute, action: 'detached', message: `Attribute '${k.attribute}' detached.` });
      else skipped.push({ attribute: k.attribute, message: `Attribute '${k.attribute}' is not set on user '${u.username}'.` });
    });
    const body = {
      status: errors.length === 0 || success.length + skipped.length > 0,
      message: `Processed ${items.length} attribute(s): ${success.length} detached, ${skipped.length} skipped, ${errors.length} failed.`,
      details: { success, skipped, errors },
      result: { id: u.id, username: u.username },
    };
    return body.status ? c.json(body, 200) : c.json(body, 400);
  });

  return router;
}
