/**
 * The hotspot area (api.md 2.4 and 4.3, decisions.md Hotspot): sessions,
 * login attempts and quota purchases, local users, their profiles and their
 * access attributes. FreeRADIUS's database is reached only through the
 * entity's RadiusStore; these modules check parameters, convert attribute
 * units through the catalogue, and shape the envelopes.
 *
 * One module per resource, mounted here with `route()` (Hono's "larger
 * application" layout); shared.ts holds the schema pieces, the parsing and
 * the store-error mapping they share. The mounting order is the order of
 * the paths in the OpenAPI document.
 */
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv } from '../../context.js';
import { createRouter } from '../../router.js';
import { loginAttemptRoutes } from './login-attempts.js';
import { profileSettingsRoutes } from './profile-settings.js';
import { profileRoutes } from './profiles.js';
import { quotaPurchaseRoutes } from './quota-purchases.js';
import { sessionRoutes } from './sessions.js';
import { hotspotKit, type HotspotRouteDeps } from './shared.js';
import { userAccessRoutes } from './user-access.js';
import { userRoutes } from './users.js';

export type { HotspotRouteDeps } from './shared.js';

/** Builds the hotspot routes (mounted under /svc/api/hotspot behind the area's bearer auth). */
export function createHotspotRoutes(deps: HotspotRouteDeps): OpenAPIHono<AppEnv> {
  const kit = hotspotKit(deps);
  const router = createRouter();
  router.route('/', sessionRoutes(kit));
  router.route('/', loginAttemptRoutes(kit));
  router.route('/', quotaPurchaseRoutes(kit));
  router.route('/', userRoutes(kit));
  router.route('/', profileRoutes(kit));
  // netsvc's extension of 3.1.0: the profiles themselves (x-netsvc-extension in the OpenAPI document).
  router.route('/', profileSettingsRoutes(kit));
  router.route('/', userAccessRoutes(kit));
  return router;
}
