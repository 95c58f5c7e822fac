/**
 * Builds the geo tables' cache files in a worker thread at start-up. Without it, the first query
 * that groups or filters by AS or country builds them from the CSVs on the HTTP thread (about a
 * second of CPU per kind, several under load), and every request waits meanwhile; with it, that
 * query reads the built files (about 0.1 s per kind).
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { GeoConfig } from './geo-config.js';

export type GeoWarmResult = { ok: true; ms: number } | { ok: false; error: string };

/**
 * Starts the worker; resolves when it is done (it never rejects). Undefined when geo is disabled or
 * the worker script is not built (tests run from source pass `script`).
 */
export function warmGeoCache(
  config: GeoConfig,
  dataDir: string,
  script: URL = new URL('./geo-warm-worker.js', import.meta.url),
): Promise<GeoWarmResult> | undefined {
  if (!config.enabled || !existsSync(fileURLToPath(script))) return undefined;
  return new Promise((resolve) => {
    const worker = new Worker(script, { workerData: { config, dataDir } });
    // It must not keep a stopping service alive.
    worker.unref();
    let done = false;
    worker.once('message', (m: GeoWarmResult) => {
      done = true;
      resolve(m);
    });
    worker.once('error', (err) => {
      done = true;
      resolve({ ok: false, error: err.message });
    });
    worker.once('exit', (code) => {
      if (!done) resolve({ ok: false, error: `geo worker exited with code ${code}` });
    });
  });
}
