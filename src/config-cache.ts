/**
 * The validated configuration, kept between CLI runs so that a command whose configuration has
 * not changed starts without the schema library (zod alone is ~90 ms of a 200 ms budget here).
 *
 * The configuration is still validated by the one schema (config.ts): a cache entry is the
 * schema's own output, stored after a validation that passed, under a key made of everything that
 * output depends on:
 * - the input the schema sees (`configInput`: the file's bytes as parsed, every `NETSVC_*`
 *   variable, the flags), so a changed file, variable or flag is validated again;
 * - the build: the schema module, every module of ours it imports and the package.json of each
 *   library they import (zod's version), each by its inode, size and modification time (read with
 *   one stat per file: hashing their bytes, and finding the packages, cost a start ~5 ms);
 * - what the defaults read besides: Node's version and time-zone data, and, when the
 *   configuration names no time zone, where the system's comes from (`TZ`, /etc/localtime by its
 *   link and stat, /etc/timezone: ICU's sources on Linux), which Intl would take ~30 ms to tell.
 * The key is kept whole in the entry and compared as it is, so no hash (and no node:crypto, ~5 ms
 * to load) is needed; a cheap one only picks the entry's file. An entry that cannot be read, does
 * not parse or holds another key is ignored; a cache that cannot be written is done without.
 * Entries go to 16 files, so the cache stays small whatever the number of configurations. The
 * entry holds the configuration as validated and its input, secrets included (database URLs,
 * `auth.jwtSecret`): files are 0600 in a 0700 directory.
 */
import { existsSync, mkdirSync, readFileSync, readlinkSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Config } from './config.js';
import { configInput, finishConfig, type ConfigSources } from './config-sources.js';

/** Bumped when the entry's layout changes. */
const FORMAT = 2;
/** Entry files; a key picks one by its first hex digit. */
const SLOTS = 16;

/** The per-user cache directory: `$XDG_CACHE_HOME/netsvc`, else `~/.cache/netsvc`; none without either. */
export function defaultConfigCacheDir(env: NodeJS.ProcessEnv): string | undefined {
  const base = env.XDG_CACHE_HOME || (env.HOME ? join(env.HOME, '.cache') : undefined);
  return base ? join(base, 'netsvc') : undefined;
}

/** The build part of an entry: the schema's files and their stamps when it was validated. */
interface BuildStamps {
  files: string[];
  stamps: string[];
}

/**
 * Builds the configuration as `loadConfig` does (same validation, same errors), taking the
 * validated result from `cacheDir` when its key matches, and storing it there after a validation.
 */
export async function loadConfigCached(
  sources: ConfigSources & { env: NodeJS.ProcessEnv },
  cacheDir: string | undefined,
): Promise<Config> {
  const cwd = sources.cwd ?? process.cwd();
  const raw = configInput(sources, sources.env, cwd);
  const key = cacheDir === undefined ? undefined : cacheKey(raw, sources.env);
  const file = key === undefined || cacheDir === undefined ? undefined : join(cacheDir, `config-${slot(key)}.json`);
  if (file !== undefined) {
    const cached = readEntry(file, key!);
    if (cached) return finishConfig(cached, cwd) as Config;
  }
  // Stamped before the schema is loaded: a build changed meanwhile is validated again next time.
  const build = file === undefined ? undefined : buildStamps();
  const { validateConfigInput } = await import('./config.js');
  const data = validateConfigInput(raw);
  if (file !== undefined && build !== undefined) writeEntry(cacheDir!, file, key!, build, data);
  return finishConfig(data, cwd);
}

function readEntry(file: string, key: string): { dataDir: string } | undefined {
  try {
    const entry = JSON.parse(readFileSync(file, 'utf8')) as {
      format?: unknown;
      key?: unknown;
      build?: unknown;
      config?: unknown;
    };
    if (entry.format !== FORMAT || entry.key !== key || !sameBuild(entry.build)) return undefined;
    const config = entry.config as { dataDir?: unknown } | null;
    if (typeof config !== 'object' || config === null || typeof config.dataDir !== 'string') return undefined;
    return config as { dataDir: string };
  } catch {
    return undefined;
  }
}

/** Whether every file of the entry's build has the stamp it had (one stat each). */
function sameBuild(build: unknown): boolean {
  const { files, stamps } = (build ?? {}) as Partial<BuildStamps>;
  if (!Array.isArray(files) || !Array.isArray(stamps) || files.length === 0 || files.length !== stamps.length) return false;
  return files.every((f, i) => typeof f === 'string' && stamp(f) === stamps[i]);
}

function writeEntry(dir: string, file: string, key: string, build: BuildStamps, data: unknown): void {
  // Only what JSON gives back unchanged is kept: a value it would alter is validated every time.
  const text = JSON.stringify({ format: FORMAT, key, build, config: data });
  // node:util only here, after a validation: imported, its module facade loads util's lazy parts for every start (~1 ms).
  const { isDeepStrictEqual } = process.getBuiltinModule('node:util');
  if (!isDeepStrictEqual((JSON.parse(text) as { config: unknown }).config, data)) return;
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  } catch {
    return;
  }
  // Written aside and renamed: a run reading at the same time sees the old entry or the new one.
  const tmp = `${file}.${process.pid}.tmp`;
  try {
    writeFileSync(tmp, text, { mode: 0o600 });
    renameSync(tmp, file);
  } catch {
    // A cache that cannot be written (read-only home, full disk) only costs the next start its time.
    rmSync(tmp, { force: true });
  }
}

function cacheKey(raw: Record<string, unknown>, env: NodeJS.ProcessEnv): string {
  const zone = raw.timezone === undefined ? ['tz', env.TZ ?? null, systemZoneSource()] : null;
  return JSON.stringify([FORMAT, SLOTS, process.version, process.versions.icu, process.versions.tz, zone, raw]);
}

/** The entry file a key goes to: FNV-1a of the key, its top hex digit. */
function slot(key: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
  return ((h >>> 0) % SLOTS).toString(16);
}

/** A file's inode, size and modification time (ns); null when it cannot be read. */
function stamp(file: string): string | null {
  try {
    const s = statSync(file, { bigint: true });
    return `${s.ino}:${s.size}:${s.mtimeNs}`;
  } catch {
    return null;
  }
}

/** What ICU reads on Linux to find the system's time zone when TZ is not set. */
function systemZoneSource(): unknown[] {
  const read = (f: () => string | null): string | null => {
    try {
      return f();
    } catch {
      return null;
    }
  };
  return [read(() => readlinkSync('/etc/localtime')), stamp('/etc/localtime'), read(() => readFileSync('/etc/timezone', 'utf8'))];
}

/** The schema's files (`schemaFiles`) and their stamps; undefined (no caching) when one cannot be read. */
function buildStamps(): BuildStamps | undefined {
  try {
    const files = schemaFiles(new URL('./config.js', import.meta.url));
    const stamps = files.map(stamp);
    if (stamps.some((s) => s === null)) return undefined;
    return { files, stamps: stamps as string[] };
  } catch {
    return undefined;
  }
}

/**
 * The schema module `entry`, every module of ours it imports (followed through their relative,
 * non-type imports), and the package.json of each library they import. Works on the compiled
 * build (.js) and on the sources (.ts, under the tests). Throws when a file cannot be read.
 */
export function schemaFiles(entry: URL): string[] {
  const modules: string[] = [];
  const packages = new Set<string>();
  const visit = (path: string): void => {
    if (modules.includes(path)) return;
    modules.push(path);
    const text = readFileSync(path, 'utf8');
    for (const m of text.matchAll(/^[ \t]*(import|export)\b([^'"]*?)\bfrom\s+['"]([^'"]+)['"]/gm)) {
      if (/^\s*type\b/.test(m[2]!)) continue;
      const spec = m[3]!;
      if (spec.startsWith('.')) visit(sourceOf(new URL(spec, pathToFileURL(path))));
      else if (!spec.startsWith('node:')) packages.add(spec.startsWith('@') ? spec.split('/', 2).join('/') : spec.split('/')[0]!);
    }
  };
  visit(sourceOf(entry));
  const require = createRequire(entry);
  return [...modules, ...[...packages].sort().map((pkg) => require.resolve(`${pkg}/package.json`))];
}

/** The file an import names: the `.js` of the build, else the `.ts` source it is compiled from. */
function sourceOf(url: URL): string {
  const path = fileURLToPath(url);
  if (existsSync(path) || !path.endsWith('.js')) return path;
  return `${path.slice(0, -3)}.ts`;
}
