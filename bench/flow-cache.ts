/**
 * `npm run bench -- flow-cache [--dir DIR] [--flows N] [--rounds R] [--no-raw]`
 *
 * Flow analytics answered from the KPI cache (storage/flow-query/cached-answers.ts)
 * over 24 cached hours: the storage suite's hour (softflowd seed expanded, N
 * flows, default 1 M) hard-linked under 24 hour names, each cached, as
 * bench/storage-kpi.ts does for its `kpi` over 24 cached hours (so every
 * link holds the same received minutes, and the cache's entries say so).
 * `--dir` reuses
 * the data of `npm run bench -- storage --keep DIR` instead of writing it.
 *
 * Prints the cache entry's build time with and without the minute counters,
 * the size of one hour's minute counters and rankings, then every round of:
 * series at 5-minute steps (total, by proto), top-N by src_ip (24 hours
 * and one hour) and by dst_port, from the cache and (one round, checked equal) from the files.
 */
import { existsSync, linkSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { openSqlite } from '../storage/sql/sqlite-driver.js';
import { sealedName, sourceDir } from '../storage/capture/file-names.js';
import { listCaptureFiles, newReadStats } from '../storage/capture/reader.js';
import { cachedSeries, cachedTopN } from '../storage/flow-query/cached-answers.js';
import { parseDimensions } from '../storage/flow-query/dimensions.js';
import { series } from '../storage/flow-query/series.js';
import { topN } from '../storage/flow-query/top-n.js';
import { aggregateFiles, hourEntry } from '../storage/kpi/kpi-builder.js';
import { SqliteKpiCache } from '../storage/kpi/sqlite-kpi-cache.js';
import { loadSeedFlows, SEED_FIXTURE } from './capture-flows.js';
import { fmt } from './lib.js';
import { HOUR, writeHour } from './storage.js';

const HOUR_MS = 3_600_000;

/** Runs the suite. */
export async function run(args: string[]): Promise<void> {
  const get = (name: string): string | undefined => {
    const i = args.indexOf(name);
    return i >= 0 ? args[i + 1] : undefined;
  };
  const rounds = Number(get('--rounds') ?? 3);
  const given = get('--dir');
  const work = given ?? mkdtempSync(join(tmpdir(), 'netsvc-bench-flow-cache-'));
  try {
    if (!given) await writeHour(loadSeedFlows(SEED_FIXTURE), Number(get('--flows') ?? 1_000_000), work);
    const file = listCaptureFiles(work, 'netflow', 'UTC').find((f) => f.hourStart === HOUR && f.kind === 'sealed');
    if (!file) throw new Error(`no sealed hour ${new Date(HOUR).toISOString()} under ${work}`);

    const dbPath = join(work, 'flow-cache-bench.sqlite');
    for (const suffix of ['', '-wal', '-shm']) rmSync(`${dbPath}${suffix}`, { force: true });
    const cache = new SqliteKpiCache(dbPath);
    let t = performance.now();
    hourEntry(file, await aggregateFiles([file], { minutes: false }));
    const withoutMs = performance.now() - t;
    t = performance.now();
    const entry = hourEntry(file, await aggregateFiles([file]));
    const withMs = performance.now() - t;
    cache.put(entry);

    const db = openSqlite(dbPath, { readonly: true });
    const minuteBytes = db
      .prepare<[], { b: number; r: number }>('SELECT sum(length(data)) AS b, sum(rows) AS r FROM kpi_minute')
      .get()!;
    const levelBytes = db.prepare<[], { b: number }>('SELECT sum(length(data)) AS b FROM kpi_level').get()!;
    const perDim = db
      .prepare<[], { dim: string; rows: number; b: number }>('SELECT dim, rows, length(data) AS b FROM kpi_minute')
      .all();
    db.close();
    console.log(`\nflow analytics from the KPI cache: ${entry.flows.toLocaleString('en-US')} flows per hour, 24 hours`);
    console.log(`cache entry of the hour: ${fmt(withoutMs, 0)} ms without minute counters, ${fmt(withMs, 0)} ms with them`);
    console.log(
      `minute counters of the hour: ${minuteBytes.r.toLocaleString('en-US')} rows, ${fmt(minuteBytes.b / 1024, 1)} KiB ` +
        `(rankings of the hour: ${fmt(levelBytes.b / 1024 / 1024, 1)} MiB); per dimension: ` +
        perDim.map((d) => `${d.dim} ${d.rows} rows ${fmt(d.b / 1024, 1)} KiB`).join(', '),
    );

    // 24 cached hours: the hour's file under 23 more names (kept data of the storage suite already has them).
    const dir = sourceDir(work, 'netflow');
    for (let k = 1; k < 24; k++) {
      const h = HOUR - k * HOUR_MS;
      const name = sealedName(h, 'UTC');
      if (!existsSync(join(dir, name))) linkSync(file.path, join(dir, name));
      // The same entry, as the file holds the same rows: a scan of the links and the cache then agree.
      cache.put({ ...entry, hourStart: h, file: name });
    }
    const from = HOUR - 23 * HOUR_MS;
    const to = HOUR + HOUR_MS;
    const window = () => ({ files: listCaptureFiles(work, 'netflow', 'UTC'), from, to, stats: newReadStats() });
    const proto = parseDimensions('proto');
    const cases = [
      {
        label: 'series 24 h at 5 min, total (bytes)',
        cached: () => cachedSeries(cache, 'netflow', window(), { dims: [], metric: 'bytes', n: 10, step: '5m' }),
        raw: () => series(window(), { dims: [], metric: 'bytes', n: 10, step: '5m' }),
      },
      {
        label: 'series 24 h at 5 min, top 10 proto + other (bytes)',
        cached: () => cachedSeries(cache, 'netflow', window(), { dims: proto, metric: 'bytes', n: 10, step: '5m' }),
        raw: () => series(window(), { dims: proto, metric: 'bytes', n: 10, step: '5m' }),
      },
      {
        label: 'top 10 src_ip over 24 h (bytes)',
        cached: () => cachedTopN(cache, 'netflow', window(), { dims: parseDimensions('src_ip'), metric: 'bytes', n: 10 }),
        raw: () => topN(window(), parseDimensions('src_ip'), 'bytes', 10),
      },
      {
        label: 'top 10 src_ip of one hour (bytes)',
        cached: () =>
          cachedTopN(
            cache,
            'netflow',
            { ...window(), from: HOUR, to: HOUR + HOUR_MS },
            {
              dims: parseDimensions('src_ip'),
              metric: 'bytes',
              n: 10,
            },
          ),
        raw: () => topN({ ...window(), from: HOUR, to: HOUR + HOUR_MS }, parseDimensions('src_ip'), 'bytes', 10),
      },
      {
        label: 'top 10 dst_port over 24 h (flows)',
        cached: () => cachedTopN(cache, 'netflow', window(), { dims: parseDimensions('dst_port'), metric: 'flows', n: 10 }),
        raw: () => topN(window(), parseDimensions('dst_port'), 'flows', 10),
      },
    ];
    const withRaw = !args.includes('--no-raw');
    for (const c of cases) {
      const times: string[] = [];
      let answer: unknown;
      for (let r = 0; r < rounds; r++) {
        const a = performance.now();
        answer = await c.cached();
        times.push(fmt(performance.now() - a, 1));
        if (answer === undefined) throw new Error(`${c.label}: not answered from the cache`);
      }
      let raw = '';
      if (withRaw) {
        const a = performance.now();
        const fromFiles = c.raw();
        raw = `; files ${fmt(performance.now() - a, 0)} ms, ${isDeepStrictEqual(fromFiles, answer) ? 'same answer' : 'DIFFERENT ANSWER'}`;
      }
      console.log(`${c.label}: cache ${times.join(' / ')} ms${raw}`);
    }
    cache.close();
  } finally {
    if (!given) rmSync(work, { recursive: true, force: true });
  }
}
