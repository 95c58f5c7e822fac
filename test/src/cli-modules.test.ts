import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadedModules, packagesOf } from '../helpers/loaded-modules.js';

const CLI = resolve('dist/src/cli.js');

/** Our modules among `urls`, relative to dist/. */
function ours(urls: readonly string[]): string[] {
  const dist = `${resolve('dist')}/`;
  return urls
    .filter((u) => u.startsWith('file:') && !u.includes('/node_modules/'))
    .map((u) => new URL(u).pathname.replace(dist, ''));
}

describe('what a CLI start loads (issue 19: every command loaded every module)', () => {
  // The command modules only register; what a command does (its -run module, stores, decoders,
  // the schema library) is loaded when it runs. A heavy import at the top of a command module
  // shows here.
  for (const args of [['--help'], ['status', '--help'], ['admin', 'entity', 'list', '--help'], ['dump', '--help']]) {
    it(`netsvc ${args.join(' ')} loads commander and small modules only`, () => {
      const run = loadedModules([CLI, ...args]);
      expect(run.status, run.stderr).toBe(0);
      expect(packagesOf(run.urls)).toEqual(['commander']);
      const mine = ours(run.urls);
      expect(mine).toContain('src/commands/admin.js');
      expect(mine.filter((m) => m.endsWith('-run.js'))).toEqual([]);
      expect(mine).not.toContain('src/config.js');
      expect(mine.filter((m) => /^(collector\/(decode|pcap|native)|storage\/(capture|kpi|sql\/sqlite)|api)\//.test(m))).toEqual(
        [],
      );
    });
  }

  it('admin entity list loads the schema library only while its configuration is not cached', () => {
    const env = { ...process.env, XDG_CACHE_HOME: mkdtempSync(join(tmpdir(), 'netsvc-cache-')) };
    const dataDir = mkdtempSync(join(tmpdir(), 'netsvc-data-'));
    const first = loadedModules([CLI, 'admin', 'entity', 'list', '--data-dir', dataDir], env);
    expect(first.status, first.stderr).toBe(0);
    expect(packagesOf(first.urls)).toEqual(['better-sqlite3', 'commander', 'zod']);
    const second = loadedModules([CLI, 'admin', 'entity', 'list', '--data-dir', dataDir], env);
    expect(second.status, second.stderr).toBe(0);
    expect(packagesOf(second.urls)).toEqual(['better-sqlite3', 'commander']);
    expect(ours(second.urls)).not.toContain('src/config.js');
  });
});
