import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
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

  it('fills every section from the defaults its schema writes once, whether the section is absent or partly given', () => {
    const absent = loadConfig({ cwd: tempDir(), env: {} });
    expect(absent.http).toEqual({ host: '127.0.0.1', port: 8080, bodyLimit: 1024 * 1024 });
    expect(absent.log).toEqual({ level: 'info' });
    expect(absent.auth).toEqual({
      tokenTtlSec: 3600,
      maxFailures: 10,
      failureWindowSec: 300,
      verifyConcurrency: 1,
      verifyQueue: 4,
      verifyQueuePerAddress: 2,
      knownSecrets: 1000,
    });
    expect(absent.admin).toEqual({ database: 'sqlite:admin.sqlite' });
    expect(absent.capture).toMatchObject({
      flushIntervalMs: 5000,
      blockRows: 65_536,
      codec: 'zstd',
      level: 3,
      fsyncOnFlush: false,
      retention: { checkIntervalSec: 300 },
    });
    expect(absent.flowIngest).toEqual({ otherThreadsNice: 10, batchReceive: true });
    expect(absent.dns).toEqual({ servers: [], timeoutMs: 1500, positiveTtlSec: 3600, negativeTtlSec: 300, maxEntries: 100_000 });
    expect(absent.syslogReceiver).toMatchObject({ enabled: true, feedExternal: false, host: '0.0.0.0', port: 5514 });
    expect(absent.syslogReceiver).toMatchObject({
      maxConnectionsPerAddress: 32,
      tcpIdleTimeoutSec: 300,
      receiveBuffer: 8 * 1024 * 1024,
    });
    expect(absent.database).toEqual({ connectTimeoutMs: 2000, statementTimeoutMs: 4000, operationTimeoutMs: 5000 });
    expect(absent.hotspot).toEqual({ disabledGroup: 'daloRADIUS-Disabled-Users', maxPerPage: 2000 });
    // One key of a section given: the others keep their defaults.
    const partial = loadConfig({
      cwd: tempDir(),
      env: { NETSVC_AUTH__MAX_FAILURES: '3', NETSVC_CAPTURE__RETENTION__CHECK_INTERVAL_SEC: '60', NETSVC_DNS__TIMEOUT_MS: '500' },
    });
    expect(partial.auth).toEqual({ ...absent.auth, maxFailures: 3 });
    expect(partial.capture).toEqual({ ...absent.capture, retention: { ...absent.capture.retention, checkIntervalSec: 60 } });
    expect(partial.dns).toEqual({ ...absent.dns, timeoutMs: 500 });
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

  it('merges a partial flow source from the environment with its defaults, and keeps the other default sources', () => {
    const cfg = loadConfig({ cwd: tempDir(), env: { NETSVC_FLOW_SOURCES__NETFLOW__TEMPLATE_TTL_SEC: '0' } });
    expect(cfg.flowSources.netflow).toMatchObject({
      listen: '0.0.0.0:2055',
      templateTtlSec: 0,
      pendingMaxSets: 1024,
      receiveBuffer: 8 * 1024 * 1024,
    });
    expect(cfg.flowSources.lentor).toMatchObject({ listen: '0.0.0.0:2056', templateTtlSec: 3600 });
    expect(cfg.entities.default?.flowSources).toEqual(['netflow', 'lentor']);
    // The same from a command-line override.
    const set = loadConfig({ cwd: tempDir(), env: {}, overrides: { 'flowSources.lentor.receiveBuffer': 1024 } });
    expect(set.flowSources.lentor).toMatchObject({ listen: '0.0.0.0:2056', receiveBuffer: 1024 });
    expect(set.flowSources.netflow).toMatchObject({ listen: '0.0.0.0:2055', receiveBuffer: 8 * 1024 * 1024 });
  });

  it('takes a config file that declares only netflow with one changed key, merged with its defaults', () => {
    const cwd = tempDir();
    writeFileSync(join(cwd, 'netsvc.config.json'), JSON.stringify({ flowSources: { netflow: { templateTtlSec: 0 } } }));
    const cfg = loadConfig({ cwd, env: {} });
    expect(cfg.flowSources.netflow).toMatchObject({ listen: '0.0.0.0:2055', templateTtlSec: 0, pendingMaxAgeSec: 60 });
    // No entities of its own: the default entity, and the default sources it names, stay.
    expect(cfg.flowSources.lentor).toMatchObject({ listen: '0.0.0.0:2056', templateTtlSec: 3600 });
    expect(Object.keys(cfg.flowSources)).toEqual(['netflow', 'lentor']);
    expect(cfg.entities.default).toMatchObject({
      flowSources: ['netflow', 'lentor'],
      radius: 'sqlite:radius.sqlite',
      syslog: 'sqlite:syslog.sqlite',
    });
  });

  it('with entities of its own, takes the declared flow sources as all there are, a partial default one merged', () => {
    const cwd = tempDir();
    writeFileSync(
      join(cwd, 'netsvc.config.json'),
      JSON.stringify({
        flowSources: { netflow: { templateTtlSec: 0 } },
        entities: { acme: { flowSources: ['netflow'] } },
      }),
    );
    const cfg = loadConfig({ cwd, env: {} });
    expect(Object.keys(cfg.flowSources)).toEqual(['netflow']);
    expect(cfg.flowSources.netflow).toMatchObject({ listen: '0.0.0.0:2055', templateTtlSec: 0 });
    // The same from the environment alone.
    const fromEnv = loadConfig({
      cwd: tempDir(),
      env: { NETSVC_FLOW_SOURCES__NETFLOW__TEMPLATE_TTL_SEC: '0', NETSVC_ENTITIES: '{"acme":{"flowSources":["netflow"]}}' },
    });
    expect(Object.keys(fromEnv.flowSources)).toEqual(['netflow']);
    expect(fromEnv.flowSources.netflow).toMatchObject({ listen: '0.0.0.0:2055', templateTtlSec: 0 });
  });

  it("lets the environment change one key of a flow source the file declares, keeping the file's others", () => {
    const cwd = tempDir();
    writeFileSync(
      join(cwd, 'netsvc.config.json'),
      JSON.stringify({ flowSources: { netflow: { listen: '127.0.0.1:2999', pendingMaxSets: 10 } } }),
    );
    const cfg = loadConfig({ cwd, env: { NETSVC_FLOW_SOURCES__NETFLOW__TEMPLATE_TTL_SEC: '0' } });
    expect(cfg.flowSources.netflow).toMatchObject({ listen: '127.0.0.1:2999', pendingMaxSets: 10, templateTtlSec: 0 });
    expect(Object.keys(cfg.flowSources)).toEqual(['netflow', 'lentor']);
  });

  it('without entities, takes flow sources of its own as the set the default entity serves, binding no default one beside them', () => {
    const cwd = tempDir();
    writeFileSync(join(cwd, 'netsvc.config.json'), JSON.stringify({ flowSources: { edge: { listen: '127.0.0.1:2055' } } }));
    const cfg = loadConfig({ cwd, env: {} });
    // A default netflow source on 0.0.0.0:2055 beside it would take the same port.
    expect(Object.keys(cfg.flowSources)).toEqual(['edge']);
    expect(cfg.entities.default).toEqual({
      flowSources: ['edge'],
      radius: 'sqlite:radius.sqlite',
      syslog: 'sqlite:syslog.sqlite',
    });
  });

  it('still needs a listen address for a flow source not named like a default one, and checks a partial one', () => {
    const cwd = tempDir();
    expect(() => loadConfig({ cwd, env: { NETSVC_FLOW_SOURCES__EDGE__TEMPLATE_TTL_SEC: '0' } })).toThrow(
      /flowSources\.edge\.listen/,
    );
    expect(() => loadConfig({ cwd, env: { NETSVC_FLOW_SOURCES__NETFLOW__TEMPLATE_TTL_SEC: '-1' } })).toThrow(
      /flowSources\.netflow\.templateTtlSec/,
    );
    expect(() => loadConfig({ cwd, env: { NETSVC_FLOW_SOURCES__NETFLOW__TEMPLATE_TTL: '0' } })).toThrow(
      /unknown key flowSources\.netflow\.templateTtl\b/,
    );
  });
});

describe('serve with a partial flow source', () => {
  const children: ChildProcess[] = [];
  afterEach(() => {
    for (const c of children.splice(0)) if (c.exitCode === null && c.pid !== undefined) process.kill(c.pid, 'SIGKILL');
  });

  it('starts with NETSVC_FLOW_SOURCES__NETFLOW__TEMPLATE_TTL_SEC=0', async () => {
    const dir = tempDir();
    // Every listener on an ephemeral loopback port (the default flow sources listen on 0.0.0.0):
    // the file gives each default source its listen and nothing else; the environment changes one key of netflow.
    writeFileSync(
      join(dir, 'netsvc.config.json'),
      JSON.stringify({
        http: { host: '127.0.0.1', port: 0 },
        flowSources: { netflow: { listen: '127.0.0.1:0' }, lentor: { listen: '127.0.0.1:0' } },
        syslogReceiver: { host: '127.0.0.1', port: 0 },
      }),
    );
    const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, NETSVC_FLOW_SOURCES__NETFLOW__TEMPLATE_TTL_SEC: '0' };
    const child = spawn(process.execPath, [resolve('dist/src/cli.js'), 'serve', '--data-dir', join(dir, 'data')], {
      cwd: dir,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    let out = '';
    let errText = '';
    child.stderr.on('data', (d: Buffer) => (errText += d.toString()));
    const exitedEarly = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    const url = await new Promise<string>((resolveUrl, reject) => {
      const timer = setTimeout(() => reject(new Error(`no listening line: ${out} ${errText}`)), 30_000);
      void exitedEarly.then((code) => reject(new Error(`serve exited ${code}: ${errText}`)));
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        const m = /"url":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(out);
        if (m) {
          clearTimeout(timer);
          resolveUrl(m[1]!);
        }
      });
    });
    expect((await fetch(`${url}/svc/api/openapi.json`)).status).toBe(200);
    expect(out).toMatch(/"sources":\["netflow"\],"address":"127\.0\.0\.1"/);
    expect(out).toMatch(/"sources":\["lentor"\],"address":"127\.0\.0\.1"/);
    process.kill(child.pid!, 'SIGTERM');
    expect(await exitedEarly).toBe(0);
    expect(out).toContain('netsvc stopped');
  }, 60_000);
});
