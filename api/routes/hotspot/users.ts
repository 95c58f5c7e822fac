/** Local users: list, detail, create, update (rename, password, profiles, info) and delete. */
import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { DateTime } from 'luxon';
import { freeradiusWouldUnquote } from '../../../storage/radius/attribute-catalogue.js';
import { usernameFor } from '../../../storage/radius/username.js';
import {
  INFO_FIELD_MAX,
  INFO_FIELDS,
  NAME_MAX,
  type InfoField,
  type UserInfo,
  type UserType,
} from '../../../storage/radius/radius-store.js';
import type { AppEnv } from '../../context.js';
import { paged } from '../../envelope.js';
import { BadRequestError, NotFoundError } from '../../errors.js';
import { createRouter } from '../../router.js';
import { authFailures } from '../../schemas.js';
import {
  apiError,
  failure,
  json,
  messageResult,
  notFound,
  pagedSchema,
  pageQuery,
  PROFILE,
  q,
  tags,
  unavailable,
  userIdOf,
  userIdParam,
  type HotspotKit,
} from './shared.js';

const EMAIL = /^[^\s@'"<>()\\,;:]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+$/;
const CONTROL = /[\u0000-\u001f\u007f]/;

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

/** The fields create and update write alike, each checked: password, disabled, profiles and the user info. */
function checkedFields(
  b: { password?: string; disabled?: boolean; profiles?: string } & Partial<Record<InfoField, string | null | undefined>>,
): { password?: string; disabled?: boolean; profiles?: string[] } & UserInfo {
  return {
    password: b.password === undefined ? undefined : checkPassword(b.password),
    disabled: b.disabled,
    profiles: b.profiles === undefined ? undefined : parseProfiles(b.profiles),
    ...checkInfo(b),
  };
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

/** The user routes. */
export function userRoutes(kit: HotspotKit): OpenAPIHono<AppEnv> {
  const router = createRouter();
  const { pageFor, storeFor, actor, call } = kit;

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
          ...checkedFields(b),
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
          ...checkedFields(b),
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

  return router;
}
