/**
 * A private rsyslogd for tests: loopback only, its own config, UDP and TCP on
 * one free non-standard port, ommysql and/or ompgsql writing SystemEvents
 * with rsyslog's stock templates. Started and stopped by PID.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '../helpers/net.js';

const run = promisify(execFile);

/** Where rsyslog writes: a database URL of the kind the test helpers create. */
export interface RsyslogTarget {
  dialect: 'mysql' | 'postgres';
  url: string;
}

/** A running rsyslogd. */
export interface RsyslogInstance {
  pid: number;
  port: number;
  /** rsyslogd's own messages (errors of ommysql show up here). */
  internalLog(): string;
  stop(): Promise<void>;
}

/** True when rsyslogd and the ommysql/ompgsql modules can be loaded. */
export async function rsyslogAvailable(dir: string): Promise<boolean> {
  const conf = join(dir, 'probe.conf');
  // A config check only (-N1 binds and connects nothing); it needs inputs and actions to pass.
  writeFileSync(
    conf,
    [
      'module(load="imudp")',
      'module(load="imtcp")',
      'module(load="ommysql")',
      'module(load="ompgsql")',
      'input(type="imudp" address="127.0.0.1" port="9")',
      'input(type="imtcp" address="127.0.0.1" port="9")',
      '*.* action(type="ommysql" server="127.0.0.1" db="x" uid="x" pwd="")',
      '*.* action(type="ompgsql" server="127.0.0.1" db="x" user="x" pass="")',
      '',
    ].join('\n'),
  );
  try {
    await run('rsyslogd', ['-N1', '-f', conf]);
    return true;
  } catch {
    return false;
  }
}

function q(value: string): string {
  return JSON.stringify(value); // rsyslog's RainerScript strings use the same quoting
}

function action(target: RsyslogTarget): string {
  const u = new URL(target.url);
  const db = decodeURIComponent(u.pathname.slice(1));
  const user = decodeURIComponent(u.username) || (target.dialect === 'mysql' ? 'root' : 'postgres');
  const pass = decodeURIComponent(u.password);
  if (target.dialect === 'mysql') {
    return `action(type="ommysql" server=${q(u.hostname)} serverport=${q(u.port || '3306')} db=${q(db)} uid=${q(user)} pwd=${q(pass)})`;
  }
  return `action(type="ompgsql" server=${q(u.hostname)} serverport=${q(u.port || '5432')} db=${q(db)} user=${q(user)} pass=${q(pass)})`;
}

/** Starts rsyslogd writing every message received on 127.0.0.1:PORT (UDP and TCP) into each target. */
export async function startRsyslogd(targets: RsyslogTarget[]): Promise<RsyslogInstance> {
  const dir = mkdtempSync(join(tmpdir(), 'netsvc-rsyslogd-'));
  mkdirSync(join(dir, 'work'));
  const port = await freePort();
  const internal = join(dir, 'internal.log');
  const modules = new Set(targets.map((t) => (t.dialect === 'mysql' ? 'ommysql' : 'ompgsql')));
  const conf = join(dir, 'rsyslog.conf');
  writeFileSync(
    conf,
    [
      `global(workDirectory=${q(join(dir, 'work'))} processInternalMessages="on")`,
      'module(load="imudp")',
      'module(load="imtcp")',
      ...[...modules].map((m) => `module(load=${q(m)})`),
      '# No template: the stock StdDBFmt / StdPgSQLFmt, as operators run it.',
      'ruleset(name="todb") {',
      ...targets.map((t) => `  ${action(t)}`),
      '}',
      `input(type="imudp" address="127.0.0.1" port="${port}" ruleset="todb")`,
      `input(type="imtcp" address="127.0.0.1" port="${port}" ruleset="todb")`,
      `*.* action(type="omfile" file=${q(internal)})`,
      '',
    ].join('\n'),
  );
  await run('rsyslogd', ['-N1', '-f', conf]);
  const child: ChildProcess = spawn('rsyslogd', ['-n', '-f', conf, '-i', join(dir, 'rsyslogd.pid')], {
    env: { ...process.env, TZ: 'UTC' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const pid = child.pid;
  if (pid === undefined) throw new Error('rsyslogd did not start');
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));

  // Ready once imtcp accepts; imudp binds before it in config order.
  const until = Date.now() + 10_000;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const s = createServer();
      s.once('error', () => resolve(true)); // taken: rsyslogd has bound it
      s.listen(port, '127.0.0.1', () => s.close(() => resolve(false)));
    });
    if (ok) break;
    if (child.exitCode !== null || Date.now() > until) {
      throw new Error(`rsyslogd did not listen on ${port}: ${stderr}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }

  return {
    pid,
    port,
    internalLog: () => {
      try {
        return readFileSync(internal, 'utf8');
      } catch {
        return '';
      }
    },
    async stop() {
      if (child.exitCode === null) {
        process.kill(pid, 'SIGTERM');
        const timer = setTimeout(() => {
          if (child.exitCode === null) process.kill(pid, 'SIGKILL');
        }, 5000);
        await exited;
        clearTimeout(timer);
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
