/**
 * Worker thread of geo-warm.ts: builds (or reads) both kinds of tables once, so that their cache
 * files under `<dataDir>/geo/` exist before the first query needs them. At the lowest priority: it
 * runs while serve starts and answers.
 */
import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import type { GeoConfig } from './geo-config.js';
import { openGeoLookup } from './open-geo-lookup.js';

const { config, dataDir } = workerData as { config: GeoConfig; dataDir: string };
try {
  // On Linux a thread has its own nice value; 0 names the calling thread.
  setPriority(0, 19);
} catch {
  // Not allowed or not supported: build at normal priority.
}
try {
  const started = performance.now();
  openGeoLookup(config, dataDir).loadAll();
  parentPort?.postMessage({ ok: true, ms: performance.now() - started });
} catch (err) {
  parentPort?.postMessage({ ok: false, error: (err as Error).message });
}
