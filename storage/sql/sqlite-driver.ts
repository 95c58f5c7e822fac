/**
 * better-sqlite3, loaded as costs a CLI start least (issue 19; ~10-25 ms of `netsvc admin
 * entity list` here):
 * - in one file: the build (tools/bundle-cli.mjs) copies the installed package's JavaScript into
 *   dist/vendor/better-sqlite3.cjs, one module instead of fourteen to resolve and read. Without
 *   that file (the tests, on the sources) the package itself is loaded;
 * - through require: imported from an ES module, a CommonJS package goes through Node's CommonJS
 *   translation, whose lexer the first such import loads and runs;
 * - with its addon's file named (`nativeBinding`): without it better-sqlite3 asks the `bindings`
 *   package, which finds the module's root from a stack trace and tries a dozen paths. The file
 *   is the first of the paths `bindings` tries first (build/, build/Debug/, build/Release/) that
 *   exists, so the same addon loads; when none does, the package itself is loaded and searches as
 *   before (so is it when the copy is of another version than the one installed).
 * Every SQLite user takes the driver from here, so a process holds one copy of it (one
 * SqliteError class for instanceof).
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';

const require = createRequire(import.meta.url);

let driver: typeof BetterSqlite3 | undefined;
let addon: string | null | undefined;

/** The better-sqlite3 module (its `Database` constructor, with `SqliteError`). */
export function sqliteDriver(): typeof BetterSqlite3 {
  driver ??= vendored() ?? (require('better-sqlite3') as typeof BetterSqlite3);
  return driver;
}

/**
 * The build's one-file copy, when there is one of the installed version and the addon file is
 * found (the copy cannot search for the addon itself: `bindings` would start from netsvc's root).
 */
function vendored(): typeof BetterSqlite3 | undefined {
  try {
    const built = require('../../vendor/better-sqlite3.json') as { version: string };
    const installed = require('better-sqlite3/package.json') as { version: string };
    if (built.version !== installed.version) return undefined;
    if (addon === undefined) addon = addonFile();
    if (addon === null) return undefined;
    return require('../../vendor/better-sqlite3.cjs') as typeof BetterSqlite3;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'MODULE_NOT_FOUND') throw err;
    return undefined;
  }
}

/** `new Database(path, options)` of better-sqlite3. */
export function openSqlite(path: string, options: BetterSqlite3.Options = {}): BetterSqlite3.Database {
  const Database = sqliteDriver();
  if (addon === undefined) addon = addonFile();
  return new Database(
    path,
    addon === null || options.nativeBinding !== undefined ? options : { ...options, nativeBinding: addon },
  );
}

function addonFile(): string | null {
  try {
    const root = dirname(require.resolve('better-sqlite3/package.json'));
    const dirs = [['build'], ['build', 'Debug'], ['build', 'Release']];
    return dirs.map((d) => join(root, ...d, 'better_sqlite3.node')).find((f) => existsSync(f)) ?? null;
  } catch {
    return null;
  }
}
