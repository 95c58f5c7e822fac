import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CaptureWriter } from '../../../storage/capture/writer.js';
import { KpiBuilder } from '../../../storage/kpi/kpi-builder.js';
import { SqliteKpiCache } from '../../../storage/kpi/sqlite-kpi-cache.js';
import { startWorkerHourBuilder } from '../../../storage/kpi/worker-hour-builder.js';
import { flowFixtures } from '../../helpers/flow-fixtures.js';
import { writeFixture } from '../../helpers/netflow-data.js';

// The worker runs compiled JavaScript: `npm test` builds dist/ first.
const SCRIPT = resolve('dist/storage/kpi/kpi-worker.js');
const H1 = Date.parse('2026-03-25T08:00:00Z');

describe.skipIf(!existsSync(SCRIPT))('KPI builds in a worker thread', () => {
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'netsvc-kpiw-'));
    let clock = H1;
    const writer = new CaptureWriter({ dataDir: dir, timezone: 'UTC', timer: false, now: () => clock });
    await writer.start();
    flowFixtures()
      .filter((f) => f.seed === '2' && f.version === 10)
      .forEach((f, i) => writeFixture(writer, 'netflow', f, H1 + i * 3_600_000 + 60_000));
    clock = H1 + 5 * 3_600_000;
    await writer.close();
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('stores the same entries as a build in this thread', async () => {
    const dump = (path: string) => {
      const cache = new SqliteKpiCache(path);
      try {
        return cache.hours('netflow', 0, Number.MAX_SAFE_INTEGER).map((h) => ({
          ...h,
          protocols: cache.protocols('netflow', h.hourStart),
          src: cache.level('netflow', h.hourStart, 'src', 0),
          port: cache.level('netflow', h.hourStart, 'port', 0),
        }));
      } finally {
        cache.close();
      }
    };
    const here = new SqliteKpiCache(join(dir, 'here.sqlite'));
    await new KpiBuilder({ cache: here, dataDir: dir, timezone: 'UTC' }).sync('netflow');
    here.close();

    const workerDb = join(dir, 'worker.sqlite');
    const reader = new SqliteKpiCache(workerDb);
    const worker = startWorkerHourBuilder(workerDb, pathToFileURL(SCRIPT))!;
    try {
      const r = await new KpiBuilder({
        cache: reader,
        dataDir: dir,
        timezone: 'UTC',
        buildElsewhere: (f) => worker.build(f),
      }).sync('netflow');
      expect(r).toMatchObject({ built: 2, failed: 0 });
    } finally {
      await worker.close();
      reader.close();
    }
    const a = dump(join(dir, 'here.sqlite'));
    expect(a).toHaveLength(2);
    expect(dump(workerDb)).toEqual(a);
  });

  it('is not started when the compiled script is missing', () => {
    expect(startWorkerHourBuilder(join(dir, 'x.sqlite'), pathToFileURL(join(dir, 'no-such-worker.js')))).toBeUndefined();
  });
});
