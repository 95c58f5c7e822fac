/**
 * Purchases recorded with `netsvc quota add` are what GET
 * /hotspot/quota-purchase-report serves: every api.md field, and each filter,
 * over the same FreeRADIUS database on every backend.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../../src/cli.js';
import { processContext } from '../../../src/commands/context.js';
import { availableDialects } from '../../helpers/databases.js';
import { startHotspotApi, type HotspotApi } from '../../helpers/hotspot-api.js';
import { createRadiusDatabase, type RadiusTestDatabase } from '../../helpers/radius.js';

const dialects = await availableDialects();

describe.each(dialects)('quota purchases from the CLI in the report on %s', (dialect) => {
  let t: RadiusTestDatabase;
  let api: HotspotApi;
  let dir: string;
  let config: string;
  const ids: Record<string, number> = {};

  /** Runs `netsvc quota add … --json` against the API's database and answers the record it printed. */
  const add = async (...args: string[]) => {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runCli(['quota', 'add', ...args, '--json', '--config', config], {
      ...processContext(),
      out: (s) => out.push(s),
      err: (s) => err.push(s),
    });
    expect(err.join('\n')).toBe('');
    expect(code).toBe(0);
    return JSON.parse(out.join('\n')) as { id: number };
  };
  const report = async (query: string) => {
    const res = await api.call('GET', `/quota-purchase-report${query}`);
    expect(res.status, query).toBe(200);
    return res.body as { status: boolean; isLastPage: boolean; result: Array<Record<string, unknown>> };
  };
  const idsOf = async (query: string) => (await report(query)).result.map((r) => r.id);

  beforeAll(async () => {
    t = await createRadiusDatabase(dialect, { timeZone: 'UTC' });
    await t.store.saveProfile('gold', 'Gold plan');
    await t.store.saveProfile('night', 'Night plan');
    for (const username of ['dave', 'erin'])
      await t.store.createUser({ username, usertype: 'user', password: 'pw' }, { name: 'test' });
    api = await startHotspotApi(t.store, { timezone: 'UTC' });
    dir = mkdtempSync(join(tmpdir(), 'netsvc-quota-route-'));
    config = join(dir, 'netsvc.config.json');
    writeFileSync(
      config,
      JSON.stringify({ dataDir: dir, timezone: 'UTC', flowSources: {}, entities: { acme: { radius: t.db.url } } }),
    );
    ids.big = (
      await add(
        'dave',
        '--plan',
        '10GB',
        '--amount',
        '20.5',
        '--currency',
        'usd',
        '--profiles',
        'gold, night',
        '--remarks',
        'Paid at the desk, 50% off',
        '--time',
        '2026-03-25T10:15:00Z',
        '--by',
        'billing',
      )
    ).id;
    ids.small = (await add('dave', '--plan', '1GB', '--amount', '5', '--time', '2026-03-24T22:00:00Z', '--by', 'billing')).id;
    ids.erin = (
      await add(
        'erin',
        '--plan',
        '1GB',
        '--amount',
        '0',
        '--profiles',
        'night',
        '--remarks',
        'voucher',
        '--time',
        '2026-03-26T08:00:00+01:00',
        '--by',
        'ops',
      )
    ).id;
  });

  afterAll(async () => {
    await api?.close();
    await t?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('serves a recorded purchase with every api.md field, newest first', async () => {
    const body = await report('');
    expect(body).toMatchObject({ status: true, isLastPage: true });
    expect(body.result.map((r) => r.id)).toEqual([ids.erin, ids.big, ids.small]);
    expect(body.result[1]).toEqual({
      id: ids.big,
      transaction_time: '2026-03-25 10:15:00',
      username: 'dave',
      plan_name: '10GB',
      currency: 'USD',
      amount: '20.50',
      user_profiles: 'gold, night',
      remarks: 'Paid at the desk, 50% off',
      create_by: 'billing',
      create_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/),
    });
    expect(body.result[0]).toMatchObject({
      transaction_time: '2026-03-26 07:00:00',
      amount: '0.00',
      currency: 'EUR',
      create_by: 'ops',
    });
  });

  it('filters them: exact username, plan and profiles, remarks substring, the day or the second, startTime/endTime', async () => {
    expect(await idsOf('?username=dave')).toEqual([ids.big, ids.small]);
    expect(await idsOf('?username=dav')).toEqual([]);
    expect(await idsOf('?plan_name=1GB')).toEqual([ids.erin, ids.small]);
    expect(await idsOf(`?user_profiles=${encodeURIComponent('gold, night')}`)).toEqual([ids.big]);
    expect(await idsOf('?user_profiles=gold')).toEqual([]);
    expect(await idsOf('?remarks=50%25')).toEqual([ids.big]);
    expect(await idsOf('?remarks=DESK')).toEqual([ids.big]);
    expect(await idsOf('?transaction_time=2026-03-25')).toEqual([ids.big]);
    expect(await idsOf(`?transaction_time=${encodeURIComponent('2026-03-24 22:00:00')}`)).toEqual([ids.small]);
    expect(await idsOf('?startTime=2026-03-25&endTime=2026-03-25T23:59:59Z')).toEqual([ids.big]);
    expect(await idsOf('?startTime=2026-03-25T10:15:00Z')).toEqual([ids.erin, ids.big]);
    expect(await idsOf('?username=dave&plan_name=1GB&endTime=2026-03-24T22:00:00Z')).toEqual([ids.small]);
    const paged = await report('?perPage=2');
    expect(paged.isLastPage).toBe(false);
    expect(paged.result.map((r) => r.id)).toEqual([ids.erin, ids.big]);
  });
});
