import { existsSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { ScanWorkerPool } from '../../../storage/flow-query/scan-pool.js';
import { warmUpQueries } from '../../../storage/flow-query/warm-up.js';

const SCRIPT = resolve('dist/storage/flow-query/scan-pool-worker.js');

function warmUpDirs(): string[] {
  return readdirSync(tmpdir()).filter((n) => n.startsWith('netsvc-query-warm-up-'));
}

describe.skipIf(!existsSync(SCRIPT))('flow query warm-up', () => {
  const pool = new ScanWorkerPool({ script: pathToFileURL(SCRIPT) });
  afterAll(() => pool.close());

  it('runs its queries in this thread and the scan worker over two synthetic hours, then removes them', async () => {
    const before = warmUpDirs();
    const jobs = pool.counters.jobs;
    const r = await warmUpQueries({ workers: pool, rounds: 1 });
    expect(r).toMatchObject({ queries: 20, aborted: false });
    expect(r.rows).toBeGreaterThan(0);
    // Each top-N shares its blocks with the worker, and so does each first page's count.
    expect(pool.counters.jobs - jobs).toBeGreaterThanOrEqual(20);
    expect(warmUpDirs()).toEqual(before);
  });

  it('gives way to other work at least every 4 096 rows it writes, so serve answers meanwhile', async () => {
    // Written at once, its hours held the thread for over half a second: a request to serve
    // made a few seconds after it started waited that long (test/e2e/auth-storm.test.ts).
    let turns = 0;
    let writing = true;
    const turn = (): void => {
      turns++;
      if (writing) setImmediate(turn);
    };
    setImmediate(turn);
    const r = await warmUpQueries({ workers: pool, rounds: 0 });
    writing = false;
    expect(r.queries).toBe(0);
    expect(turns).toBeGreaterThanOrEqual(r.rows / 4096);
  });

  it('stops between queries once aborted, and still removes the hour', async () => {
    const before = warmUpDirs();
    const stop = new AbortController();
    stop.abort();
    const r = await warmUpQueries({ workers: pool, signal: stop.signal });
    expect(r).toMatchObject({ queries: 0, aborted: true });
    expect(warmUpDirs()).toEqual(before);
  });
});
