/**
 * Worker-thread side of worker-hour-builder.ts, off the thread that answers
 * HTTP: builds one sealed hour's KPI entry (scan, ranking, compression) and
 * writes it to the cache file through its own SQLite connection, and keeps
 * the open hours' aggregates from their files (open-hour-aggregator.ts).
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { CaptureFileInfo } from '../capture/reader.js';
import { newReadStats } from '../capture/reader.js';
import type { Dimension } from './kpi-cache.js';
import { aggregateFiles, hourEntry } from './kpi-builder.js';
import { catchUpTracked, OpenHourAggregator, type OpenHourLevel, type OpenHourSnapshot } from './open-hour-aggregator.js';
import { SqliteKpiCache } from './sqlite-kpi-cache.js';

/** A request from the main thread. */
export type WorkerRequest =
  | { t: 'build'; id: number; file: CaptureFileInfo }
  | { t: 'open-snapshot'; id: number; path: string }
  | { t: 'open-level'; id: number; path: string; dim: Dimension; level: number; version: number }
  | { t: 'open-track'; paths: string[] };

/** The answer to a build. */
export interface BuildResponse {
  id: number;
  stored: boolean;
  corruptFiles: number;
  corruptBlocks: number;
  error?: string;
}

/** Every answer; `open-*` requests are answered with `value`. */
export type WorkerResponse =
  BuildResponse | { id: number; value: OpenHourSnapshot | OpenHourLevel | 'stale' | undefined; error?: string };

/** How often tracked open hours are brought up to date when nobody asks. */
const BACKGROUND_EVERY_MS = 1000;
/** Of each period, the most spent on hours no query watches: a quarter of a core. */
const UNWATCHED_MS = 250;

const cache = new SqliteKpiCache((workerData as { dbPath: string }).dbPath);
const openHours = new OpenHourAggregator({ now: Date.now });
let catchingUp = false;
const background = setInterval(() => {
  if (catchingUp) return;
  catchingUp = true;
  void catchUpTracked(openHours, UNWATCHED_MS).finally(() => (catchingUp = false));
}, BACKGROUND_EVERY_MS);
background.unref();

function answer(id: number, fn: () => OpenHourSnapshot | OpenHourLevel | 'stale' | undefined): void {
  let res: WorkerResponse;
  try {
    res = { id, value: fn() };
  } catch (err) {
    res = { id, value: undefined, error: String(err) };
  }
  parentPort!.postMessage(res);
}

parentPort?.on('message', (req: WorkerRequest) => {
  switch (req.t) {
    case 'open-snapshot':
      answer(req.id, () => openHours.snapshot(req.path));
      return;
    case 'open-level':
      answer(req.id, () => openHours.level(req.path, req.dim, req.level, req.version));
      return;
    case 'open-track':
      openHours.track(req.paths);
      return;
    case 'build': {
      const stats = newReadStats();
      aggregateFiles([req.file], { stats })
        .then((agg) => {
          const stored = stats.corruptFiles === 0;
          if (stored) cache.put(hourEntry(req.file, agg));
          const res: BuildResponse = { id: req.id, stored, corruptFiles: stats.corruptFiles, corruptBlocks: stats.corruptBlocks };
          parentPort!.postMessage(res);
        })
        .catch((err: unknown) => {
          const res: BuildResponse = {
            id: req.id,
            stored: false,
            corruptFiles: stats.corruptFiles,
            corruptBlocks: stats.corruptBlocks,
            error: String(err),
          };
          parentPort!.postMessage(res);
        });
      return;
    }
  }
});
