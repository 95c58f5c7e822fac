/** `netsvc quota add|list` on a FreeRADIUS database of every backend. */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../../src/cli.js';
import { processContext, type CliContext } from '../../../src/commands/context.js';
import { transactionTime } from '../../../src/commands/quota-run.js';
import { availableDialects } from '../../helpers/databases.js';
import { createRadiusDatabase, type RadiusTestDatabase } from '../../helpers/radius.js';

const dialects = await availableDialects();

function capture(): CliContext & { stdout: string[]; stderr: string[] } {
  const stdout: string[] = [];
  const stderr: string[] = [];
  return { ...processContext(), out: (t) => stdout.push(t), err: (t) => stderr.push(t), stdout, stderr };
}

describe('--time', () => {
  it('keeps the instant of a time with an offset and reads one without in the configured zone', () => {
    expect(transactionTime('2026-03-25T10:00:00Z', 'Europe/Paris')).toBe('2026-03-25 11:00:00');
    expect(transactionTime('2026-07-01T10:00:00+02:00', 'UTC')).toBe('2026-07-01 08:00:00');
    expect(transactionTime('2026-03-25T10:00', 'Europe/Paris')).toBe('2026-03-25 10:00:00');
    expect(transactionTime('2026-03-25 10:00:30', 'Asia/Tokyo')).toBe('2026-03-25 10:00:30');
    expect(() => transactionTime('25/03/2026', 'UTC')).toThrow(/--time/);
    expect(() => transactionTime('2026-02-30T10:00:00Z', 'UTC')).toThrow(/--time/);
  });
});

describe('netsvc quota before any database exists', () => {
  it('says to migrate first and creates no file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'netsvc-quota-empty-'));
    const config = join(dir, 'netsvc.config.json');
    // The built-in defaults: entity default on sqlite:radius.sqlite in the data directory.
    writeFileSync(config, JSON.stringify({ dataDir: dir }));
    try {
      for (const args of [
        ['quota', 'add', 'alice', '--plan', 'p', '--amount', '1'],
        ['quota', 'list'],
      ]) {
        const ctx = capture();
        expect(await runCli([...args, '--config', config], ctx), `${args.join(' ')}: ${ctx.stderr.join('')}`).toBe(1);
        expect(ctx.stderr.join('')).toMatch(/^netsvc: entity 'default' has no RADIUS database yet .*netsvc db migrate/);
      }
      expect(existsSync(join(dir, 'radius.sqlite'))).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe.each(dialects)('netsvc quota on %s', (dialect) => {
  let t: RadiusTestDatabase;
  let dir: string;
  let config: string;
  const cli = async (...args: string[]) => {
    const ctx = capture();
    const code = await runCli([...args, '--config', config], ctx);
    return { code, out: ctx.stdout.join('\n'), err: ctx.stderr.join('\n') };
  };
  const count = async () => Number((await t.raw.query<{ n: number }>('SELECT COUNT(*) AS n FROM netsvc_quota_purchase'))[0]!.n);

  beforeAll(async () => {
    t = await createRadiusDatabase(dialect, { timeZone: 'Europe/Paris' });
    await t.store.saveProfile('gold', 'Gold plan');
    await t.store.saveProfile('night', 'Night plan');
    await t.store.createUser({ username: 'alice', usertype: 'user', password: 'pw' }, { name: 'test' });
    await t.store.createUser({ username: 'aa:bb:cc:dd:ee:01', usertype: 'mac' }, { name: 'test' });
    dir = mkdtempSync(join(tmpdir(), 'netsvc-quota-'));
    config = join(dir, 'netsvc.config.json');
    writeFileSync(
      config,
      JSON.stringify({ dataDir: dir, timezone: 'Europe/Paris', flowSources: {}, entities: { site: { radius: t.db.url } } }),
    );
  });

  afterAll(async () => {
    await t?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('records a purchase with every option and prints it as the report shows it', async () => {
    const res = await cli(
      'quota',
      'add',
      'alice',
      '--plan',
      '5GB monthly',
      '--amount',
      '20.5',
      '--currency',
      'usd',
      '--profiles',
      'gold,night',
      '--remarks',
      "paid by card; x' OR 1=1 --",
      '--time',
      '2026-03-25T09:30:00Z',
      '--by',
      'billing',
      '--entity',
      'site',
      '--json',
    );
    expect(res.err).toBe('');
    expect(res.code).toBe(0);
    expect(JSON.parse(res.out)).toEqual({
      id: expect.any(Number),
      transaction_time: '2026-03-25 10:30:00',
      username: 'alice',
      plan_name: '5GB monthly',
      currency: 'USD',
      amount: '20.50',
      user_profiles: 'gold, night',
      remarks: "paid by card; x' OR 1=1 --",
      create_by: 'billing',
      create_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/),
    });
    const [row] = await t.raw.query<Record<string, unknown>>(
      'SELECT username, plan_name, remarks, create_by FROM netsvc_quota_purchase WHERE plan_name = ?',
      ['5GB monthly'],
    );
    expect(row).toEqual({
      username: 'alice',
      plan_name: '5GB monthly',
      remarks: "paid by card; x' OR 1=1 --",
      create_by: 'billing',
    });
  });

  it('defaults to now, EUR and the operating-system user; finds a MAC user typed in another notation', async () => {
    const before = Date.now();
    const res = await cli('quota', 'add', 'aabb.ccdd.ee01', '--plan', '1 day', '--amount', '3', '--json');
    expect(res.code).toBe(0);
    const rec = JSON.parse(res.out);
    expect(rec).toMatchObject({
      username: 'AA-BB-CC-DD-EE-01',
      currency: 'EUR',
      amount: '3.00',
      user_profiles: '',
      remarks: '',
      create_by: userInfo().username,
    });
    // Wall clock in Europe/Paris, within the seconds the command took.
    const paris = (ms: number) => new Date(ms).toLocaleString('sv-SE', { timeZone: 'Europe/Paris' });
    expect([paris(before - 1000), paris(Date.now())].some((w) => w.slice(0, 16) === rec.transaction_time.slice(0, 16))).toBe(
      true,
    );
    expect((await cli('quota', 'add', 'alice', '--plan', 'x', '--amount', '1')).out).toMatch(
      /^recorded purchase \d+: alice x 1\.00 EUR at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d \(by .+\)$/,
    );
  });

  it('lists purchases newest first by transaction time, per user, as text and JSON', async () => {
    await cli('quota', 'add', 'alice', '--plan', 'old', '--amount', '1', '--time', '2020-01-01T00:00:00Z');
    const all = JSON.parse((await cli('quota', 'list', '--json')).out) as Array<{ plan_name: string; transaction_time: string }>;
    expect(all).toHaveLength(4);
    expect(all.map((p) => p.transaction_time)).toEqual([...all.map((p) => p.transaction_time)].sort().reverse());
    expect(all.at(-1)!.plan_name).toBe('old');
    const alice = JSON.parse((await cli('quota', 'list', '--username', 'alice', '--json')).out) as Array<{ username: string }>;
    expect(alice.map((p) => p.username)).toEqual(['alice', 'alice', 'alice']);
    expect(JSON.parse((await cli('quota', 'list', '--limit', '1', '--json')).out)).toHaveLength(1);
    const text = (await cli('quota', 'list', '--username', 'alice')).out.split('\n');
    expect(text[0]).toBe('id\ttransaction_time\tusername\tplan\tamount\tprofiles\tby\tremarks');
    expect(text).toContainEqual(
      expect.stringMatching(/^\d+\t2026-03-25 10:30:00\talice\t5GB monthly\t20\.50 USD\tgold, night\tbilling\tpaid by card/),
    );
    expect((await cli('quota', 'list', '--username', 'nobody')).out).toBe('no quota purchases');
  });

  it('refuses unknown users and profiles (exit 1) and malformed options (exit 2), writing nothing', async () => {
    const before = await count();
    const add = (...extra: string[]) => cli('quota', 'add', 'alice', '--plan', 'p', '--amount', '1', ...extra);
    expect(await cli('quota', 'add', 'nobody', '--plan', 'p', '--amount', '1')).toMatchObject({
      code: 1,
      err: "netsvc: User 'nobody' not found.",
    });
    expect(await add('--profiles', 'gold,platinum')).toMatchObject({ code: 1, err: "netsvc: Profile 'platinum' not found." });
    for (const amount of ['1.234', '-1', '1e3', 'abc', '1,5']) {
      const res = await cli('quota', 'add', 'alice', '--plan', 'p', '--amount', amount);
      expect(res.code, amount).toBe(2);
      expect(res.err, amount).toMatch(/^netsvc: amount .* at most two places/);
    }
    expect((await add('--currency', 'EURO')).err).toMatch(/currency/);
    expect((await add('--time', 'yesterday')).code).toBe(2);
    expect((await add('--remarks', 'x'.repeat(1001))).code).toBe(2);
    expect((await add('--by', '')).code).toBe(2);
    expect((await add('--entity', 'nope')).code).toBe(2);
    expect((await cli('quota', 'add', 'alice', '--amount', '1')).code).not.toBe(0); // --plan is required
    expect((await cli('quota', 'list', '--limit', '0')).code).toBe(2);
    expect(await count()).toBe(before);
  });
});
