/**
 * Top-N and series scanned by two threads (storage/flow-query/scan-pool.ts, top-n.ts's
 * groupMatches): the same answers as one thread, the worker's errors thrown as their own class,
 * the blocks of a lost worker scanned again, and no worker left running.
 */
import { closeSync, existsSync, openSync, readSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { CaptureFile } from '../../../storage/capture/capture-file.js';
import { CaptureFileError } from '../../../storage/capture/format.js';
import { listCaptureFiles, newReadStats } from '../../../storage/capture/reader.js';
import { CaptureWriter } from '../../../storage/capture/writer.js';
import { GeoDataError } from '../../../storage/geo/geo-error.js';
import { openGeoLookup } from '../../../storage/geo/open-geo-lookup.js';
import { BlockClaims } from '../../../storage/flow-query/block-claims.js';
import { parseDimensions } from '../../../storage/flow-query/dimensions.js';
import { compileFilter } from '../../../storage/flow-query/filter-compile.js';
import { parseFilter } from '../../../storage/flow-query/filter-parse.js';
import { FlowAnalytics } from '../../../storage/flow-query/flow-analytics.js';
import {
  ScanJobError,
  ScanWorkerLostError,
  ScanWorkerPool,
  type GroupJob,
  type ScanTask,
  type ScanWorkers,
} from '../../../storage/flow-query/scan-pool.js';
import { TooManyGroupsError, topN, WORKER_TAKER, type SplitOptions } from '../../../storage/flow-query/top-n.js';
import { FakeClock, randomFlows, tempDataDir } from '../capture/flows.js';

// The worker runs compiled JavaScript: `npm test` builds dist/ first.
const SCRIPT = resolve('dist/storage/flow-query/scan-pool-worker.js');
const H9 = Date.UTC(2026, 2, 25, 9);
const H10 = H9 + 3_600_000;

/** Two hours of flows in blocks of 1024 rows: 09:00 sealed (30 blocks), 10:00 still open (20 blocks). */
async function twoHours(): Promise<string> {
  const dir = tempDataDir();
  const clock = new FakeClock(H9 + 60_000);
  const w = new CaptureWriter({ dataDir: dir, timezone: 'UTC', blockRows: 1024, now: clock.now, timer: false });
  await w.start();
  const a = randomFlows(30 * 1024, { received: H9, stepMs: 3_600_000 / (30 * 1024), seed: 5 });
  // Repeated addresses, so that address groups have more than one flow.
  for (let i = 0; i < a.length; i += 3) a.srcAddr.copyWithin(i * 16, ((i * 7) % 500) * 16, ((i * 7) % 500) * 16 + 16);
  w.write('netflow', a);
  clock.t = H10 + 60_000;
  await w.tick();
  w.write('netflow', randomFlows(20 * 1024, { received: H10, stepMs: 2_000_000 / (20 * 1024), seed: 6 }));
  w.flush();
  await w.close();
  return dir;
}

/**
 * A pool in between that holds this thread, before it scans, until the worker has taken every
 * block (or has stopped taking them: it failed).
 */
function workerTakesAll(pool: ScanWorkers): ScanWorkers {
  return {
    get available() {
      return pool.available;
    },
    submit(job: GroupJob): ScanTask {
      const task = pool.submit(job);
      const cells = new Int32Array(job.claims);
      const blocks = cells.length - 1;
      const sleep = new Int32Array(new SharedArrayBuffer(4));
      let taken = 0;
      let still = 0;
      for (let i = 0; i < 2000 && taken < blocks && still < 40; i++) {
        Atomics.wait(sleep, 0, 0, 5);
        const now = Atomics.load(cells, 0);
        still = now > 0 && now === taken ? still + 1 : 0;
        taken = now;
      }
      return task;
    },
  };
}

/** A pool whose job takes the first `take` blocks and then ends as `end` says, without a thread. */
function fakeWorker(take: number, end: () => Error): ScanWorkers {
  return {
    available: true,
    submit(job: GroupJob): ScanTask {
      const claims = new BlockClaims(job.claims, WORKER_TAKER, false);
      for (let i = 0; i < take; i++) claims.next();
      return { result: Promise.reject(end()), started: true, cancel: () => undefined };
    },
  };
}

describe.skipIf(!existsSync(SCRIPT))('scans split between two threads', () => {
  const pool = new ScanWorkerPool({ script: pathToFileURL(SCRIPT) });
  let dir: string;
  const dirs: string[] = [];

  beforeAll(async () => {
    dir = await twoHours();
    dirs.push(dir);
  });
  afterAll(async () => {
    await pool.close();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  const analytics = (threads: 1 | 2, workers: ScanWorkers = pool, at = dir) =>
    new FlowAnalytics({ dataDir: at, timezone: 'UTC', now: () => H10 + 3_000_000, scanThreads: threads, scanWorkers: workers });
  // A window that cuts blocks at both ends, across both files.
  const window = { source: 'netflow', from: H9 + 10 * 60_000, to: H10 + 20 * 60_000 };
  /** A fresh scan of the window over the files of `at` (its own read counters). */
  const windowScan = (at = dir) => ({
    files: listCaptureFiles(at, 'netflow', 'UTC'),
    from: window.from,
    to: window.to,
    stats: newReadStats(),
  });
  const queries = [
    { by: 'dst_port', filter: 'proto tcp', metric: 'bytes', times: false },
    { by: 'src_ip', filter: 'dst port 443 or dst port 53', metric: 'flows', times: true },
    { by: 'src_ip/24,dst_port', filter: undefined, metric: 'packets', times: true },
    { by: 'proto,dst_port,tos', filter: 'not proto udp', metric: 'flows', times: false },
    { by: 'exporter,input_if', filter: 'bytes > 1000', metric: 'bytes', times: true },
    { by: 'src_as', filter: 'src port > 1024', metric: 'flows', times: false },
  ] as const;

  it('gives the answers of one thread: rows (ties in key order), other, total, groups, and the counters', async () => {
    const before = pool.counters;
    for (const q of queries) {
      const query = { ...window, filter: q.filter, by: parseDimensions(q.by), metric: q.metric, limit: 25, times: q.times };
      const one = analytics(1);
      const two = analytics(2);
      const a = await one.top(query);
      const b = await two.top(query);
      expect(b, q.by).toEqual(a);
      expect(a.rows.length, q.by).toBeGreaterThan(0);
      // Both threads opened the files; every block was read once.
      expect({ ...two.counters, filesOpened: 0 }).toEqual({ ...one.counters, filesOpened: 0 });
      // The worker's own half, alone, with every block: the same answer again.
      const c = await analytics(2, workerTakesAll(pool)).top(query);
      expect(c, q.by).toEqual(a);
    }
    // The worker did take blocks.
    expect(pool.counters.blocksRead - before.blocksRead).toBeGreaterThan(0);
    expect(pool.pending).toBe(0);
  });

  it("counts a first page's matches on both threads: the count of one thread, and the same flows", async () => {
    for (const filter of ['dst port 443', 'proto tcp and bytes > 1000', undefined]) {
      const q = { ...window, filter, order: 'time' as const, limit: 50 };
      const before = pool.counters.jobs;
      const a = await analytics(1).flows(q);
      const b = await analytics(2).flows(q);
      // The worker alone, with every block of the count.
      const c = await analytics(2, workerTakesAll(pool)).flows(q);
      expect(a.total, filter).toBeGreaterThan(50);
      expect(b, filter).toEqual(a);
      expect(c, filter).toEqual(a);
      expect(pool.counters.jobs - before, filter).toBeGreaterThan(0);
    }
  });

  it('gives the event loop turns meanwhile: its share of the blocks yields every two, as a scan alone does', async () => {
    // A worker that takes no block and answers at once: this thread's share is every block.
    const idleWorker: ScanWorkers = {
      available: true,
      submit: (job) => ({
        result: Promise.resolve({
          groups: { size: 0, width: 4, times: false, keys: new Uint32Array(0), values: new Float64Array(0) },
          total: { flows: 0, packets: 0, bytes: 0 },
          stats: newReadStats(),
          errors: [],
        }),
        started: job.claims.byteLength > 0,
        cancel: () => undefined,
      }),
    };
    let turns = 0;
    let done = false;
    const turn = (): void => {
      turns++;
      if (!done) setImmediate(turn);
    };
    setImmediate(turn);
    const two = analytics(2, idleWorker);
    const t = await two.top({ ...window, by: parseDimensions('src_ip'), metric: 'bytes', limit: 5 });
    done = true;
    expect(t).toEqual(await analytics(1).top({ ...window, by: parseDimensions('src_ip'), metric: 'bytes', limit: 5 }));
    expect(two.counters.blocksRead).toBeGreaterThan(30);
    expect(turns).toBeGreaterThanOrEqual(Math.floor(two.counters.blocksRead / 2) - 1);
  });

  it('ranks a series the same way', async () => {
    const q = {
      ...window,
      filter: 'dst port 443',
      by: parseDimensions('src_ip'),
      metric: 'bytes' as const,
      limit: 5,
      step: '5m' as const,
    };
    const a = await analytics(1).series(q);
    expect(await analytics(2).series(q)).toEqual(a);
    expect(await analytics(2, workerTakesAll(pool)).series(q)).toEqual(a);
  });

  it('answers two queries at once (the second one waits for the worker or scans alone)', async () => {
    const q = (by: string) => ({ ...window, filter: 'proto tcp', by: parseDimensions(by), metric: 'bytes' as const, limit: 10 });
    const two = analytics(2);
    const [a, b] = await Promise.all([two.top(q('src_ip')), two.top(q('dst_port,src_port'))]);
    expect(a).toEqual(await analytics(1).top(q('src_ip')));
    expect(b).toEqual(await analytics(1).top(q('dst_port,src_port')));
  });

  it('opens geo data in the worker as the caller did, for dimensions and filters that read it', async () => {
    const geoDir = await twoHours();
    dirs.push(geoDir);
    const geo = openGeoLookup({ enabled: true }, geoDir);
    const withGeo = (threads: 1 | 2, workers: ScanWorkers) =>
      new FlowAnalytics({
        dataDir: geoDir,
        timezone: 'UTC',
        now: () => H10 + 3_000_000,
        geo: () => geo,
        geoSource: { config: { enabled: true }, dataDir: geoDir },
        scanThreads: threads,
        scanWorkers: workers,
      });
    const q = {
      ...window,
      filter: 'not country FR and src as > 100',
      by: parseDimensions('dst_country,src_as'),
      metric: 'flows' as const,
      limit: 20,
    };
    const a = await withGeo(1, pool).top(q);
    const before = pool.counters.jobs;
    expect(await withGeo(2, workerTakesAll(pool)).top(q)).toEqual(a);
    expect(pool.counters.jobs).toBe(before + 1);
    // Without geoSource such a query stays in one thread.
    const alone = new FlowAnalytics({
      dataDir: geoDir,
      timezone: 'UTC',
      now: () => H10,
      geo: () => geo,
      scanWorkers: workerTakesAll(pool),
    });
    expect(await alone.top(q)).toEqual(a);
    expect(pool.counters.jobs).toBe(before + 1);
  }, 120_000);

  it('counts and reports damaged blocks the worker met as this thread does', async () => {
    const damaged = await twoHours();
    dirs.push(damaged);
    // Bytes flipped all over every fifth block of the sealed hour (checksums are per column).
    const sealed = listCaptureFiles(damaged, 'netflow', 'UTC')[0]!;
    const f = CaptureFile.open(sealed.path);
    const blocks = f.blocks.map((b) => ({ offset: b.offset, size: b.size }));
    f.close();
    const fd = openSync(sealed.path, 'r+');
    for (const b of blocks.filter((_, i) => i % 5 === 2)) {
      for (let k = 1; k < 16; k++) {
        const one = Buffer.alloc(1);
        const at = b.offset + Math.floor((b.size * k) / 16);
        readSync(fd, one, 0, 1, at);
        one[0] = one[0]! ^ 0xff;
        writeSync(fd, one, 0, 1, at);
      }
    }
    closeSync(fd);
    const filter = 'not proto 47';
    const scan = () => ({ ...windowScan(damaged), filter: compileFilter(parseFilter(filter)) });
    const dims = parseDimensions('src_ip,dst_port');
    const split: SplitOptions = { workers: workerTakesAll(pool), filter };
    const errors = (into: unknown[]) => (e: CaptureFileError) => void into.push(e);
    const hereErrors: CaptureFileError[] = [];
    const thereErrors: CaptureFileError[] = [];
    const here = scan();
    const there = scan();
    const a = await topN({ ...here, onError: errors(hereErrors) }, dims, 'bytes', 10, { times: true });
    const b = await topN({ ...there, onError: errors(thereErrors) }, dims, 'bytes', 10, { times: true, split });
    expect(b).toEqual(a);
    expect(here.stats.corruptBlocks).toBeGreaterThan(0);
    expect(there.stats.corruptBlocks).toBe(here.stats.corruptBlocks);
    expect(thereErrors.every((e) => e instanceof CaptureFileError)).toBe(true);
    expect(thereErrors.map((e) => [e.code, e.message, e.path])).toEqual(hereErrors.map((e) => [e.code, e.message, e.path]));
  });

  it('throws an error of the worker as its own class', async () => {
    // The worker opens geo data from a user database that is not there (this thread reads none).
    const split: SplitOptions = {
      workers: workerTakesAll(pool),
      geo: { config: { enabled: true, countryDatabase: 'missing.mmdb' }, dataDir: dir },
    };
    const scan = windowScan();
    const err = await topN(scan, parseDimensions('src_country'), 'flows', 5, { split }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GeoDataError);
    expect((err as GeoDataError).path).toContain('missing.mmdb');
    // The worker is still there for the next query.
    expect(
      (await analytics(2).top({ ...window, by: parseDimensions('proto'), metric: 'flows', limit: 3 })).total.flows,
    ).toBeGreaterThan(0);

    const scanOnce = () => ({ ...scan, stats: newReadStats() });
    const tooMany = fakeWorker(3, () => new ScanJobError({ name: 'TooManyGroupsError', message: 'more than 5 groups' }));
    await expect(topN(scanOnce(), parseDimensions('src_ip'), 'flows', 5, { split: { workers: tooMany } })).rejects.toThrow(
      TooManyGroupsError,
    );
  });

  it('leaves the blocks to this thread once the worker holds its most groups', async () => {
    const dims = parseDimensions('src_ip,src_port');
    const scan = () => windowScan();
    const one = scan();
    const a = await topN(one, dims, 'flows', 20, { times: true });
    const before = pool.counters.blocksRead;
    const two = scan();
    const split: SplitOptions = { workers: workerTakesAll(pool), workerGroups: 3000 };
    expect(await topN(two, dims, 'flows', 20, { times: true, split })).toEqual(a);
    // Blocks of 1024 flows with distinct keys: the worker stopped after three or four of them.
    const taken = pool.counters.blocksRead - before;
    expect(taken).toBeGreaterThan(0);
    expect(taken).toBeLessThan(5);
    expect(two.stats.blocksRead).toBe(one.stats.blocksRead);
  });

  it('scans again here the blocks a lost worker took', async () => {
    const dims = parseDimensions('src_ip,proto');
    const scan = () => windowScan();
    const a = await topN(scan(), dims, 'bytes', 20, { times: true });
    for (const take of [0, 5, 1000]) {
      const lost = fakeWorker(take, () => new ScanWorkerLostError('the scan worker exited (code 1)'));
      expect(await topN(scan(), dims, 'bytes', 20, { times: true, split: { workers: lost } }), `took ${take}`).toEqual(a);
    }
  });

  it('falls back to one thread when the worker cannot start, and gives up after a few tries', async () => {
    const broken = join(dir, 'broken-worker.mjs');
    writeFileSync(broken, "throw new Error('no such worker');\n");
    const bad = new ScanWorkerPool({ script: pathToFileURL(broken) });
    const q = { ...window, filter: 'proto tcp', by: parseDimensions('dst_port'), metric: 'bytes' as const, limit: 5 };
    const a = await analytics(1).top(q);
    for (let i = 0; i < 4; i++) expect(await analytics(2, bad).top(q)).toEqual(a);
    expect(bad.available).toBe(false);
    expect(bad.threads).toBe(0);
    expect(new ScanWorkerPool({ script: pathToFileURL(join(dir, 'none.js')) }).available).toBe(false);
  });

  it('stops an idle worker, and leaves none running once closed', async () => {
    const idle = new ScanWorkerPool({ script: pathToFileURL(SCRIPT), idleMs: 50 });
    const q = { ...window, by: parseDimensions('dst_port'), metric: 'bytes' as const, limit: 5 };
    await analytics(2, workerTakesAll(idle)).top(q);
    expect(idle.counters.jobs).toBe(1);
    await vi.waitFor(() => expect(idle.threads).toBe(0), { timeout: 5000 });
    // A later job starts a new one; close stops it.
    await analytics(2, workerTakesAll(idle)).top(q);
    expect(idle.threads).toBe(1);
    await idle.close();
    expect(idle.threads).toBe(0);
    expect(idle.pending).toBe(0);
  });

  it('kept warm: a worker waits before any job, a fresh one replaces an idle one, and none is left once closed', async () => {
    const warm = new ScanWorkerPool({ script: pathToFileURL(SCRIPT), idleMs: 50 });
    warm.keepWarm();
    expect(warm.threads).toBe(1);
    const first = warm.threadId;
    // Before its first job it is not stopped as idle.
    await new Promise((r) => setTimeout(r, 200));
    expect(warm.threadId).toBe(first);
    const q = { ...window, by: parseDimensions('dst_port'), metric: 'bytes' as const, limit: 5 };
    const alone = await analytics(1).top(q);
    expect(await analytics(2, workerTakesAll(warm)).top(q)).toEqual(alone);
    expect(warm.counters.jobs).toBe(1);
    // Idle after the job: replaced by another thread, which takes the next job.
    await vi.waitFor(() => expect(warm.threadId ?? first).not.toBe(first), { timeout: 5000 });
    expect(warm.threads).toBe(1);
    expect(await analytics(2, workerTakesAll(warm)).top(q)).toEqual(alone);
    expect(warm.counters.jobs).toBe(2);
    await warm.close();
    await new Promise((r) => setTimeout(r, 200));
    expect(warm.threads).toBe(0);
  });

  it('has no worker running once the pool is closed', async () => {
    await pool.close();
    expect(pool.threads).toBe(0);
    expect(pool.pending).toBe(0);
  });
});
