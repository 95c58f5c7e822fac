import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadedModules, packagesOf } from '../helpers/loaded-modules.js';

const CLI = resolve('dist/src/cli.js');
/** Node modules a light command has no use for, each a few milliseconds of a start with what it loads. */
const HEAVY_BUILTINS = ['child_process', 'net', 'dgram', 'crypto', 'http', 'worker_threads'];

/** Our modules among `urls`, relative to dist/. */
function ours(urls: readonly string[]): string[] {
  const dist = `${resolve('dist')}/`;
  return urls
    .filter((u) => u.startsWith('file:') && !u.includes('/node_modules/'))
    .map((u) => new URL(u).pathname.replace(dist, ''));
}

describe('what a CLI start loads (issue 19: every command loaded every module)', () => {
  // dist/src/cli.js is one module (tools/bundle-cli.mjs) holding cli.ts, the command registration
  // modules and commander. The command modules only register; what a command does (its -run
  // module, stores, decoders, the schema library) is loaded when it runs. A heavy import at the
  // top of a command module shows here.
  for (const args of [['--help'], ['status', '--help'], ['admin', 'entity', 'list', '--help'], ['dump', '--help']]) {
    it(`netsvc ${args.join(' ')} loads the CLI bundle and small modules only`, () => {
      const run = loadedModules([CLI, ...args]);
      expect(run.status, run.stderr).toBe(0);
      expect(packagesOf(run.urls)).toEqual([]);
      const mine = ours(run.urls);
      expect(mine[0]).toBe('src/cli.js');
      // The registration modules are in the bundle; context.js is shared with the commands' work.
      expect(mine.filter((m) => m.startsWith('src/commands/'))).toEqual(['src/commands/context.js']);
      expect(mine).not.toContain('src/user-errors.js');
      expect(mine.filter((m) => m.endsWith('-run.js'))).toEqual([]);
      expect(mine).not.toContain('src/config.js');
      expect(mine.filter((m) => /^(collector\/(decode|pcap|native)|storage\/(capture|kpi|sql\/sqlite)|api)\//.test(m))).toEqual(
        [],
      );
      // Node's heavier modules: commander's child_process (with net and dgram) only for
      // executable subcommands, which netsvc has none of; crypto only for the work that uses it.
      expect(run.builtins.filter((b) => HEAVY_BUILTINS.includes(b))).toEqual([]);
    });
  }

  it('admin entity list loads the schema library only while its configuration is not cached', () => {
    const env = { ...process.env, XDG_CACHE_HOME: mkdtempSync(join(tmpdir(), 'netsvc-cache-')) };
    const dataDir = mkdtempSync(join(tmpdir(), 'netsvc-data-'));
    const first = loadedModules([CLI, 'admin', 'entity', 'list', '--data-dir', dataDir], env);
    expect(first.status, first.stderr).toBe(0);
    // better-sqlite3 is given its addon's file: the `bindings` package (its path search) is not loaded.
    expect(packagesOf(first.urls)).toEqual(['better-sqlite3', 'zod']);
    const second = loadedModules([CLI, 'admin', 'entity', 'list', '--data-dir', dataDir], env);
    expect(second.status, second.stderr).toBe(0);
    expect(packagesOf(second.urls)).toEqual(['better-sqlite3']);
    expect(ours(second.urls)).not.toContain('src/config.js');
    // better-sqlite3's JavaScript in the build's one-file copy (tools/bundle-cli.mjs), not the package's fourteen files.
    expect(ours(second.urls)).toContain('vendor/better-sqlite3.cjs');
    expect(second.urls.filter((u) => u.includes('/better-sqlite3/lib/'))).toEqual([]);
    expect(second.builtins.filter((b) => HEAVY_BUILTINS.includes(b))).toEqual([]);
  });

  it('the built CLI reports user errors in one line, thrown in the bundle or in the work it loads', () => {
    // The error classes the bundle's commands throw are the ones cli.js tests against: one instance each.
    const env = { ...process.env, XDG_CACHE_HOME: mkdtempSync(join(tmpdir(), 'netsvc-cache-')) };
    const dataDir = mkdtempSync(join(tmpdir(), 'netsvc-data-'));
    const cli = (...args: string[]) =>
      spawnSync(process.execPath, [CLI, ...args, '--data-dir', dataDir], { env, encoding: 'utf8' });
    const usage = cli('admin', 'user', 'add', 'acme', 'bob', '--areas', 'netflow,radius');
    expect([usage.status, usage.stderr]).toEqual([2, "netsvc: unknown area 'radius' (areas: netflow, logviewer, hotspot)\n"]);
    const store = cli('admin', 'user', 'add', 'nosuch', 'bob');
    expect([store.status, store.stderr]).toEqual([1, "netsvc: entity 'nosuch' does not exist\n"]);
    const radius = cli('quota', 'list');
    expect(radius.status).toBe(1);
    expect(radius.stderr).toMatch(/^netsvc: entity 'default' has no RADIUS database yet .*\n$/);
  });
});
