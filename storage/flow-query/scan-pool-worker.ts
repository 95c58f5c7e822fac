/**
 * Worker thread of scan-pool.ts: groups the blocks of a top-N query it
 * claims (top-n.ts's groupPart) and sends the groups back as flat arrays,
 * transferred. The filter is compiled here from its text, the dimensions'
 * readers made here, with geo data opened here the way the caller's was
 * (kept for later jobs). One job at a time; a `cancel` stops it at its next
 * block.
 */
import { parentPort } from 'node:worker_threads';
import { CaptureFileError } from '../capture/format.js';
import { newReadStats } from '../capture/reader.js';
import { GeoDataError } from '../geo/geo-error.js';
import type { GeoLookup } from '../geo/geo-lookup.js';
import { openGeoLookup } from '../geo/open-geo-lookup.js';
import { BlockClaims } from './block-claims.js';
import { compileFilter } from './filter-compile.js';
import { parseFilter } from './filter-parse.js';
import type { FromWorker, GeoSource, GroupJob, JobError, SkippedDamage, ToWorker } from './scan-pool.js';
import { flatGroups, groupPart, keyLayout, WORKER_TAKER } from './top-n.js';

const port = parentPort!;
let current: { id: number; stop: AbortController } | undefined;
const geoLookups = new Map<string, GeoLookup>();

port.on('message', (m: ToWorker) => {
  if (m.t === 'cancel') {
    if (current?.id === m.id) current.stop.abort();
    return;
  }
  void run(m.id, m.job);
});

function geoOf(source: GeoSource | undefined): GeoLookup | undefined {
  if (!source) return undefined;
  const key = JSON.stringify(source);
  let geo = geoLookups.get(key);
  if (!geo) {
    geo = openGeoLookup(source.config, source.dataDir);
    geoLookups.set(key, geo);
  }
  return geo;
}

async function run(id: number, job: GroupJob): Promise<void> {
  const stop = new AbortController();
  current = { id, stop };
  try {
    const geo = geoOf(job.geo);
    const layout = keyLayout(job.dims, geo);
    const filter = job.filter === undefined ? undefined : compileFilter(parseFilter(job.filter), { geo });
    const stats = newReadStats();
    const errors: SkippedDamage[] = [];
    const onError = (e: CaptureFileError): void => {
      const prefix = e.path ? `${e.path}: ` : '';
      const message = e.message.startsWith(prefix) ? e.message.slice(prefix.length) : e.message;
      errors.push({ code: e.code, message, path: e.path, offset: e.offset });
    };
    const scan = {
      files: job.files,
      from: job.from,
      to: job.to,
      filter,
      stats,
      onError,
      part: new BlockClaims(job.claims, WORKER_TAKER, false, job.layout),
      signal: stop.signal,
    };
    const { groups, total } = await groupPart(scan, layout, job.times, job.stopAt, job.countOnly === true);
    if (stop.signal.aborted) {
      send({ id, ok: false, error: { name: 'AbortError', message: 'cancelled' } });
      return;
    }
    const flat = flatGroups(groups, job.times);
    const buffers = [flat.keys.buffer, flat.values.buffer];
    if (flat.v4) buffers.push(flat.v4.keys.buffer, flat.v4.values.buffer);
    send({ id, ok: true, result: { groups: flat, total, stats, errors } }, buffers);
  } catch (err) {
    send({ id, ok: false, error: jobError(err) });
  } finally {
    if (current?.id === id) current = undefined;
  }
}

function send(m: FromWorker, transfer: ArrayBuffer[] = []): void {
  port.postMessage(m, transfer);
}

function jobError(err: unknown): JobError {
  if (!(err instanceof Error)) return { name: 'Error', message: String(err) };
  const out: JobError = { name: err.name, message: err.message };
  if (err instanceof GeoDataError || err instanceof CaptureFileError) {
    out.code = err.code;
    if (err.path !== undefined) out.path = err.path;
  }
  return out;
}
