import { mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { defaultConfigCacheDir, loadConfigCached, schemaFiles } from '../../src/config-cache.js';
import { ConfigError, loadConfig, type ConfigSources } from '../../src/config.js';
import { loadedModules } from '../helpers/loaded-modules.js';

function tempDir(): string {
  return mkdtempSync(join(tmpdir(), 'netsvc-config-cache-'));
}

/** The cache's one entry file; fails when there is not exactly one. */
function entryFile(cacheDir: string): string {
  const files = readdirSync(cacheDir).filter((f) => f.endsWith('.json'));
  expect(files).toHaveLength(1);
  return join(cacheDir, files[0]!);
}

/**
 * Changes the HTTP port of every cached configuration, keeping their keys: a load that returns
 * this port took its configuration from the cache; one that does not validated again.
 */
function tamper(cacheDir: string, port = 1): void {
  for (const name of readdirSync(cacheDir).filter((f) => f.endsWith('.json'))) {
    const file = join(cacheDir, name);
    const entry = JSON.parse(readFileSync(file, 'utf8')) as { config: { http: { port: number } } };
    entry.config.http.port = port;
    writeFileSync(file, JSON.stringify(entry));
  }
}

function setup(config: object = { http: { port: 9000 } }) {
  const cwd = tempDir();
  const cacheDir = join(tempDir(), 'netsvc');
  writeFileSync(join(cwd, 'netsvc.config.json'), JSON.stringify(config));
  const load = (sources: Partial<ConfigSources> = {}, env: NodeJS.ProcessEnv = {}) =>
    loadConfigCached({ cwd, env, ...sources }, cacheDir);
  return { cwd, cacheDir, load };
}

describe('loadConfigCached', () => {
  it('gives what loadConfig gives, frozen, and the next load takes it from the cache', async () => {
    const { cwd, cacheDir, load } = setup({ http: { port: 9000 }, timezone: 'UTC', entities: { a: { flowSources: [] } } });
    const first = await load();
    expect(first).toEqual(loadConfig({ cwd, env: {} }));
    expect(Object.isFrozen(first.http)).toBe(true);
    expect(first.dataDir).toBe(join(cwd, 'data'));
    const file = entryFile(cacheDir);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(cacheDir).mode & 0o777).toBe(0o700);

    const second = await load();
    expect(second).toEqual(first);
    expect(Object.isFrozen(second.http)).toBe(true);
    tamper(cacheDir, 1234);
    expect((await load()).http.port).toBe(1234);
  });

  it('validates again when the config file changes, and refuses a bad one as loadConfig does', async () => {
    const { cwd, cacheDir, load } = setup();
    await load();
    tamper(cacheDir);
    writeFileSync(join(cwd, 'netsvc.config.json'), JSON.stringify({ http: { port: 9001 } }));
    expect((await load()).http.port).toBe(9001);

    writeFileSync(join(cwd, 'netsvc.config.json'), JSON.stringify({ http: { port: 'x' } }));
    const expected = (() => {
      try {
        loadConfig({ cwd, env: {} });
      } catch (err) {
        return err;
      }
    })();
    expect(expected).toBeInstanceOf(ConfigError);
    await expect(load()).rejects.toThrow(expected as Error);
    writeFileSync(join(cwd, 'netsvc.config.json'), '{ not json');
    await expect(load()).rejects.toThrow(ConfigError);
  });

  it('validates again when a NETSVC_ variable, a flag or the data dir changes', async () => {
    const { cacheDir, load } = setup();
    await load();
    tamper(cacheDir);
    expect((await load({}, { NETSVC_HTTP__PORT: '9002' })).http.port).toBe(9002);
    tamper(cacheDir);
    expect((await load({}, { NETSVC_HTTP__PORT: '9002' })).http.port).toBe(1);
    await expect(load({}, { NETSVC_HTTP__PORT: '"x"' })).rejects.toThrow(ConfigError);
    expect((await load({}, { NETSVC_HTTP__PORT: '9003' })).http.port).toBe(9003);

    await load();
    tamper(cacheDir);
    expect((await load({ overrides: { 'http.port': 9004 } })).http.port).toBe(9004);
    tamper(cacheDir);
    expect((await load({ dataDir: '/tmp/elsewhere' })).http.port).toBe(9000);
    // Variables outside the configuration do not count.
    tamper(cacheDir);
    expect((await load({ dataDir: '/tmp/elsewhere' }, { PATH: '/nowhere' })).http.port).toBe(1);
  });

  it('validates again when the system time zone may have changed and the configuration names none', async () => {
    const { cacheDir, load } = setup();
    await load({}, { TZ: 'UTC' });
    tamper(cacheDir);
    expect((await load({}, { TZ: 'Europe/Paris' })).http.port).toBe(9000);
  });

  it('validates again when a module of the schema is touched (the build part of the key: one stat per file)', async () => {
    const { cacheDir, load } = setup();
    await load();
    tamper(cacheDir);
    expect((await load()).http.port).toBe(1);
    // Under the tests the schema is the sources: config-error.ts is one of its modules.
    const file = resolve('src/config-error.ts');
    const { atime, mtime } = statSync(file);
    try {
      utimesSync(file, atime, new Date(mtime.getTime() + 1000));
      expect((await load()).http.port).toBe(9000);
      tamper(cacheDir);
      expect((await load()).http.port).toBe(1);
    } finally {
      utimesSync(file, atime, mtime);
    }
  });

  it('resolves the data dir against the working directory of each run, not of the run that filled the cache', async () => {
    const { cwd, cacheDir } = setup({ dataDir: 'rel' });
    const other = tempDir();
    writeFileSync(join(other, 'netsvc.config.json'), JSON.stringify({ dataDir: 'rel' }));
    expect((await loadConfigCached({ cwd, env: {} }, cacheDir)).dataDir).toBe(join(cwd, 'rel'));
    expect((await loadConfigCached({ cwd: other, env: {} }, cacheDir)).dataDir).toBe(join(other, 'rel'));
  });

  it('falls back to validating, silently, when the cache is corrupt, unreadable or cannot be written', async () => {
    const { cacheDir, load } = setup();
    await load();
    const file = entryFile(cacheDir);
    for (const garbage of ['', '{', 'null', '[]', '{"format":1}', JSON.stringify({ format: 1, key: 'x', config: {} })]) {
      writeFileSync(file, garbage);
      expect((await load()).http.port).toBe(9000);
    }
    // The right key with a config of the wrong shape.
    const entry = JSON.parse(readFileSync(file, 'utf8')) as { config: unknown };
    writeFileSync(file, JSON.stringify({ ...entry, config: 'x' }));
    expect((await load()).http.port).toBe(9000);
    // A directory where the entry should be: neither read nor written.
    const blocked = setup();
    mkdirSync(blocked.cacheDir, { recursive: true });
    for (let i = 0; i < 16; i++) mkdirSync(join(blocked.cacheDir, `config-${i.toString(16)}.json`));
    expect((await blocked.load()).http.port).toBe(9000);
    // A cache dir under a file: cannot be made.
    const cwd = tempDir();
    const plainFile = join(tempDir(), 'file');
    writeFileSync(plainFile, '');
    expect((await loadConfigCached({ cwd, env: {} }, join(plainFile, 'netsvc'))).http.port).toBe(8080);
    // No cache dir at all.
    expect((await loadConfigCached({ cwd, env: {} }, undefined)).http.port).toBe(8080);
  });

  it('lives under $XDG_CACHE_HOME, else ~/.cache', () => {
    expect(defaultConfigCacheDir({ XDG_CACHE_HOME: '/x', HOME: '/h' })).toBe('/x/netsvc');
    expect(defaultConfigCacheDir({ HOME: '/h' })).toBe('/h/.cache/netsvc');
    expect(defaultConfigCacheDir({})).toBeUndefined();
  });
});

describe('schemaFiles (the build part of the cache key)', () => {
  it('follows relative imports but not type-only ones, and names the packages imported', () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'a.js'), "import { z } from 'zod';\nimport {\n  b,\n} from './b.js';\nexport { c } from './c.js';\n");
    writeFileSync(join(dir, 'b.js'), "import { readFileSync } from 'node:fs';\nexport const b = 1;\n");
    writeFileSync(join(dir, 'c.ts'), "import type { T } from './t.js';\nexport const c = 2;\n");
    mkdirSync(join(dir, 'node_modules', 'zod'), { recursive: true });
    writeFileSync(join(dir, 'node_modules', 'zod', 'package.json'), '{"name":"zod","version":"9"}');
    expect(schemaFiles(pathToFileURL(join(dir, 'a.js')))).toEqual([
      join(dir, 'a.js'),
      join(dir, 'b.js'),
      join(dir, 'c.ts'),
      join(dir, 'node_modules', 'zod', 'package.json'),
    ]);
  });

  it('names every module the compiled schema loads', () => {
    // Every module of this repository that importing dist/src/config.js loads, seen by a loader hook.
    const config = resolve('dist/src/config.js');
    const run = loadedModules(['--input-type=module', '-e', `await import(${JSON.stringify(pathToFileURL(config).href)})`]);
    expect(run.status, run.stderr).toBe(0);
    const ours = run.urls
      .filter((url) => url.startsWith('file:') && !url.includes('/node_modules/'))
      .map((url) => new URL(url).pathname);
    const named = schemaFiles(pathToFileURL(config));
    expect(ours.length).toBeGreaterThan(3);
    for (const file of ours) expect(named).toContain(file);
    expect(named.some((f) => f.endsWith('/zod/package.json'))).toBe(true);
  });
});
