/** Access attributes: the catalogue's definitions, a user's attributes, attaching and detaching them. */
import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import type { AttributeRow, AttributeWrite } from '../../../storage/radius/radius-store.js';
import type { AppEnv } from '../../context.js';
import { BadRequestError } from '../../errors.js';
import { createRouter } from '../../router.js';
import { authFailures } from '../../schemas.js';
import { json, messageResult, notFound, tags, unavailable, userIdOf, userIdParam, type HotspotKit } from './shared.js';

/** Items one attach-access/detach-access request may carry. */
export const MAX_BULK_ITEMS = 100;

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

const accessValue = z.object({
  id: z.string(),
  format: z.string(),
  value: z.union([z.number(), z.string(), z.array(z.union([z.number(), z.string()]))]),
});

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

/** The access attribute routes. */
export function userAccessRoutes(kit: HotspotKit): OpenAPIHono<AppEnv> {
  const router = createRouter();
  const { catalogue: cat, storeFor, actor, call } = kit;

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
