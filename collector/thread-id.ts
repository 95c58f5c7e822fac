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
 * The compiled module `<dir>/<name>.js` for a worker thread to load, found
 * from `fromUrl` (the caller's import.meta.url, a module of `<dir>`): its
 * sibling when the caller runs compiled, else (tests run the sources) the
 * one under dist/.
 */
export function compiledModulePath(fromUrl: string, dir: string, name: string): string {
  const here = fileURLToPath(fromUrl);
  const sibling = join(dirname(here), `${name}.js`);
  if (!here.endsWith('.ts') && existsSync(sibling)) return sibling;
  const built = fileURLToPath(new URL(`../dist/${dir}/${name}.js`, fromUrl));
  if (existsSync(built)) return built;
  throw new Error(`worker script not built: ${built} is missing (run npm run build)`);
}

/** The compiled script `collector/<name>.js` of a worker thread (see compiledModulePath). */
export function workerScriptPath(name: string): string {
  return compiledModulePath(import.meta.url, 'collector', name);
}
