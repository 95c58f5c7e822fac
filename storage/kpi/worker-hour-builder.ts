/**
 * Runs KPI hour builds, and keeps the open hours' aggregates, in a worker
 * thread (kpi-worker.ts). The worker script exists only in the compiled
 * build; run from TypeScript sources (tests), `startWorkerHourBuilder`
 * returns undefined and both stay in-thread.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { CaptureFileInfo } from '../capture/reader.js';
import type { BuildResponse, WorkerRequest, WorkerResponse } from './kpi-worker.js';
import type { OpenHourLevel, OpenHours, OpenHourSnapshot } from './open-hour-aggregator.js';

/** A worker that builds hours; `build` matches KpiBuilderOptions.buildElsewhere. */
export interface WorkerHourBuilder {
  build(file: CaptureFileInfo): Promise<{ stored: boolean; corruptFiles: number; corruptBlocks: number }>;
  /** The open hours' aggregates, kept in the worker. */
  openHours: OpenHours;
  close(): Promise<void>;
}

/** Starts the worker writing to the cache at `dbPath`, or undefined when there is no compiled worker script. */
export function startWorkerHourBuilder(
  dbPath: string,
  script = new URL('./kpi-worker.js', import.meta.url),
): WorkerHourBuilder | undefined {
  if (!existsSync(fileURLToPath(script))) return undefined;
  const worker = new Worker(script, { workerData: { dbPath } });
  // Builds are rare (one per sealed hour): the worker must not keep the process alive by itself.
  worker.unref();
  const waiting = new Map<number, { resolve: (r: WorkerResponse) => void; reject: (e: Error) => void }>();
  let next = 1;
  let failed: Error | undefined;
  worker.on('message', (res: WorkerResponse) => {
    const w = waiting.get(res.id);
    waiting.delete(res.id);
    if (!w) return;
    if (res.error) w.reject(new Error(`KPI worker request failed: ${res.error}`));
    else w.resolve(res);
  });
  const fail = (err: Error): void => {
    failed = err;
    for (const w of waiting.values()) w.reject(err);
    waiting.clear();
  };
  worker.on('error', fail);
  worker.on('exit', (code) => fail(new Error(`KPI worker exited (${code})`)));
  const ask = (req: WorkerRequest & { id: number }): Promise<WorkerResponse> => {
    if (failed) return Promise.reject(failed);
    return new Promise<WorkerResponse>((resolve, reject) => {
      waiting.set(req.id, { resolve, reject });
      worker.postMessage(req);
    });
  };
  const valueOf = (res: WorkerResponse): unknown => ('value' in res ? res.value : undefined);
  return {
    async build(file) {
      return (await ask({ t: 'build', id: next++, file })) as BuildResponse;
    },
    openHours: {
      async snapshot(path) {
        return valueOf(await ask({ t: 'open-snapshot', id: next++, path })) as OpenHourSnapshot | undefined;
      },
      async level(path, dim, level, version) {
        return valueOf(await ask({ t: 'open-level', id: next++, path, dim, level, version })) as
          OpenHourLevel | undefined | 'stale';
      },
      track(paths) {
        if (!failed) worker.postMessage({ t: 'open-track', paths: [...paths] } satisfies WorkerRequest);
      },
    },
    async close() {
      failed ??= new Error('KPI worker closed');
      await worker.terminate();
    },
  };
}
