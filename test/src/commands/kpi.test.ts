import { mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../../src/cli.js';
import { CaptureWriter } from '../../../storage/capture/writer.js';
import { SqliteKpiCache } from '../../../storage/kpi/sqlite-kpi-cache.js';
import { captureCli } from '../../helpers/cli.js';
import { flowFixtures } from '../../helpers/flow-fixtures.js';
import { nfdumpReference, writeFixture } from '../../helpers/netflow-data.js';

const HOUR = 3_600_000;
const H1 = Date.parse('2026-03-25T08:00:00Z');

describe('netsvc kpi rebuild', () => {
  let dir: string;
  let config: string;
  const fixtures = flowFixtures().filter((f) => f.exporter === 'softflowd' && f.version === 9);

  const cached = () => {
    const cache = new SqliteKpiCache(join(dir, 'kpi.sqlite'));
    try {
      return cache.hours('netflow', 0, Number.MAX_SAFE_INTEGER).map((h) => ({
        hour: h.hourStart,
        flows: h.flows,
        bytes: h.bytes,
        src0: cache.level('netflow', h.hourStart, 'src', 0)?.rows.length,
      }));
    } finally {
      cache.close();
    }
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'netsvc-kpi-'));
    config = join(dir, 'netsvc.config.json');
    writeFileSync(config, JSON.stringify({ dataDir: dir, timezone: 'UTC' }));
    let clock = H1;
    // Written without the KPI listener: the cache starts empty, as after losing kpi.sqlite.
    const writer = new CaptureWriter({ dataDir: dir, timezone: 'UTC', timer: false, now: () => clock });
    await writer.start();
    fixtures.forEach((f, i) => writeFixture(writer, 'netflow', f, H1 + i * HOUR + 60_000));
    clock = H1 + 10 * HOUR;
    await writer.close();
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('builds every sealed hour from the files, and again after the cache is lost', async () => {
    const ctx = captureCli();
    expect(await runCli(['kpi', 'rebuild', '--config', config, '--json'], ctx)).toBe(0);
    const report = JSON.parse(ctx.stdout.join('')) as Array<{ source: string; built: number; failed: number }>;
    expect(report.find((r) => r.source === 'netflow')).toMatchObject({ built: fixtures.length, failed: 0 });
    const first = cached();
    expect(first.map((h) => [h.hour, h.flows, h.bytes])).toEqual(
      fixtures.map((f, i) => [H1 + i * HOUR, nfdumpReference(f).totals.flows, nfdumpReference(f).totals.bytes]),
    );
    unlinkSync(join(dir, 'kpi.sqlite'));
    expect(await runCli(['kpi', 'rebuild', '--config', config], captureCli())).toBe(0);
    expect(cached()).toEqual(first);
  });

  it('limits the rebuild to --from … --to and drops hours whose file is gone', async () => {
    const ctx = captureCli();
    expect(
      await runCli(
        [
          'kpi',
          'rebuild',
          '--config',
          config,
          '--source',
          'netflow',
          '--from',
          '2026/03/25 09:00',
          '--to',
          '2026/03/25 09:30',
          '--json',
        ],
        ctx,
      ),
    ).toBe(0);
    expect(JSON.parse(ctx.stdout.join(''))).toEqual([{ source: 'netflow', built: 1, upToDate: 0, dropped: 0, failed: 0 }]);
    unlinkSync(join(dir, 'flows', 'netflow', 'nfcapd.202603250800'));
    const ctx2 = captureCli();
    expect(await runCli(['kpi', 'rebuild', '--config', config, '--source', 'netflow', '--json'], ctx2)).toBe(0);
    expect(JSON.parse(ctx2.stdout.join(''))[0]).toMatchObject({ dropped: 1, built: fixtures.length - 1 });
    expect(cached().map((h) => h.hour)).not.toContain(H1);
  });

  it('refuses an unknown source or a reversed range with a one-line error', async () => {
    const ctx = captureCli();
    expect(await runCli(['kpi', 'rebuild', '--config', config, '--source', 'nope'], ctx)).toBe(2);
    expect(ctx.stderr.join('')).toMatch(/unknown flow source 'nope'/);
    const ctx2 = captureCli();
    expect(
      await runCli(['kpi', 'rebuild', '--config', config, '--from', '2026/03/25 09:00', '--to', '2026/03/25 08:00'], ctx2),
    ).toBe(2);
    // A time that is no time: why, and the forms that are.
    const ctx3 = captureCli();
    expect(await runCli(['kpi', 'rebuild', '--config', config, '--from', '2026/13/01'], ctx3)).toBe(2);
    expect(ctx3.stderr.join('')).toBe(
      "netsvc: invalid time '2026/13/01' (you specified 13 (of type number) as a month, which is invalid): use YYYY/MM/DD HH:mm, YYYY-MM-DD or ISO 8601",
    );
  });
});
