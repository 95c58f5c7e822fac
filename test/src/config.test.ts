import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';

function tempDir(): string {
  return mkdtempSync(join(tmpdir(), 'netsvc-config-'));
}

describe('loadConfig', () => {
  it('runs on defaults with no file: HTTP on 127.0.0.1:8080, two flow sources, SQLite stores', () => {
    const cwd = tempDir();
    const cfg = loadConfig({ cwd, env: {} });
    expect(cfg.http).toMatchObject({ host: '127.0.0.1', port: 8080 });
    expect(cfg.dataDir).toBe(join(cwd, 'data'));
    expect(cfg.flowSources.netflow?.listen).toBe('0.0.0.0:2055');
    expect(cfg.flowSources.lentor?.listen).toBe('0.0.0.0:2056');
    expect(cfg.entities.default).toMatchObject({ radius: 'sqlite:radius.sqlite', syslog: 'sqlite:syslog.sqlite' });
    expect(Object.isFrozen(cfg.http)).toBe(true);
  });

  it('reads netsvc.config.json from the working directory, then environment overrides win', () => {
    const cwd = tempDir();
    writeFileSync(join(cwd, 'netsvc.config.json'), JSON.stringify({ http: { port: 9000 }, timezone: 'Europe/Paris' }));
    const cfg = loadConfig({ cwd, env: { NETSVC_HTTP__PORT: '9100', NETSVC_DATA_DIR: '/srv/netsvc' } });
    expect(cfg.http.port).toBe(9100);
    expect(cfg.timezone).toBe('Europe/Paris');
    expect(cfg.dataDir).toBe('/srv/netsvc');
  });

  it('lowers the other threads to nice 10 by default; takes 0..19 from the environment and refuses anything else', () => {
    expect(loadConfig({ cwd: tempDir(), env: {} }).flowIngest.otherThreadsNice).toBe(10);
    expect(loadConfig({ cwd: tempDir(), env: { NETSVC_FLOW_INGEST__OTHER_THREADS_NICE: '0' } }).flowIngest.otherThreadsNice).toBe(
      0,
    );
    for (const bad of ['20', '-1', '2.5']) {
      expect(() => loadConfig({ cwd: tempDir(), env: { NETSVC_FLOW_INGEST__OTHER_THREADS_NICE: bad } })).toThrow(
        /flowIngest\.otherThreadsNice/,
      );
    }
  });

  it('reads flow sockets in batches by default; the environment can turn it off, and only with a boolean', () => {
    expect(loadConfig({ cwd: tempDir(), env: {} }).flowIngest.batchReceive).toBe(true);
    expect(loadConfig({ cwd: tempDir(), env: { NETSVC_FLOW_INGEST__BATCH_RECEIVE: 'false' } }).flowIngest.batchReceive).toBe(
      false,
    );
    expect(() => loadConfig({ cwd: tempDir(), env: { NETSVC_FLOW_INGEST__BATCH_RECEIVE: 'maybe' } })).toThrow(
      /flowIngest\.batchReceive/,
    );
  });

  it("leaves the config path and the test suites' switch out of the configuration", () => {
    const cfg = loadConfig({ cwd: tempDir(), env: { NETSVC_REQUIRE_ALL: '1' } });
    expect(cfg.http.port).toBe(8080);
  });

  it('takes the file named by NETSVC_CONFIG when no --config is given', () => {
    const cwd = tempDir();
    writeFileSync(join(cwd, 'elsewhere.json'), JSON.stringify({ http: { port: 9200 } }));
    expect(loadConfig({ cwd, env: { NETSVC_CONFIG: 'elsewhere.json' } }).http.port).toBe(9200);
  });

  it('lets --data-dir beat file and environment', () => {
    const cwd = tempDir();
    const cfg = loadConfig({ cwd, env: { NETSVC_DATA_DIR: '/a' }, dataDir: 'b' });
    expect(cfg.dataDir).toBe(join(cwd, 'b'));
  });

  it('gives each flow source template TTL and held-data bounds, with defaults, and refuses negative ones', () => {
    const cwd = tempDir();
    writeFileSync(
      join(cwd, 'netsvc.config.json'),
      JSON.stringify({
        flowSources: {
          a: { listen: '127.0.0.1:2055', templateTtlSec: 600, pendingMaxAgeSec: 5, pendingMaxSets: 10 },
          b: { listen: '127.0.0.1:2056' },
        },
        entities: { default: { flowSources: ['a', 'b'] } },
      }),
    );
    const cfg = loadConfig({ cwd, env: {} });
    expect(cfg.flowSources.a).toMatchObject({ templateTtlSec: 600, pendingMaxAgeSec: 5, pendingMaxSets: 10 });
    expect(cfg.flowSources.b).toMatchObject({ templateTtlSec: 3600, pendingMaxAgeSec: 60, pendingMaxSets: 1024 });
    writeFileSync(
      join(cwd, 'netsvc.config.json'),
      JSON.stringify({
        flowSources: { a: { listen: '127.0.0.1:2055', pendingMaxSets: -1 } },
        entities: { default: { flowSources: ['a'] } },
      }),
    );
    expect(() => loadConfig({ cwd, env: {} })).toThrow(/pendingMaxSets/);
  });

  it('gives each flow source plausible-value bounds, with defaults, and refuses a minFlowTime that is not an ISO 8601 date', () => {
    const cwd = tempDir();
    const write = (a: object) =>
      writeFileSync(
        join(cwd, 'netsvc.config.json'),
        JSON.stringify({ flowSources: { a: { listen: '127.0.0.1:2055', ...a } }, entities: { default: { flowSources: ['a'] } } }),
      );
    write({ minFlowTime: '2000-01-01T00:00:00+02:00', maxFutureSec: 600, maxSamplingInterval: 1000 });
    expect(loadConfig({ cwd, env: {} }).flowSources.a).toMatchObject({
      minFlowTime: '2000-01-01T00:00:00+02:00',
      maxFutureSec: 600,
      maxSamplingInterval: 1000,
    });
    write({});
    expect(loadConfig({ cwd, env: {} }).flowSources.a).toMatchObject({
      minFlowTime: '1990-01-01',
      maxFutureSec: 86_400,
      maxSamplingInterval: 2 ** 24,
    });
    write({ minFlowTime: 'March 1990' });
    expect(() => loadConfig({ cwd, env: {} })).toThrow(/minFlowTime/);
    write({ maxSamplingInterval: 2 ** 32 });
    expect(() => loadConfig({ cwd, env: {} })).toThrow(/maxSamplingInterval/);
  });

  it('names an unknown key', () => {
    const cwd = tempDir();
    const file = join(cwd, 'c.json');
    writeFileSync(file, JSON.stringify({ http: { prot: 1 } }));
    expect(() => loadConfig({ cwd, file, env: {} })).toThrow(/unknown key http\.prot/);
  });

  it('names a key with a bad value', () => {
    const cwd = tempDir();
    expect(() => loadConfig({ cwd, env: { NETSVC_HTTP__PORT: '"eighty"' } })).toThrow(/http\.port/);
    expect(() => loadConfig({ cwd, env: { NETSVC_TIMEZONE: 'Mars/Olympus' } })).toThrow(/timezone/);
  });

  it('rejects an entity that names an undeclared flow source', () => {
    const cwd = tempDir();
    const file = join(cwd, 'c.json');
    writeFileSync(file, JSON.stringify({ entities: { acme: { flowSources: ['nope'] } } }));
    let err: unknown;
    try {
      loadConfig({ cwd, file, env: {} });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).key).toBe('entities.acme.flowSources.0');
  });

  it('fails clearly on a missing explicit config file', () => {
    expect(() => loadConfig({ cwd: tempDir(), file: 'missing.json', env: {} })).toThrow(/cannot read config file .*ENOENT/);
  });
});
