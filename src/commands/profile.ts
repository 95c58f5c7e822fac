/**
 * `netsvc profile …`: hotspot profiles (FreeRADIUS groups) from the command
 * line. Attributes are written the way that lets a user's own value win:
 * reply items with `=`, check items with `+=`, and `Fall-Through = Yes` on
 * every profile so all attached profiles apply (docs/hotspot.md). `describe`
 * points out rows of profiles made elsewhere that break that rule.
 */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import type { AttributeCatalogue } from '../../storage/radius/attribute-catalogue.js';
import {
  NAME_MAX,
  RadiusStoreError,
  type AttributeRow,
  type ProfileDescription,
  type RadiusStore,
} from '../../storage/radius/radius-store.js';
import type { Config } from '../config.js';
import { radiusEntities } from '../areas/hotspot-entities.js';
import { UsageError, withGlobalOptions, type CliContext } from './context.js';

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

/** Warnings about rows that stop a user's own value from winning, or stop later profiles from applying. */
export function profileWarnings(d: ProfileDescription): string[] {
  const out: string[] = [];
  const fallThrough = d.attributes.some(
    (a) => a.table === 'reply' && a.attribute.toLowerCase() === 'fall-through' && /^yes$/i.test(a.value),
  );
  if (!fallThrough) {
    out.push(
      "no 'Fall-Through = Yes' in radgroupreply: FreeRADIUS applies no profile after this one (netsvc profile set adds it)",
    );
  }
  for (const a of d.attributes) {
    if (a.attribute.toLowerCase() === 'fall-through') continue;
    if (a.table === 'reply' && a.op === ':=') out.push(`reply ${a.attribute} uses ':=': it replaces a user's own value; use '='`);
    if (a.table === 'check' && a.op === ':=')
      out.push(`check ${a.attribute} uses ':=': it replaces a user's own value; use '+='`);
    if (a.table === 'check' && (a.op === '=' || a.op === '=='))
      out.push(`check ${a.attribute} uses '${a.op}': that is a comparison, not a setting`);
  }
  return out;
}

/** Attributes radius/dictionary.netsvc defines (FreeRADIUS knows them only once it is installed). */
function netsvcDictionaryAttributes(): Set<string> {
  // From src/commands/ (sources) or dist/src/commands/ (compiled): the package root holds radius/.
  for (const up of ['../../radius/dictionary.netsvc', '../../../radius/dictionary.netsvc']) {
    const path = fileURLToPath(new URL(up, import.meta.url));
    if (existsSync(path)) return new Set([...readFileSync(path, 'utf8').matchAll(/^ATTRIBUTE\s+(\S+)/gm)].map((m) => m[1]!));
  }
  return new Set();
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

/** Registers `profile list|add|describe|set|unset`. */
export function registerProfileCommands(program: Command, ctx: CliContext): void {
  const profile = withGlobalOptions(program.command('profile')).description(
    'hotspot profiles (FreeRADIUS groups) and their attributes',
  );
  const entityOpt = (c: Command) =>
    withGlobalOptions(c).option('-e, --entity <name>', 'entity whose RADIUS database to use (default: the only one, or default)');

  entityOpt(profile.command('list'))
    .description(
      'list profiles: groups in radgroupcheck, radgroupreply, radusergroup or netsvc (the disabled-users group is hidden)',
    )
    .option('--json', 'print JSON')
    .action((opts: { entity?: string; json?: boolean }, cmd: Command) =>
      withRadius(ctx, cmd, opts.entity, async (store) => {
        const all = [];
        for (let page = 1; ; page++) {
          const rows = await store.listProfiles({ page, perPage: 1000 });
          all.push(...rows.slice(0, 1000));
          if (rows.length <= 1000) break;
        }
        if (opts.json) ctx.out(JSON.stringify(all, null, 2));
        else if (!all.length) ctx.out('no profiles');
        else for (const p of all) ctx.out(p.description ? `${p.groupname}\t${p.description}` : p.groupname);
      }),
    );

  entityOpt(profile.command('add <name>'))
    .description("create a profile (or change its description); adds 'Fall-Through = Yes' so later profiles apply too")
    .option('--description <text>', 'what the profile is for')
    .action((name: string, opts: { entity?: string; description?: string }, cmd: Command) =>
      withRadius(ctx, cmd, opts.entity, async (store) => {
        const saved = await store.saveProfile(checkName(name), opts.description);
        ctx.out(`profile ${saved.groupname} saved${saved.description ? `: ${saved.description}` : ''}`);
      }),
    );

  entityOpt(profile.command('describe <name>'))
    .description("show a profile's attributes, members, and rows that keep users' own values from winning")
    .option('--json', 'print JSON')
    .action((name: string, opts: { entity?: string; json?: boolean }, cmd: Command) =>
      withRadius(ctx, cmd, opts.entity, async (store) => {
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
      }),
    );

  entityOpt(profile.command('set <name> <attribute> <value>'))
    .description("set a catalogue attribute on a profile, in the catalogue's unit (see GET /hotspot/user-access)")
    .action((name: string, attribute: string, value: string, opts: { entity?: string }, cmd: Command) =>
      withRadius(ctx, cmd, opts.entity, async (store) => {
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
        // The stored value is in FreeRADIUS's unit (bits/s, bytes): show the catalogue's beside it.
        const unit = def.type === 'integer' ? ` = ${cat.fromStored(def, stored.value)} ${def.format}` : '';
        ctx.out(`profile ${name}: ${def.name} ${def.profileOperator} ${stored.value}${unit} (${action})`);
        if (netsvcDictionaryAttributes().has(def.name)) {
          ctx.err(
            `note: ${def.name} is defined by netsvc's dictionary (radius/dictionary.netsvc), not by FreeRADIUS's own: until it and the ` +
              'netsvc_sqlcounter module are installed (netsvc radius install; docs/hotspot.md, section 3), FreeRADIUS cannot read this row',
          );
        }
      }),
    );

  entityOpt(profile.command('unset <name> <attribute>'))
    .description('remove an attribute from a profile')
    .action((name: string, attribute: string, opts: { entity?: string }, cmd: Command) =>
      withRadius(ctx, cmd, opts.entity, async (store) => {
        const def = (await catalogue()).get(attribute);
        if (!def) throw new UsageError(`unknown attribute '${attribute}'`);
        const n = await store.unsetProfileAttribute(checkName(name), def.name, def.table);
        ctx.out(`profile ${name}: ${n ? `removed ${def.name}` : `${def.name} was not set`}`);
      }),
    );
}
