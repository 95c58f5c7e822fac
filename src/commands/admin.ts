/** `netsvc admin …`: entities, users, per-area switches and API credentials. */
import type { Command } from 'commander';
import {
  AREAS,
  type AdminStore,
  type Area,
  type AreaSwitches,
  type EntityRecord,
  type UserRecord,
} from '../../storage/admin/admin-store.js';
import type { Config } from '../config.js';
import { UsageError, withGlobalOptions, type CliContext } from './context.js';

function parseAreas(list: string | undefined): Partial<AreaSwitches> {
  if (list === undefined) return {};
  const out: Partial<AreaSwitches> = {};
  for (const raw of list
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    if (!(AREAS as readonly string[]).includes(raw)) throw new UsageError(`unknown area '${raw}' (areas: ${AREAS.join(', ')})`);
    out[raw as Area] = true;
  }
  return out;
}

function parseAreaArgs(areas: string[]): Area[] {
  return Object.keys(parseAreas(areas.join(','))) as Area[];
}

function areaText(a: AreaSwitches): string {
  return AREAS.map((area) => `${area}=${a[area] ? 'on' : 'off'}`).join(' ');
}

function entityJson(e: EntityRecord) {
  return { entity: e.name, areas: e.areas, created_at: e.createdAt };
}

function userJson(u: UserRecord) {
  return {
    entity: u.entity,
    user: u.name,
    areas: u.areas,
    api_id: u.apiId,
    credential_version: u.credentialVersion,
    created_at: u.createdAt,
  };
}

async function withStore<T>(
  ctx: CliContext,
  cmd: Command,
  fn: (store: AdminStore, config: Config) => T | Promise<T>,
): Promise<T> {
  const config = await ctx.config(cmd);
  // Loaded here, not at the top: the store's driver is most of an admin command's start, and --help needs none of it.
  const { openAdminStore } = await import('../admin-store.js');
  const store = openAdminStore(config);
  try {
    return await fn(store, config);
  } finally {
    store.close();
  }
}

/** Registers `admin entity|user|credentials …`. */
export function registerAdminCommands(program: Command, ctx: CliContext): void {
  const admin = withGlobalOptions(program.command('admin')).description('manage entities, users, API areas and credentials');
  const print = (json: boolean | undefined, value: unknown, text: string) =>
    ctx.out(json ? JSON.stringify(value, null, 2) : text);

  const entity = withGlobalOptions(admin.command('entity')).description('entities (tenants/sites) and their API areas');
  withGlobalOptions(entity.command('add <entity>'))
    .description('add an entity')
    .option('--areas <list>', 'areas to switch on, comma-separated: netflow,logviewer,hotspot')
    .option('--json', 'print JSON')
    .action((name: string, opts: { areas?: string; json?: boolean }, cmd: Command) =>
      withStore(ctx, cmd, (store, config) => {
        const e = store.addEntity(name, parseAreas(opts.areas));
        if (!(name in config.entities)) {
          ctx.err(
            `note: entity '${name}' has no flow sources or databases in the configuration yet: add "entities": { "${name}": { "flowSources": [...], ` +
              '"radius": "mysql://…", "syslog": "mysql://…" } } to the config file (README, "Configuration"), then restart serve',
          );
        }
        print(opts.json, entityJson(e), `entity ${e.name}: ${areaText(e.areas)}`);
      }),
    );
  withGlobalOptions(entity.command('list'))
    .description('list entities')
    .option('--json', 'print JSON')
    .action((opts: { json?: boolean }, cmd: Command) =>
      withStore(ctx, cmd, (store) => {
        const all = store.listEntities();
        print(opts.json, all.map(entityJson), all.map((e) => `${e.name}\t${areaText(e.areas)}`).join('\n') || '(no entities)');
      }),
    );
  for (const [verb, enabled] of [
    ['enable', true],
    ['disable', false],
  ] as const) {
    withGlobalOptions(entity.command(`${verb} <entity> <areas...>`))
      .description(`switch ${enabled ? 'on' : 'off'} API areas of an entity`)
      .option('--json', 'print JSON')
      .action((name: string, areas: string[], opts: { json?: boolean }, cmd: Command) =>
        withStore(ctx, cmd, (store) => {
          let e: EntityRecord | undefined;
          for (const area of parseAreaArgs(areas)) e = store.setEntityArea(name, area, enabled);
          if (e) print(opts.json, entityJson(e), `entity ${e.name}: ${areaText(e.areas)}`);
        }),
      );
  }

  const user = withGlobalOptions(admin.command('user')).description('users of an entity and their API areas');
  withGlobalOptions(user.command('add <entity> <user>'))
    .description('add a user to an entity')
    .option('--areas <list>', 'areas to switch on, comma-separated: netflow,logviewer,hotspot')
    .option('--json', 'print JSON')
    .action((entityName: string, userName: string, opts: { areas?: string; json?: boolean }, cmd: Command) =>
      withStore(ctx, cmd, (store) => {
        const u = store.addUser(entityName, userName, parseAreas(opts.areas));
        print(opts.json, userJson(u), `user ${u.entity}/${u.name}: ${areaText(u.areas)}`);
      }),
    );
  withGlobalOptions(user.command('list [entity]'))
    .description('list users, of one entity or all')
    .option('--json', 'print JSON')
    .action((entityName: string | undefined, opts: { json?: boolean }, cmd: Command) =>
      withStore(ctx, cmd, (store) => {
        const all = store.listUsers(entityName);
        const text = all.map((u) => `${u.entity}\t${u.name}\t${areaText(u.areas)}\tapi_id=${u.apiId ?? '-'}`).join('\n');
        print(opts.json, all.map(userJson), text || '(no users)');
      }),
    );
  for (const [verb, enabled] of [
    ['enable', true],
    ['disable', false],
  ] as const) {
    withGlobalOptions(user.command(`${verb} <entity> <user> <areas...>`))
      .description(`switch ${enabled ? 'on' : 'off'} API areas of a user`)
      .option('--json', 'print JSON')
      .action((entityName: string, userName: string, areas: string[], opts: { json?: boolean }, cmd: Command) =>
        withStore(ctx, cmd, (store) => {
          let u: UserRecord | undefined;
          for (const area of parseAreaArgs(areas)) u = store.setUserArea(entityName, userName, area, enabled);
          if (u) print(opts.json, userJson(u), `user ${u.entity}/${u.name}: ${areaText(u.areas)}`);
        }),
      );
  }

  const credentials = withGlobalOptions(admin.command('credentials')).description('API credentials of a user');
  withGlobalOptions(credentials.command('issue <entity> <user>'))
    .description('issue a new api_id and secret (shown once); the old ones and their tokens stop working at once')
    .option('--json', 'print {"api_id", "secret"} as JSON')
    .action((entityName: string, userName: string, opts: { json?: boolean }, cmd: Command) =>
      withStore(ctx, cmd, async (store) => {
        const { generateCredential, hashSecret } = await import('../../storage/admin/secret-hash.js');
        const { apiId, secret } = generateCredential();
        store.replaceCredential(entityName, userName, apiId, await hashSecret(secret));
        print(
          opts.json,
          { api_id: apiId, secret },
          `api_id: ${apiId}\nsecret: ${secret}\n(the secret is shown only now; store it safely)`,
        );
      }),
    );

  withGlobalOptions(admin.command('unlock [address]'))
    .description(
      'lift the failed-login lockout (429) of a client address, or of every address with --all; the running serve lets it try again at ' +
        "its next attempt (serve logs each refused login as 'login refused' with the address and the reason)",
    )
    .option('--all', 'every address')
    .action((address: string | undefined, opts: { all?: boolean }, cmd: Command) =>
      withStore(ctx, cmd, async (store) => {
        if ((opts.all ?? false) === (address !== undefined)) throw new UsageError('give one client address, or --all');
        // node:net is loaded here, not at the top: the other commands' start does without it.
        const { isIP } = await import('node:net');
        if (address !== undefined && !isIP(address))
          throw new UsageError(`'${address}' is not an IP address (the client address serve logs with 'login refused')`);
        store.requestUnlock(address ?? '*');
        ctx.out(
          `unlock of ${address ?? 'every address'} requested: serve lets ${address ? 'it' : 'them'} try again at the next attempt`,
        );
      }),
    );
}
