/**
 * bin/netsvc, the `netsvc` of package.json's `bin`: it defers NODE_EXTRA_CA_CERTS (Node 20 parses
 * that file at every start) for every command but `serve`, and src/extra-ca.ts runs a command
 * again with it when the command may connect over TLS. What a user sees must be what
 * `node dist/src/cli.js` with the variable set shows. A preloaded probe (through NODE_OPTIONS,
 * which a re-run inherits) records each Node process the command starts and the variables it
 * started with.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { LOOPBACK_LISTENERS } from '../helpers/service.js';

const BIN = resolve('bin/netsvc');
const CLI = resolve('dist/src/cli.js');
const DEFERRED = '_NETSVC_EXTRA_CA_CERTS';

/** One Node process of a command, as the probe saw it start. */
interface Start {
  pid: number;
  ppid: number;
  /** NODE_EXTRA_CA_CERTS when the process started (what Node loaded), and when it ended. */
  extraCa: string | null;
  extraCaAtExit?: string | null;
  deferred: string | null;
}

let work: string;
let caFile: string;
let keyFile: string;
const probe = (): string => join(work, 'probe.mjs');

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'netsvc-bin-'));
  caFile = join(work, 'site-ca.pem');
  keyFile = join(work, 'site-ca.key');
  // A self-signed certificate for 127.0.0.1: trusted only through NODE_EXTRA_CA_CERTS.
  const made = spawnSync(
    'openssl',
    [
      ...['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '2'],
      ...['-subj', '/CN=netsvc test', '-addext', 'subjectAltName=IP:127.0.0.1', '-keyout', keyFile, '-out', caFile],
    ],
    { encoding: 'utf8' },
  );
  expect(made.status, `openssl (Debian: apt-get install openssl): ${made.stderr}`).toBe(0);
  writeFileSync(
    probe(),
    "import { appendFileSync } from 'node:fs';\n" +
      'const line = (o) => appendFileSync(process.env.CA_PROBE_FILE, JSON.stringify(o) + "\\n");\n' +
      `const deferred = process.env.${DEFERRED} ?? null;\n` +
      'line({ pid: process.pid, ppid: process.ppid, extraCa: process.env.NODE_EXTRA_CA_CERTS ?? null, deferred });\n' +
      "process.on('exit', () => line({ pid: process.pid, extraCaAtExit: process.env.NODE_EXTRA_CA_CERTS ?? null }));\n",
  );
});

/** The environment of a run: the user's, with NODE_EXTRA_CA_CERTS set to the test's certificate, and the probe. */
function userEnv(probeFile: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    XDG_CACHE_HOME: join(work, 'cache'),
    NODE_EXTRA_CA_CERTS: caFile,
    NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import ${probe()}`.trim(),
    CA_PROBE_FILE: probeFile,
    ...extra,
  };
  for (const k of Object.keys(env)) if (k.startsWith('NETSVC_') && !(k in extra)) delete env[k];
  delete env[DEFERRED];
  for (const [k, v] of Object.entries(extra)) if (v === undefined) delete env[k];
  return env;
}

function starts(probeFile: string): Start[] {
  const lines = readFileSync(probeFile, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Partial<Start> & { pid: number });
  const byPid = new Map<number, Start>();
  for (const l of lines) {
    if ('ppid' in l) byPid.set(l.pid, l as Start);
    else if (byPid.has(l.pid)) byPid.get(l.pid)!.extraCaAtExit = l.extraCaAtExit ?? null;
  }
  return [...byPid.values()];
}

let probeCount = 0;
function probeFile(): string {
  const f = join(work, `starts-${++probeCount}`);
  writeFileSync(f, '');
  return f;
}

const children: ChildProcess[] = [];
const pids: number[] = [];
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  // The processes a command ran again, if still there (and still ours: a PID is reused once free).
  for (const pid of pids.splice(0)) {
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(CLI)) process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
});

/** Runs a command to its end without blocking this process (the test's https server must answer it). */
function run(
  file: string,
  args: string[],
  env: NodeJS.ProcessEnv,
): Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }> {
  return new Promise((done, fail) => {
    const child = spawn(file, args, { env, cwd: work, stdio: ['ignore', 'pipe', 'pipe'] });
    children.push(child);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', fail);
    child.on('close', (code, signal) => done({ code, signal, stdout, stderr }));
  });
}

/** `netsvc args` through bin/netsvc, and as `node dist/src/cli.js` ran it before (the variable loaded at the start). */
async function viaBinAndDirect(args: string[], extra: NodeJS.ProcessEnv = {}) {
  const binProbe = probeFile();
  const bin = await run(BIN, args, userEnv(binProbe, extra));
  const directProbe = probeFile();
  const direct = await run(process.execPath, [CLI, ...args], userEnv(directProbe, extra));
  return { bin, binStarts: starts(binProbe), direct, directStarts: starts(directProbe) };
}

function config(name: string, body: unknown): string {
  const file = join(work, name);
  writeFileSync(file, JSON.stringify(body));
  return file;
}

describe('bin/netsvc and NODE_EXTRA_CA_CERTS', () => {
  it('starts a command that makes no TLS connection without loading the file, and gives it the variable back', async () => {
    for (const args of [['--help'], ['status', '--help'], ['admin', 'entity', 'list', '--json', '-d', join(work, 'd1')]]) {
      const r = await viaBinAndDirect(args);
      expect(r.directStarts).toMatchObject([{ extraCa: caFile }]);
      expect(r.bin).toEqual(r.direct);
      expect(r.binStarts).toHaveLength(1);
      expect(r.binStarts[0]).toMatchObject({ extraCa: null, deferred: caFile });
      if (args[0] !== '--help' && args[1] !== '--help') expect(r.binStarts[0]!.extraCaAtExit).toBe(caFile);
    }
  });

  it('runs a command whose configuration reaches a database over TLS again, in a process that loads the file', async () => {
    const dataDir = join(work, 'd2');
    const tlsConfigs = [
      config('pg-tls.json', { entities: { site: { radius: 'postgres://netsvc@127.0.0.1:1/radius?sslmode=verify-full' } } }),
      config('mysql-tls.json', {
        entities: { a: { radius: 'sqlite:a.sqlite' }, b: { syslog: 'mysql://netsvc@127.0.0.1:1/syslog?ssl={}' } },
      }),
    ];
    for (const file of tlsConfigs) {
      // One that succeeds and one that fails: output and exit code pass through.
      for (const args of [
        ['admin', 'entity', 'list', '--json', '-c', file, '-d', dataDir],
        ['admin', 'user', 'add', 'nosuch', 'bob', '-c', file, '-d', dataDir],
      ]) {
        const r = await viaBinAndDirect(args);
        expect(r.bin).toEqual(r.direct);
        expect(r.binStarts).toHaveLength(2);
        const [first, second] = r.binStarts;
        expect(first).toMatchObject({ extraCa: null, deferred: caFile });
        expect(second).toMatchObject({ ppid: first!.pid, extraCa: caFile, deferred: null });
      }
    }
    expect(
      (await viaBinAndDirect(['admin', 'user', 'add', 'nosuch', 'bob', '-c', tlsConfigs[0]!, '-d', dataDir])).direct.code,
    ).toBe(1);
    // PGSSLMODE asks pg for TLS where the URL says nothing.
    const plainPg = config('pg-plain.json', { entities: { site: { radius: 'postgres://netsvc@127.0.0.1:1/radius' } } });
    const args = ['admin', 'entity', 'list', '-c', plainPg, '-d', dataDir];
    expect((await viaBinAndDirect(args)).binStarts).toHaveLength(1);
    expect((await viaBinAndDirect(args, { PGSSLMODE: 'require' })).binStarts).toHaveLength(2);
  });

  it('leaves the variable to serve, wherever the global options stand', async () => {
    for (const args of [
      ['serve', '--help'],
      ['-d', join(work, 'd3'), 'serve', '--help'],
      ['--config', config('empty.json', {}), 'serve', '--help'],
      ['--data-dir=x', 'serve', '--help'],
    ]) {
      const r = await viaBinAndDirect(args);
      expect(r.bin).toEqual(r.direct);
      expect(r.binStarts).toMatchObject([{ extraCa: caFile, deferred: null }]);
    }
  });

  it('serve runs in one process that loaded the file, and stops on SIGTERM', async () => {
    const file = probeFile();
    const child = spawn(BIN, ['serve', '--port', '0', '--data-dir', join(work, 'd4')], {
      cwd: work,
      env: userEnv(file, LOOPBACK_LISTENERS),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    await untilListening(child);
    expect(starts(file)).toMatchObject([{ pid: child.pid, extraCa: caFile, deferred: null }]);
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  });

  it('a command run again passes signals on, and ends as the new process ends', async () => {
    // As bin/netsvc hands serve over if it took it for another command: src/extra-ca.ts runs it again.
    for (const signal of ['SIGTERM', 'SIGKILL'] as const) {
      const file = probeFile();
      const env: NodeJS.ProcessEnv = { ...userEnv(file, LOOPBACK_LISTENERS), [DEFERRED]: caFile };
      delete env.NODE_EXTRA_CA_CERTS;
      const child = spawn(process.execPath, [CLI, 'serve', '--port', '0', '--data-dir', join(work, `d5-${signal}`)], {
        cwd: work,
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      children.push(child);
      const exited = new Promise<[number | null, NodeJS.Signals | null]>((r) => child.on('exit', (c, s) => r([c, s])));
      const out = await untilListening(child);
      const [first, second] = starts(file);
      expect(first).toMatchObject({ pid: child.pid, extraCa: null, deferred: caFile });
      expect(second).toMatchObject({ ppid: child.pid, extraCa: caFile, deferred: null });
      pids.push(second!.pid);
      if (signal === 'SIGTERM') {
        // To the process the user started: the service stops as it would alone, exit 0.
        child.kill('SIGTERM');
        expect(await exited).toEqual([0, null]);
        expect(out()).toContain('netsvc stopped');
      } else {
        // The new process killed: the one the user started ends by the same signal.
        process.kill(second!.pid, 'SIGKILL');
        expect(await exited).toEqual([null, 'SIGKILL']);
      }
    }
  });

  it('a command run again gets Ctrl-C at its terminal once, as it would alone', async () => {
    // The terminal sends SIGINT to both processes: passed on as well, serve would take it for a
    // second Ctrl-C and leave without writing what it holds. script(1) gives the command a terminal.
    const file = probeFile();
    const env: NodeJS.ProcessEnv = { ...userEnv(file, LOOPBACK_LISTENERS), [DEFERRED]: caFile };
    delete env.NODE_EXTRA_CA_CERTS;
    // `exec`: script(1) runs the line with $SHELL -c (/bin/sh without SHELL). Debian's dash forks
    // for it and, being in the terminal's foreground group, dies of the Ctrl-C itself (script then
    // exits 130), where a user's interactive shell would have left the group to the command.
    const line = ['exec', process.execPath, CLI, 'serve', '--port', '0', '--data-dir', join(work, 'd6')].join(' ');
    const child = spawn('script', ['-qec', line, '/dev/null'], { cwd: work, env, stdio: ['pipe', 'pipe', 'pipe'] });
    children.push(child);
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    const out = await untilListening(child);
    const [first, second] = starts(file);
    expect(first).toMatchObject({ extraCa: null, deferred: caFile });
    expect(second).toMatchObject({ ppid: first!.pid, extraCa: caFile });
    pids.push(first!.pid, second!.pid);
    child.stdin!.write('\x03');
    expect(await exited).toBe(0);
    expect(out().match(/"msg":"[^"]*(shutting down|second signal)[^"]*"/g)).toEqual(['"msg":"shutting down"']);
    expect(out()).toContain('netsvc stopped');
  });

  describe('status --url https://…', () => {
    let server: Server;
    let url: string;
    beforeAll(async () => {
      server = createServer({ key: readFileSync(keyFile), cert: readFileSync(caFile) }, (req, res) => {
        // One counter of netsvc's: status refuses a page without any.
        res
          .writeHead(req.url === '/metrics' ? 200 : 404, { 'content-type': 'text/plain' })
          .end(req.url === '/metrics' ? 'netsvc_auth_verifications_total 0\n' : '');
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
      url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/metrics`;
    });
    afterAll(() => new Promise<void>((r) => server.close(() => r())));

    it('trusts the certificate NODE_EXTRA_CA_CERTS names, as node dist/src/cli.js does', async () => {
      const r = await viaBinAndDirect(['status', '--url', url, '--json']);
      expect(r.direct.code, r.direct.stderr).toBe(0);
      expect(JSON.parse(r.direct.stdout)).toMatchObject({ url });
      expect(r.bin).toEqual(r.direct);
      expect(r.binStarts.map((s) => s.extraCa)).toEqual([null, caFile]);
      // Without the variable the certificate is not trusted: what the variable gives is what passed.
      const without = await viaBinAndDirect(['status', '--url', url, '--json'], { NODE_EXTRA_CA_CERTS: undefined });
      expect(without.direct.code).not.toBe(0);
      expect(without.bin).toEqual(without.direct);
    });
  });
});

/** Waits for serve's "listening" log line; answers a function giving everything printed so far. */
async function untilListening(child: ChildProcess): Promise<() => string> {
  let out = '';
  let err = '';
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  await new Promise<void>((done, fail) => {
    const timer = setTimeout(() => fail(new Error(`serve did not start: ${out} ${err}`)), 20_000);
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (/"url":"http:\/\/127\.0\.0\.1:\d+"/.test(out)) {
        clearTimeout(timer);
        done();
      }
    });
  });
  return () => out;
}
