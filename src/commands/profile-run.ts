/**
 * The work of `netsvc profile …` (registered in profile.ts), loaded when a profile command runs:
 * the RADIUS store, the profile checks and the attribute catalogue stay out of other commands' start.
 */
import type { Command } from 'commander';
import type { AttributeCatalogue } from '../../storage/radius/attribute-catalogue.js';
import { netsvcDictionaryNote, profileWarnings } from '../../storage/radius/profile-checks.js';
import { NAME_MAX, RadiusStoreError, type AttributeRow, type RadiusStore } from '../../storage/radius/radius-store.js';
import type { Config } from '../config.js';
import { radiusEntities } from '../areas/hotspot-entities.js';
import { UsageError, type CliContext } from './context.js';

const PROFILE_NAME = /^[A-Za-z0-9_-]+$/;

/** The entity whose RADIUS database a command uses: `--entity`, else the only one, else `default`. */
export function pickEntity(config: Config, wanted: string | undefined): [string, string] {
  const all = radiusEntities(config);
  if (wanted) {
    const hit = all.find(([name]) => name === wanted);
    if (!hit) throw new UsageError(`entity '${wanted}' has no radius database in the configuration`);
    return hit;
  }
  if (all.length === 1) return all[0]!;
  const def = all.find(([name]) => name === 'default');
  if (def) return def;
  throw new UsageError(`several entities have a radius database (${all.map(([n]) => n).join(', ')}): choose one with --entity`);
}

function checkName(name: string): string {
  if (!PROFILE_NAME.test(name) || name.length > NAME_MAX) {
    throw new UsageError(`profile name '${name}' must be 1-${NAME_MAX} characters of A-Z a-z 0-9 _ -`);
  }
  return name;
}

/** The attribute catalogue, loaded when a command needs it (its schema library is most of the CLI's start). */
async function catalogue(): Promise<AttributeCatalogue> {
  return (await import('../../storage/radius/attribute-catalogue.js')).defaultCatalogue();
}

function attributeLine(a: AttributeRow, cat: AttributeCatalogue): string {
  const def = cat.get(a.attribute);
  const shown = def && def.type === 'integer' ? ` (${cat.fromStored(def, a.value)} ${def.format})` : '';
  return `  ${a.table.padEnd(5)}  ${a.attribute.padEnd(28)} ${a.op.padEnd(2)} ${a.value}${shown}`;
}

/** Runs `fn` with the chosen entity's RadiusStore open, and closes it. */
export async function withRadius<T>(
  ctx: CliContext,
  cmd: Command,
  entity: string | undefined,
  fn: (store: RadiusStore) => Promise<T>,
): Promise<T> {
  const config = await ctx.config(cmd);
  const [, url] = pickEntity(config, entity);
  const { openEntityRadiusStore } = await import('../areas/hotspot.js');
  const store = openEntityRadiusStore(config, url);
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}

/** `profile list`. */
export function profileList(ctx: CliContext, cmd: Command, opts: { entity?: string; json?: boolean }): Promise<void> {
  return withRadius(ctx, cmd, opts.entity, async (store) => {
    const all = [];
    for (let page = 1; ; page++) {
      const rows = await store.listProfiles({ page, perPage: 1000 });
      all.push(...rows.slice(0, 1000));
      if (rows.length <= 1000) break;
    }
    if (opts.json) ctx.out(JSON.stringify(all, null, 2));
    else if (!all.length) ctx.out('no profiles');
    else for (const p of all) ctx.out(p.description ? `${p.groupname}\t${p.description}` : p.groupname);
  });
}

/** `profile add <name>`. */
export function profileAdd(
  ctx: CliContext,
  cmd: Command,
  name: string,
  opts: { entity?: string; description?: string },
): Promise<void> {
  return withRadius(ctx, cmd, opts.entity, async (store) => {
    const saved = await store.saveProfile(checkName(name), opts.description);
    ctx.out(`profile ${saved.groupname} saved${saved.description ? `: ${saved.description}` : ''}`);
  });
}

/** `profile describe <name>`. */
export function profileDescribe(
  ctx: CliContext,
  cmd: Command,
  name: string,
  opts: { entity?: string; json?: boolean },
): Promise<void> {
  return withRadius(ctx, cmd, opts.entity, async (store) => {
    const d = await store.describeProfile(name);
    if (!d) throw new RadiusStoreError('profile_not_found', `Profile '${name}' not found.`);
    const warnings = profileWarnings(d);
    if (opts.json) {
      ctx.out(JSON.stringify({ ...d, warnings }, null, 2));
      return;
    }
    ctx.out(
      `profile ${d.groupname}${d.description ? `: ${d.description}` : ''} (${d.members} member${d.members === 1 ? '' : 's'})`,
    );
    const cat = await catalogue();
    for (const a of d.attributes) ctx.out(attributeLine(a, cat));
    for (const w of warnings) ctx.out(`warning: ${w}`);
  });
}

/** `profile set <name> <attribute> <value>`. */
export function profileSet(
  ctx: CliContext,
  cmd: Command,
  name: string,
  attribute: string,
  value: string,
  opts: { entity?: string },
): Promise<void> {
  return withRadius(ctx, cmd, opts.entity, async (store) => {
    const cat = await catalogue();
    const def = cat.get(attribute);
    if (!def)
      throw new UsageError(
        `unknown attribute '${attribute}' (known: ${cat
          .all()
          .map((d) => d.name)
          .join(', ')})`,
      );
    const stored = cat.toStored(def, value);
    if (!stored.ok) throw new UsageError(stored.error);
    const action = await store.setProfileAttribute(checkName(name), cat.profileWrite(def, stored.value));
    // The stored value is in FreeRADIUS's unit (bits/s, bytes): the catalogue's beside it, as describe shows it.
    const unit = def.type === 'integer' ? ` (${cat.fromStored(def, stored.value)} ${def.format})` : '';
    ctx.out(`profile ${name}: ${action} ${def.name} ${def.profileOperator} ${stored.value}${unit}`);
    const note = netsvcDictionaryNote(def.name);
    if (note) ctx.err(`note: ${note}`);
  });
}

/** `profile unset <name> <attribute>`. */
export function profileUnset(
  ctx: CliContext,
  cmd: Command,
  name: string,
  attribute: string,
  opts: { entity?: string },
): Promise<void> {
  return withRadius(ctx, cmd, opts.entity, async (store) => {
    const def = (await catalogue()).get(attribute);
    if (!def) throw new UsageError(`unknown attribute '${attribute}'`);
    const n = await store.unsetProfileAttribute(checkName(name), def.name, def.table);
    ctx.out(`profile ${name}: ${n ? `removed ${def.name}` : `${def.name} was not set`}`);
  });
}

/** `profile delete <name>`: the store refuses an unknown profile and one users are attached to, in one line each. */
export function profileDelete(ctx: CliContext, cmd: Command, name: string, opts: { entity?: string }): Promise<void> {
  return withRadius(ctx, cmd, opts.entity, async (store) => {
    const gone = await store.deleteProfile(checkName(name));
    ctx.out(`profile ${gone.groupname} deleted (${gone.rows} row${gone.rows === 1 ? '' : 's'})`);
  });
}
