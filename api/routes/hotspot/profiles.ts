/** Profiles (FreeRADIUS groups): attaching one to a user or detaching it, the list, and a profile's users. */
import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { NAME_MAX } from '../../../storage/radius/radius-store.js';
import type { AppEnv } from '../../context.js';
import { paged } from '../../envelope.js';
import { BadRequestError } from '../../errors.js';
import { createRouter } from '../../router.js';
import { authFailures } from '../../schemas.js';
import {
  emptyResult,
  json,
  messageResult,
  notFound,
  pagedSchema,
  pageQuery,
  PROFILE,
  profileNameParam,
  tags,
  unavailable,
  userIdOf,
  userIdParam,
  type HotspotKit,
} from './shared.js';

const profileBody = z.object({
  profileName: z.string().min(1, 'must not be empty').max(NAME_MAX, `must be at most ${NAME_MAX} characters`),
});

const conflictSchema = z
  .object({ status: z.literal(false), errorMessage: z.string(), result: emptyResult })
  .openapi('AttachProfileConflict');

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
    params: z.object({ profileName: profileNameParam }),
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

/** The profile routes. */
export function profileRoutes(kit: HotspotKit): OpenAPIHono<AppEnv> {
  const router = createRouter();
  const { pageFor, storeFor, actor, call } = kit;

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

  return router;
}
