/**
 * Helpers for the collector's worker threads: the calling thread's id and
 * where a worker's compiled script is.
 */
import { existsSync, readlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The calling thread's id on Linux (/proc/thread-self names it), so the service can set its priority; else undefined. */
export function currentThreadId(): number | undefined {
  if (process.platform !== 'linux') return undefined;
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    return Number.isInteger(tid) && tid > 0 ? tid : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The compiled script `collector/<name>.js` of a worker thread: next to this
 * module when it runs compiled, else (tests run the sources) under dist/.
 */
export function workerScriptPath(name: string): string {
  const here = fileURLToPath(import.meta.url);
  const sibling = join(dirname(here), `${name}.js`);
  if (!here.endsWith('.ts') && existsSync(sibling)) return sibling;
  const built = fileURLToPath(new URL(`../dist/collector/${name}.js`, import.meta.url));
  if (existsSync(built)) return built;
  throw new Error(`worker script not built: ${built} is missing (run npm run build)`);
}
