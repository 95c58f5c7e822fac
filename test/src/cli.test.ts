import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Command } from 'commander';
import { afterEach, describe, expect, it } from 'vitest';
import { buildProgram, runCli } from '../../src/cli.js';
import type { CliContext } from '../../src/commands/context.js';
import { processContext } from '../../src/commands/context.js';
import { LOOPBACK_LISTENERS } from '../helpers/service.js';

const CLI = resolve('dist/src/cli.js');

function capture(): CliContext & { stdout: string[]; stderr: string[] } {
  const base = processContext();
  const stdout: string[] = [];
  const stderr: string[] = [];
  return { ...base, out: (t) => stdout.push(t), err: (t) => stderr.push(t), stdout, stderr };
}

function tmp(): string {
  return mkdtempSync(join(tmpdir(), 'netsvc-cli-'));
}

const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill('SIGKILL');
});

describe('netsvc CLI', () => {
  it('prints --help for every command', async () => {
    const paths: string[][] = [];
    (function walk(cmd: Command, prefix: string[]) {
      for (const sub of cmd.commands) {
        const path = [...prefix, sub.name()];
        paths.push(path);
        walk(sub, path);
      }
    })(buildProgram(capture()), []);
    expect(paths.map((p) => p.join(' '))).toEqual(
      expect.arrayContaining(['serve', 'admin entity add', 'admin user add', 'admin credentials issue', 'db migrate']),
    );
    for (const path of paths) {
      const ctx = capture();
      const code = await runCli([...path, '--help'], ctx);
      expect(code, path.join(' ')).toBe(0);
      expect(ctx.stdout.join(''), path.join(' ')).toContain(`Usage: netsvc ${path.join(' ')}`);
    }
  });

  it('accepts --data-dir before or after the subcommand, on the same store', async () => {
    const dir = tmp();
    const a = capture();
    expect(await runCli(['--data-dir', dir, 'admin', 'entity', 'add', 'acme', '--areas', 'netflow,hotspot'], a)).toBe(0);
    // An entity the configuration does not know yet: what to add, and where.
    expect(a.stderr.join('')).toBe(
      `note: entity 'acme' has no flow sources or databases in the configuration yet: add "entities": { "acme": { "flowSources": [...], ` +
        '"radius": "mysql://…", "syslog": "mysql://…" } } to the config file (README, "Configuration"), then restart serve',
    );
    const b = capture();
    expect(await runCli(['admin', 'user', 'add', 'acme', 'alice', '--areas', 'netflow', '--data-dir', dir], b)).toBe(0);
    const c = capture();
    expect(await runCli(['admin', 'user', 'list', '--json', '-d', dir], c)).toBe(0);
    expect(JSON.parse(c.stdout.join(''))).toMatchObject([
      { entity: 'acme', user: 'alice', areas: { netflow: true, hotspot: false } },
    ]);
    const other = capture();
    expect(await runCli(['admin', 'user', 'list', '--json', '-d', tmp()], other)).toBe(0);
    expect(JSON.parse(other.stdout.join(''))).toEqual([]);
  });

  it('switches areas of entities and users on and off, and lists them as JSON', async () => {
    const dir = tmp();
    await runCli(['admin', 'entity', 'add', 'acme', '--areas', 'netflow', '-d', dir], capture());
    await runCli(['admin', 'user', 'add', 'acme', 'alice', '-d', dir], capture());
    expect(await runCli(['admin', 'entity', 'enable', 'acme', 'logviewer', 'hotspot', '-d', dir], capture())).toBe(0);
    expect(await runCli(['admin', 'entity', 'disable', 'acme', 'netflow', '-d', dir], capture())).toBe(0);
    expect(await runCli(['admin', 'user', 'enable', 'acme', 'alice', 'hotspot', '-d', dir], capture())).toBe(0);
    const entities = capture();
    await runCli(['admin', 'entity', 'list', '--json', '-d', dir], entities);
    expect(JSON.parse(entities.stdout.join(''))).toMatchObject([
      { entity: 'acme', areas: { netflow: false, logviewer: true, hotspot: true } },
    ]);
    const users = capture();
    await runCli(['admin', 'user', 'list', 'acme', '--json', '-d', dir], users);
    expect(JSON.parse(users.stdout.join(''))).toMatchObject([
      { user: 'alice', areas: { netflow: false, logviewer: false, hotspot: true } },
    ]);
    const missing = capture();
    expect(await runCli(['admin', 'user', 'enable', 'acme', 'bob', 'hotspot', '-d', dir], missing)).toBe(1);
    expect(missing.stderr.join('')).toBe("netsvc: user 'bob' of entity 'acme' does not exist");
  });

  it('accepts --config before or after the subcommand', async () => {
    const dir = tmp();
    const file = join(dir, 'other.json');
    writeFileSync(file, JSON.stringify({ dataDir: join(dir, 'from-config') }));
    await runCli(['--config', file, 'admin', 'entity', 'add', 'acme'], capture());
    const after = capture();
    await runCli(['admin', 'entity', 'list', '--json', '--config', file], after);
    expect(JSON.parse(after.stdout.join(''))).toMatchObject([{ entity: 'acme' }]);
  });

  it('issues credentials as JSON once, and names mistakes without a stack trace', async () => {
    const dir = tmp();
    await runCli(['admin', 'entity', 'add', 'acme', '-d', dir], capture());
    await runCli(['admin', 'user', 'add', 'acme', 'alice', '-d', dir], capture());
    const ctx = capture();
    expect(await runCli(['admin', 'credentials', 'issue', 'acme', 'alice', '--json', '-d', dir], ctx)).toBe(0);
    const out = JSON.parse(ctx.stdout.join(''));
    expect(out.api_id).toMatch(/^nsv_[0-9a-f]{20}$/);
    expect(out.secret.length).toBeGreaterThanOrEqual(40);
    const bad = capture();
    expect(await runCli(['admin', 'user', 'add', 'acme', 'bob', '--areas', 'netflow,radius', '-d', dir], bad)).toBe(2);
    expect(bad.stderr.join('')).toBe("netsvc: unknown area 'radius' (areas: netflow, logviewer, hotspot)\n".trimEnd());
  });

  it('stops at start-up with one line naming a bad config key', () => {
    const dir = tmp();
    const file = join(dir, 'netsvc.config.json');
    writeFileSync(file, JSON.stringify({ http: { port: 8080, hots: '0.0.0.0' } }));
    const res = spawnSync(process.execPath, [CLI, 'serve', '--config', file, '--data-dir', dir], {
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect(res.status).toBe(2);
    expect(res.stderr.trim()).toBe('netsvc: invalid configuration: unknown key http.hots');
    expect(res.stderr).not.toMatch(/\n\s+at /);
  });

  it('says in one line, exit 2, when the HTTP port is taken, and leaves nothing bound', async () => {
    const { createServer } = await import('node:net');
    const blocker = createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', () => r()));
    const port = (blocker.address() as AddressInfo).port;
    try {
      const dir = tmp();
      const res = spawnSync(process.execPath, [CLI, 'serve', '--port', String(port), '--data-dir', dir], {
        cwd: dir,
        env: { ...process.env, ...LOOPBACK_LISTENERS },
        encoding: 'utf8',
        timeout: 20_000,
      });
      expect(res.status).toBe(2);
      expect(res.stderr.trim()).toBe(
        `netsvc: cannot listen for HTTP on 127.0.0.1:${port}: address already in use (set http.port or --port)`,
      );
    } finally {
      blocker.close();
    }
  });

  it('exits 2 with usage for an unknown option', async () => {
    const ctx = capture();
    expect(await runCli(['serve', '--prot', '8081'], ctx)).toBe(2);
    expect(ctx.stderr.join('')).toMatch(/unknown option '--prot'/);
  });

  it('serves the OpenAPI document on its defaults and shuts down cleanly on SIGTERM', async () => {
    const dir = tmp();
    // No config file in cwd: the embedded defaults, except that every listener is moved to an
    // ephemeral loopback port, so the test never binds a public address or collides with another run.
    const env = { ...process.env, ...LOOPBACK_LISTENERS };
    const child = spawn(process.execPath, [CLI, 'serve', '--port', '0', '--data-dir', join(dir, 'data')], {
      cwd: dir,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    let out = '';
    let errText = '';
    child.stderr.on('data', (d: Buffer) => (errText += d.toString()));
    const url = await new Promise<string>((resolveUrl, reject) => {
      const timer = setTimeout(() => reject(new Error(`no listening line: ${out} ${errText}`)), 15_000);
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        const m = /"url":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(out);
        if (m) {
          clearTimeout(timer);
          resolveUrl(m[1]!);
        }
      });
    });
    const res = await fetch(`${url}/svc/api/openapi.json`);
    expect(res.status).toBe(200);
    expect(((await res.json()) as { openapi: string }).openapi).toBe('3.1.0');
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(out).toContain('netsvc stopped');
  });
  it('stops cleanly, once started, on a SIGTERM received while it is starting', async () => {
    const dir = tmp();
    const child = spawn(process.execPath, [CLI, 'serve', '--port', '0', '--data-dir', join(dir, 'data')], {
      cwd: dir,
      env: { ...process.env, ...LOOPBACK_LISTENERS },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    const exited = new Promise<[number | null, NodeJS.Signals | null]>((r) => child.on('exit', (c, s) => r([c, s])));
    let out = '';
    let signalled = false;
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      // The first line of the start ("flow decode path warmed up") comes long before "listening", and
      // after the handlers are in place.
      if (!signalled && out.includes('"msg":"')) {
        signalled = true;
        child.kill('SIGTERM');
      }
    });
    expect(await exited).toEqual([0, null]);
    // Taken while starting, acted on once started.
    expect(out.indexOf('"msg":"shutting down once started"')).toBeGreaterThan(-1);
    expect(out.indexOf('"msg":"shutting down once started"')).toBeLessThan(out.indexOf('"msg":"netsvc listening"'));
    expect(out).toContain('netsvc stopped');
    // What it started is closed: the data directory is free for the next start.
    const again = spawn(process.execPath, [CLI, 'serve', '--port', '0', '--data-dir', join(dir, 'data')], {
      cwd: dir,
      env: { ...process.env, ...LOOPBACK_LISTENERS },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(again);
    let second = '';
    await new Promise<void>((done) =>
      again.stdout.on('data', (d: Buffer) => {
        second += d.toString();
        if (second.includes('netsvc listening')) done();
      }),
    );
    const stoppedAgain = new Promise<number | null>((r) => again.on('exit', (c) => r(c)));
    again.kill('SIGTERM');
    expect(await stoppedAgain).toBe(0);
  });
});
