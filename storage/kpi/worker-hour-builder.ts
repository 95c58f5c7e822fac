/**
 * Runs KPI hour builds in a worker thread (kpi-worker.ts). The worker script
 * exists only in the compiled build; run from TypeScript sources (tests),
 * `startWorkerHourBuilder` returns undefined and builds stay in-thread.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { CaptureFileInfo } from '../capture/reader.js';
import type { BuildRequest, BuildResponse } from './kpi-worker.js';

/** A worker that builds hours; `build` matches KpiBuilderOptions.buildElsewhere. */
export interface WorkerHourBuilder {
  build(file: CaptureFileInfo): Promise<{ stored: boolean; corruptFiles: number; corruptBlocks: number }>;
  close(): Promise<void>;
}

/** Starts the worker writing to the cache at `dbPath`, or undefined when there is no compiled worker script. */
export function startWorkerHourBuilder(dbPath: string, script = new URL('./kpi-worker.js', import.meta.url)): WorkerHourBuilder | undefined {
  if (!existsSync(fileURLToPath(script))) return undefined;
  const worker = new Worker(script, { workerData: { dbPath } });
  // Builds are rare (one per sealed hour): the worker must not keep the process alive by itself.
  worker.unref();
  const waiting = new Map<number, { resolve: (r: BuildResponse) => void; reject: (e: Error) => void }>();
  let next = 1;
  let failed: Error | undefined;
  worker.on('message', (res: BuildResponse) => {
    const w = waiting.get(res.id);
    waiting.delete(res.id);
    if (!w) return;
    if (res.error) w.reject(new Error(`KPI build failed in the worker: ${res.error}`));
    else w.resolve(res);
  });
  const fail = (err: Error): void => {
    failed = err;
    for (const w of waiting.values()) w.reject(err);
    waiting.clear();
  };
  worker.on('error', fail);
  worker.on('exit', (code) => fail(new Error(`KPI worker exited (${code})`)));
  return {
    build(file) {
      if (failed) return Promise.reject(failed);
      const id = next++;
      return new Promise<BuildResponse>((resolve, reject) => {
        waiting.set(id, { resolve, reject });
        const req: BuildRequest = { id, file };
        worker.postMessage(req);
      });
    },
    async close() {
      failed ??= new Error('KPI worker closed');
      await worker.terminate();
    },
  };
}
