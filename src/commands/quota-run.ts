/**
 * `netsvc quota add|list`: quota purchases in `netsvc_quota_purchase`, the
 * rows GET /hotspot/quota-purchase-report serves. `add` is for an operator
 * at the console or a billing script; like daloRADIUS it records purchases
 * of known users only, and it attaches nothing: the profiles named are what
 * the purchase granted, for the report (docs/hotspot.md).
 */
import { userInfo } from 'node:os';
import type { Command } from 'commander';
import { DateTime } from 'luxon';
import { checkQuotaPurchase } from '../../storage/radius/quota-purchase.js';
import { RadiusStoreError, type NewQuotaPurchase, type QuotaPurchase } from '../../storage/radius/radius-store.js';
import { radiusDatabaseMissing } from '../areas/hotspot-entities.js';
import { UsageError, type CliContext } from './context.js';
import { pickEntity, withRadius } from './profile-run.js';

const WALL = 'yyyy-LL-dd HH:mm:ss';
/** Most purchases `list` prints unless `--limit` says otherwise. */
const DEFAULT_LIST_LIMIT = 100; // quota.ts's --limit help names it too
/** Rows fetched per query while listing. */
const LIST_PAGE = 1000;

/**
 * `--time` as wall clock in `zone`: ISO 8601 with an offset or `Z` is that
 * instant; without one (also `2026-03-25 10:00`) it is read in the zone.
 */
export function transactionTime(text: string, zone: string): string {
  const opts = { zone, setZone: false };
  let t = DateTime.fromISO(text, opts);
  if (!t.isValid) t = DateTime.fromSQL(text, opts);
  if (!t.isValid)
    throw new UsageError(
      `--time '${text}' is not an ISO 8601 time (2026-03-25T10:00:00+01:00, or 2026-03-25 10:00 in the configured zone)`,
    );
  return t.setZone(zone).toFormat(WALL);
}

/** Who records the purchase: `--by`, else the operating-system user running the command. */
export function recorder(by: string | undefined, env: NodeJS.ProcessEnv): string {
  if (by !== undefined) return by;
  try {
    return userInfo().username;
  } catch {
    // No passwd entry for the uid (some containers): the login name the shell exported.
    return env.USER ?? env.LOGNAME ?? 'cli';
  }
}

function line(p: QuotaPurchase): string {
  return [
    p.id,
    p.transaction_time,
    p.username,
    p.plan_name,
    `${p.amount} ${p.currency}`,
    p.user_profiles || '-',
    p.create_by,
    p.remarks,
  ].join('\t');
}

/** The store's rule as a usage error, so a typo in an option exits 2 before the database is opened. */
function checked(purchase: NewQuotaPurchase, by: string, zone: string): NewQuotaPurchase {
  try {
    return checkQuotaPurchase(purchase, by, zone);
  } catch (err) {
    if (err instanceof RadiusStoreError) throw new UsageError(err.message);
    throw err;
  }
}

/** Refuses an embedded database that does not exist yet, instead of creating an empty file and failing on its missing tables. */
async function requireDatabase(ctx: CliContext, cmd: Command, entity: string | undefined): Promise<void> {
  const config = await ctx.config(cmd);
  const [name, url] = pickEntity(config, entity);
  if (radiusDatabaseMissing(config, url)) {
    throw new RadiusStoreError(
      'schema_missing',
      `entity '${name}' has no RADIUS database yet (${url}): run netsvc db migrate, or start netsvc serve once`,
    );
  }
}

function positiveInt(text: string): number {
  if (!/^[1-9]\d{0,6}$/.test(text)) throw new UsageError(`--limit '${text}' is not a whole number from 1 to 9999999`);
  return Number(text);
}

/** The command-line flags of `quota add`, as commander gives them. */
export interface QuotaAddFlags {
  plan: string;
  amount: string;
  currency: string;
  profiles?: string;
  remarks?: string;
  time?: string;
  by?: string;
  entity?: string;
  json?: boolean;
}

/** The command-line flags of `quota list`, as commander gives them. */
export interface QuotaListFlags {
  username?: string;
  limit?: string;
  entity?: string;
  json?: boolean;
}

/** The action of `netsvc quota add`. */
export async function quotaAddAction(ctx: CliContext, username: string, opts: QuotaAddFlags, cmd: Command): Promise<void> {
  const config = await ctx.config(cmd);
  const time =
    opts.time === undefined
      ? DateTime.now().setZone(config.timezone).toFormat(WALL)
      : transactionTime(opts.time, config.timezone);
  const by = recorder(opts.by, ctx.env);
  const purchase = checked(
    {
      transaction_time: time,
      username,
      plan_name: opts.plan,
      currency: opts.currency,
      amount: opts.amount,
      user_profiles: opts.profiles,
      remarks: opts.remarks,
    },
    by,
    config.timezone,
  );
  await requireDatabase(ctx, cmd, opts.entity);
  return withRadius(ctx, cmd, opts.entity, async (store) => {
    const rec = await store.recordQuotaPurchase(purchase, { name: by });
    if (opts.json) ctx.out(JSON.stringify(rec, null, 2));
    else
      ctx.out(
        `recorded purchase ${rec.id}: ${rec.username} ${rec.plan_name} ${rec.amount} ${rec.currency} at ${rec.transaction_time} (by ${rec.create_by})`,
      );
  });
}

/** The action of `netsvc quota list`. */
export async function quotaListAction(ctx: CliContext, opts: QuotaListFlags, cmd: Command): Promise<void> {
  const limit = opts.limit === undefined ? DEFAULT_LIST_LIMIT : positiveInt(opts.limit);
  await requireDatabase(ctx, cmd, opts.entity);
  return withRadius(ctx, cmd, opts.entity, async (store) => {
    const filter = opts.username === undefined ? {} : { username: opts.username };
    const all: QuotaPurchase[] = [];
    for (let page = 1; all.length < limit; page++) {
      const rows = await store.quotaPurchases(filter, { page, perPage: LIST_PAGE });
      all.push(...rows.slice(0, Math.min(LIST_PAGE, limit - all.length)));
      if (rows.length <= LIST_PAGE) break;
    }
    if (opts.json) ctx.out(JSON.stringify(all, null, 2));
    else if (!all.length) ctx.out('no quota purchases');
    else {
      ctx.out(['id', 'transaction_time', 'username', 'plan', 'amount', 'profiles', 'by', 'remarks'].join('\t'));
      for (const p of all) ctx.out(line(p));
    }
  });
}
