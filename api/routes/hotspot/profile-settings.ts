/**
 * A profile itself (netsvc extension of API 3.1.0, marked `x-netsvc-extension`):
 * create it or change its description, read it with its attributes, set and
 * remove one catalogue attribute, delete it. What `netsvc profile
 * add|describe|set|unset` does, written the same way (reply `=`, check `+=`,
 * `Fall-Through = Yes`: docs/hotspot.md section 2) and with the same advice.
 */
import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import type { AttributeDefinition } from '../../../storage/radius/attribute-catalogue.js';
import { netsvcDictionaryNote, profileWarnings } from '../../../storage/radius/profile-checks.js';
import type { AttributeRow } from '../../../storage/radius/radius-store.js';
import type { AppEnv } from '../../context.js';
import { BadRequestError, NotFoundError } from '../../errors.js';
import { createRouter } from '../../router.js';
import { authFailures, netsvcExtension } from '../../schemas.js';
import { failure, json, messageResult, notFound, profileNameParam, tags, unavailable, type HotspotKit } from './shared.js';

/** Longest description: the width of `netsvc_profile.description`. */
const DESCRIPTION_MAX = 500;

const profileParams = z.object({ profileName: profileNameParam });
const attributeParams = z.object({
  profileName: profileNameParam,
  attribute: z
    .string()
    .max(64, 'must be at most 64 characters')
    .openapi({ param: { name: 'attribute', in: 'path' }, example: 'Session-Timeout' }),
});

const saveBody = z
  .object({
    description: z
      .string()
      .max(DESCRIPTION_MAX, `must be at most ${DESCRIPTION_MAX} characters`)
      .optional()
      .openapi({ description: 'What the profile is for; left out, a stored description stays' }),
  })
  .openapi('SaveProfile');

const setBody = z
  .object({
    value: z
      .union([z.string().max(1000, 'must be at most 1000 characters'), z.number()])
      .openapi({ description: 'In the catalogue’s unit (format of GET /hotspot/user-access)', example: 7200 }),
  })
  .openapi('SetProfileAttribute');

const jsonBody = <T extends z.ZodType>(schema: T) => ({ content: { 'application/json': { schema } }, required: true });
const unsupported = { 415: failure('The body was not sent as application/json') };

const profileRecord = z.object({ groupname: z.string(), description: z.string() });

const attributeView = z
  .object({
    id: z.string(),
    table: z.enum(['check', 'reply']),
    attribute: z.string(),
    op: z.string(),
    value: z.union([z.number(), z.string()]).openapi({ description: 'In the catalogue’s unit (`format`)' }),
    format: z.string().openapi({ description: 'The catalogue’s unit; String for attributes outside the catalogue' }),
    stored: z.string().openapi({ description: 'The value as FreeRADIUS reads it (bits/s, octets, …)' }),
  })
  .openapi('ProfileAttribute');

const notes = z.array(z.string()).openapi({
  description: 'Attributes FreeRADIUS reads only once netsvc’s dictionary and counters are installed (docs/hotspot.md section 3)',
});

const saveRoute = createRoute({
  method: 'put',
  path: '/profiles/{profileName}',
  tags,
  summary: 'Create a profile (with Fall-Through = Yes), or change its description',
  ...netsvcExtension,
  // Optional, as `netsvc profile add NAME` needs no description: no body is `{}`.
  request: { params: profileParams, body: { ...jsonBody(saveBody), required: false } },
  responses: {
    200: json(messageResult(profileRecord, 'ProfileSaved'), 'The profile existed; its description is as answered'),
    201: json(messageResult(profileRecord, 'ProfileCreated'), 'Created'),
    ...authFailures,
    ...unsupported,
    ...unavailable,
  },
});

const readRoute = createRoute({
  method: 'get',
  path: '/profiles/{profileName}',
  tags,
  summary: 'One profile: description, attributes, member count, and rows that keep users’ own values from winning',
  ...netsvcExtension,
  request: { params: profileParams },
  responses: {
    200: json(
      messageResult(
        profileRecord.extend({
          members: z.number().int(),
          attributes: z.array(attributeView),
          warnings: z.array(z.string()).openapi({ description: 'Rows that break the operator rule (docs/hotspot.md section 2)' }),
          notes,
        }),
        'ProfileDetail',
      ),
      'The profile',
    ),
    ...authFailures,
    ...unavailable,
    ...notFound,
  },
});

const setRoute = createRoute({
  method: 'put',
  path: '/profiles/{profileName}/attributes/{attribute}',
  tags,
  summary: 'Set a catalogue attribute on a profile (a repeatable one gains a value)',
  ...netsvcExtension,
  request: { params: attributeParams, body: jsonBody(setBody) },
  responses: {
    200: json(
      messageResult(
        attributeView
          .omit({ id: true })
          .extend({ groupname: z.string(), action: z.enum(['added', 'updated', 'unchanged']), notes }),
        'ProfileAttributeSet',
      ),
      'Set',
    ),
    ...authFailures,
    ...unsupported,
    ...unavailable,
    ...notFound,
  },
});

const unsetRoute = createRoute({
  method: 'delete',
  path: '/profiles/{profileName}/attributes/{attribute}',
  tags,
  summary: 'Remove a catalogue attribute (every value of it) from a profile; not set: status true, nothing to do',
  ...netsvcExtension,
  request: { params: attributeParams },
  responses: {
    200: json(
      messageResult(
        z.object({ groupname: z.string(), attribute: z.string(), removed: z.number().int() }),
        'ProfileAttributeRemoved',
      ),
      'Removed, or nothing to remove',
    ),
    ...authFailures,
    ...unavailable,
    ...notFound,
  },
});

const deleteRoute = createRoute({
  method: 'delete',
  path: '/profiles/{profileName}',
  tags,
  summary: 'Delete a profile: its radgroupcheck, radgroupreply and description rows (refused while users are attached)',
  ...netsvcExtension,
  request: { params: profileParams },
  responses: {
    200: json(messageResult(z.object({ groupname: z.string(), rows: z.number().int() }), 'ProfileDeleted'), 'Deleted'),
    ...authFailures,
    ...unavailable,
    ...notFound,
    409: failure('Users are attached to the profile (the message says how many)'),
  },
});

/** The routes that manage a profile itself. */
export function profileSettingsRoutes(kit: HotspotKit): OpenAPIHono<AppEnv> {
  const router = createRouter();
  const { catalogue: cat, storeFor, call } = kit;

  /** The catalogue's definition of a path's attribute; 400 naming it, and the known ones, when there is none. */
  const definition = (name: string): AttributeDefinition => {
    const def = cat.get(name);
    if (!def) {
      const known = cat
        .all()
        .map((d) => d.name)
        .join(', ');
      throw new BadRequestError('attribute', `Invalid parameter 'attribute': unknown attribute '${name}' (known: ${known}).`);
    }
    return def;
  };

  const view = (r: AttributeRow) => {
    const def = cat.get(r.attribute);
    return {
      id: String(r.id),
      table: r.table,
      attribute: r.attribute,
      op: r.op,
      value: cat.fromStored(def, r.value),
      format: def?.format ?? 'String',
      stored: r.value,
    };
  };

  router.openapi(saveRoute, async (c) => {
    const name = c.req.valid('param').profileName;
    const { description } = c.req.valid('json');
    const saved = await call(c, () => storeFor(c).saveProfile(name, description));
    const result = { groupname: saved.groupname, description: saved.description };
    if (saved.created) return c.json({ status: true as const, message: `Profile '${name}' created.`, result }, 201);
    return c.json({ status: true as const, message: `Profile '${name}' saved.`, result }, 200);
  });

  router.openapi(readRoute, async (c) => {
    const name = c.req.valid('param').profileName;
    const d = await call(c, () => storeFor(c).describeProfile(name));
    if (!d) throw new NotFoundError(`Profile '${name}' not found.`);
    const dictionaryNotes = new Set<string>();
    for (const a of d.attributes) {
      const note = netsvcDictionaryNote(a.attribute);
      if (note) dictionaryNotes.add(note);
    }
    return c.json(
      {
        status: true as const,
        message: `Profile '${d.groupname}'.`,
        result: {
          groupname: d.groupname,
          description: d.description,
          members: d.members,
          attributes: d.attributes.map(view),
          warnings: profileWarnings(d),
          notes: [...dictionaryNotes],
        },
      },
      200,
    );
  });

  router.openapi(setRoute, async (c) => {
    const { profileName: name, attribute } = c.req.valid('param');
    const def = definition(attribute);
    const stored = cat.toStored(def, c.req.valid('json').value);
    // The user-access route's check and wording, with the parameter named.
    if (!stored.ok) throw new BadRequestError('value', `Invalid parameter 'value': ${stored.error}.`);
    const write = cat.profileWrite(def, stored.value);
    const action = await call(c, () => storeFor(c).setProfileAttribute(name, write));
    const note = netsvcDictionaryNote(def.name);
    return c.json(
      {
        status: true as const,
        message: `Attribute '${def.name}' ${action === 'unchanged' ? 'unchanged' : 'set'} on profile '${name}'.`,
        result: {
          groupname: name,
          table: write.table,
          attribute: def.name,
          op: write.op,
          value: cat.fromStored(def, stored.value),
          format: def.format,
          stored: stored.value,
          action,
          notes: note ? [note] : [],
        },
      },
      200,
    );
  });

  router.openapi(unsetRoute, async (c) => {
    const { profileName: name, attribute } = c.req.valid('param');
    const def = definition(attribute);
    const store = storeFor(c);
    // unsetProfileAttribute removes nothing from an unknown profile without saying so: tell the client.
    const known = await call(c, () => store.describeProfile(name));
    if (!known) throw new NotFoundError(`Profile '${name}' not found.`);
    const removed = await call(c, () => store.unsetProfileAttribute(name, def.name, def.table));
    return c.json(
      {
        status: true as const,
        message: removed
          ? `Attribute '${def.name}' removed from profile '${name}'.`
          : `Attribute '${def.name}' is not set on profile '${name}'; no action needed.`,
        result: { groupname: name, attribute: def.name, removed },
      },
      200,
    );
  });

  router.openapi(deleteRoute, async (c) => {
    const name = c.req.valid('param').profileName;
    const gone = await call(c, () => storeFor(c).deleteProfile(name));
    return c.json({ status: true as const, message: `Profile '${name}' deleted.`, result: gone }, 200);
  });

  return router;
}
