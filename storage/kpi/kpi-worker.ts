/**
 * Worker-thread side of worker-hour-builder.ts: builds one sealed hour's KPI
 * entry (scan, ranking, compression) and writes it to the cache file through
 * its own SQLite connection, off the thread the UDP listeners run on.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { CaptureFileInfo } from '../capture/reader.js';
import { newReadStats } from '../capture/reader.js';
import { aggregateFiles, hourEntry } from './kpi-builder.js';
import { SqliteKpiCache } from './sqlite-kpi-cache.js';

/** A request from the main thread. */
export interface BuildRequest {
  id: number;
  file: CaptureFileInfo;
}

/** The answer to one request. */
export interface BuildResponse {
  id: number;
  stored: boolean;
  corruptFiles: number;
  corruptBlocks: number;
  error?: string;
}

const cache = new SqliteKpiCache((workerData as { dbPath: string }).dbPath);

parentPort?.on('message', (req: BuildRequest) => {
  const stats = newReadStats();
  aggregateFiles([req.file], { stats })
    .then((agg) => {
      const stored = stats.corruptFiles === 0;
      if (stored) cache.put(hourEntry(req.file, agg));
      const res: BuildResponse = { id: req.id, stored, corruptFiles: stats.corruptFiles, corruptBlocks: stats.corruptBlocks };
      parentPort!.postMessage(res);
    })
    .catch((err: unknown) => {
      const res: BuildResponse = { id: req.id, stored: false, corruptFiles: stats.corruptFiles, corruptBlocks: stats.corruptBlocks, error: String(err) };
      parentPort!.postMessage(res);
    });
});
