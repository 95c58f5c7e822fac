/**
 * Helpers for the collector's worker threads: the calling thread's id and
 * where a worker's compiled script is.
 */
import { existsSync, readlinkSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
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

/** The package root above `dir`: the nearest directory up with a package.json (sources and dist/ alike). */
export function packageRoot(dir: string): string {
  while (!existsSync(join(dir, 'package.json')) && dirname(dir) !== dir) dir = dirname(dir);
  return dir;
}

/**
 * The compiled module `<name>.js` beside the caller (`fromUrl`, its
 * import.meta.url) for a worker thread to load: the sibling when the caller
 * runs compiled, else (tests run the sources) the same path under dist/ of
 * the package root (the nearest directory up with a package.json).
 */
export function compiledModulePath(fromUrl: string, name: string): string {
  const here = fileURLToPath(fromUrl);
  const sibling = join(dirname(here), `${name}.js`);
  if (!here.endsWith('.ts') && existsSync(sibling)) return sibling;
  const root = packageRoot(dirname(here));
  const built = join(root, 'dist', relative(root, dirname(here)), `${name}.js`);
  if (existsSync(built)) return built;
  throw new Error(`worker script not built: ${built} is missing (run npm run build)`);
}

/** The compiled script `<name>.js` of a worker thread beside this module (see compiledModulePath). */
export function workerScriptPath(name: string): string {
  return compiledModulePath(import.meta.url, name);
}
