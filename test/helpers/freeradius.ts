/**
 * A private FreeRADIUS 3.2 for end-to-end tests: a copy of
 * /etc/freeradius/3.0 in a temp dir with netsvc's configuration installed by
 * `netsvc radius install`'s own code on the test database, and then only
 * what is test-specific (as the reference stack did on this machine kind,
 * radius-syslog-stack/radius_up.sh): one client 127.0.0.1, auth and acct
 * listeners on 127.0.0.1 at free ports (IPv6, proxy and inner-tunnel
 * listeners removed), and `reject_delay = 0` so rejects are answered at
 * once. The server is started in the foreground (`-X`), and stopped by its
 * PID.
 */
import { execFile, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { accessSync, appendFileSync, constants, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { installRadiusConfig, radiusSqlTarget } from '../../src/commands/radius-install.js';
import type { Dialect } from '../../storage/sql/sql-client.js';
import { availableDialects, requireAll } from './databases.js';
import { freePort } from './net.js';

const run = promisify(execFile);
const ETC = process.env.FREERADIUS_ETC ?? '/etc/freeradius/3.0';
const SECRET = 'testing123';

/** True when freeradius, radclient and radtest are installed. */
export function freeradiusInstalled(): boolean {
  return (
    ['freeradius', 'radclient', 'radtest'].every((bin) => spawnSync('sh', ['-c', `command -v ${bin}`]).status === 0) &&
    existsSync(ETC)
  );
}

/** The databases to run FreeRADIUS tests on: none when FreeRADIUS is not installed, an error then under NETSVC_REQUIRE_ALL=1. */
export async function freeradiusDialects(): Promise<Dialect[]> {
  const installed = freeradiusInstalled();
  if (!installed && requireAll) throw new Error('freeradius, radclient and radtest are required (NETSVC_REQUIRE_ALL=1)');
  return installed ? await availableDialects() : [];
}

/** A RADIUS answer as radclient printed it. */
export interface RadiusReply {
  code: string;
  attributes: Record<string, string[]>;
  raw: string;
}

/** A running private FreeRADIUS. */
export interface FreeradiusInstance {
  authPort: number;
  acctPort: number;
  raddb: string;
  pid: number;
  /** The debug log so far (for failure messages). */
  log(): string;
  /** `radtest USER PASS 127.0.0.1:PORT 0 SECRET`. */
  radtest(user: string, password: string): Promise<RadiusReply>;
  /** `radclient … auth|acct` with attribute lines on stdin. */
  radclient(kind: 'auth' | 'acct', attributes: Record<string, string | number>): Promise<RadiusReply>;
  stop(): Promise<void>;
}

/** Parses radclient/radtest output: the received code and its attribute lines. */
export function parseReply(output: string): RadiusReply {
  const lines = output.split('\n');
  const attributes: Record<string, string[]> = {};
  let code = 'none';
  let inReply = false;
  for (const line of lines) {
    const m = /^Received (\S+)/.exec(line);
    if (m) {
      code = m[1]!;
      inReply = true;
      continue;
    }
    if (/^(Sent|\(|radclient)/.test(line)) inReply = false;
    const a = /^\t(\S+) = (.*)$/.exec(line);
    if (inReply && a) (attributes[a[1]!] ??= []).push(a[2]!.replace(/^"(.*)"$/, '$1'));
  }
  return { code, attributes, raw: output };
}

function edit(path: string, fn: (text: string) => string): void {
  writeFileSync(path, fn(readFileSync(path, 'utf8')));
}

/** The stock default site with its IPv4 listeners on 127.0.0.1 at our ports, and its IPv6 ones removed. */
function loopbackListeners(text: string, authPort: number, acctPort: number): string {
  const out: string[] = [];
  let block: string[] | undefined;
  for (const line of text.split('\n')) {
    if (block) {
      block.push(line);
      if (/^}/.test(line)) {
        const isV6 = block.some((l) => /^\s*ipv6addr\s*=/.test(l));
        const type = block.some((l) => /^\s*type\s*=\s*acct/.test(l)) ? 'acct' : 'auth';
        if (!isV6) {
          out.push(
            ...block.map((l) =>
              /^\s*ipaddr\s*=/.test(l)
                ? '\tipaddr = 127.0.0.1'
                : /^\s*port\s*=/.test(l)
                  ? `\tport = ${type === 'acct' ? acctPort : authPort}`
                  : l,
            ),
          );
        }
        block = undefined;
      }
      continue;
    }
    if (/^listen\s*{/.test(line)) block = [line];
    else out.push(line);
  }
  return out.join('\n');
}

/** Copies /etc/freeradius/3.0 to `raddb` with owners and modes (`cp -a`), with sudo where Debian keeps it from a non-root user. */
export async function copyRaddb(raddb: string): Promise<void> {
  try {
    accessSync(join(ETC, 'radiusd.conf'), constants.R_OK);
    // As root, freerad stays the owner: a server that switches to freerad can read the copy.
    await run('cp', ['-a', ETC, raddb]);
  } catch {
    // Debian makes /etc/freeradius 0750 freerad; a non-root CI user copies it with sudo.
    await run('sudo', ['-n', 'cp', '-a', ETC, raddb]);
    await run('sudo', ['-n', 'chown', '-R', `${process.getuid?.()}:${process.getgid?.()}`, raddb]);
  }
}

/** Copies /etc/freeradius/3.0, installs netsvc's configuration on `databaseUrl`, makes it private and starts it; resolves once it is ready. */
export async function startFreeradius(databaseUrl: string): Promise<FreeradiusInstance> {
  const dir = mkdtempSync(join(tmpdir(), 'netsvc-freeradius-'));
  const raddb = join(dir, 'raddb');
  await copyRaddb(raddb);
  // As an operator would: netsvc's configuration installed by the command's own code.
  const installLog: string[] = [];
  installRadiusConfig({
    raddb,
    target: radiusSqlTarget(databaseUrl, process.cwd()),
    group: null,
    // Checked once below, when the test-specific changes are made too.
    freeradius: null,
    out: (line) => installLog.push(line),
    err: (line) => installLog.push(line),
  });

  // What is test-specific: the server runs as the test's user, from the temp dir, on loopback ports.
  const [authPort, acctPort] = [await freePort(), await freePort()];
  edit(join(raddb, 'radiusd.conf'), (t) =>
    t
      .replace(/^raddbdir = .*$/m, `raddbdir = ${raddb}`)
      .replace(/^logdir = .*$/m, `logdir = ${dir}`)
      .replace(/^run_dir = .*$/m, `run_dir = ${dir}`)
      .replace(/^(\s*)user = freerad/m, '$1#user = freerad')
      .replace(/^(\s*)group = freerad/m, '$1#group = freerad')
      .replace(/^(\s*)auth = no/m, '$1auth = yes')
      .replace(/^(\s*)reject_delay = \d+/m, '$1reject_delay = 0')
      .replace(/^(\s*)proxy_requests\s*=\s*yes/m, '$1proxy_requests = no'),
  );
  writeFileSync(
    join(raddb, 'clients.conf'),
    `client test_localhost {\n\tipaddr = 127.0.0.1\n\tproto = *\n\tsecret = ${SECRET}\n\trequire_message_authenticator = no\n\tnas_type = other\n}\n`,
  );
  // Edited where the sites-enabled/ symlinks point, as the install edits them.
  edit(join(raddb, 'sites-available', 'default'), (t) => loopbackListeners(t, authPort, acctPort));
  // The inner-tunnel's own test listener is 127.0.0.1:18120; eap needs the virtual server, not the listener.
  edit(join(raddb, 'sites-available', 'inner-tunnel'), (t) =>
    t.replace(/^listen\s*{[\s\S]*?^}/m, '# listener removed for tests'),
  );

  const eap = join(raddb, 'mods-available', 'eap');
  const key = /^\s*private_key_file = (\/\S+)/m.exec(readFileSync(eap, 'utf8'))?.[1];
  let keyReadable = true;
  try {
    if (key) accessSync(key, constants.R_OK);
  } catch {
    keyReadable = false;
  }
  if (!keyReadable) {
    await run('openssl', [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-days',
      '2',
      '-subj',
      '/CN=netsvc-test',
      '-keyout',
      join(raddb, 'certs', 'test.key'),
      '-out',
      join(raddb, 'certs', 'test.pem'),
    ]);
    edit(eap, (t) =>
      t
        .replace(/^(\s*)private_key_file = .*$/m, `$1private_key_file = ${join(raddb, 'certs', 'test.key')}`)
        .replace(/^(\s*)certificate_file = .*$/m, `$1certificate_file = ${join(raddb, 'certs', 'test.pem')}`),
    );
  }

  const check = spawnSync('freeradius', ['-XC', '-d', raddb], { encoding: 'utf8' });
  if (check.status !== 0)
    throw new Error(
      `freeradius config check failed:\n${installLog.join('\n')}\n${(check.stdout + check.stderr).split('\n').slice(-30).join('\n')}`,
    );

  const logPath = join(dir, 'radiusd.log');
  writeFileSync(logPath, '');
  const child: ChildProcess = spawn('freeradius', ['-X', '-d', raddb], { stdio: ['ignore', 'pipe', 'pipe'] });
  const append = (b: Buffer) => appendFileSync(logPath, b);
  child.stdout!.on('data', append);
  child.stderr!.on('data', append);
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  const log = () => readFileSync(logPath, 'utf8');

  const deadline = Date.now() + 15_000;
  while (!log().includes('Ready to process requests')) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`freeradius did not become ready:\n${log().split('\n').slice(-30).join('\n')}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }

  const instance: FreeradiusInstance = {
    authPort,
    acctPort,
    raddb,
    pid: child.pid!,
    log,
    async radtest(user, password) {
      const { stdout } = await run('radtest', ['-d', raddb, user, password, `127.0.0.1:${authPort}`, '0', SECRET], {
        timeout: 10_000,
      }).catch((err: { stdout?: string }) => ({ stdout: err.stdout ?? '' }));
      return parseReply(stdout);
    },
    async radclient(kind, attributes) {
      const port = kind === 'auth' ? authPort : acctPort;
      const input = Object.entries(attributes)
        .map(([k, v]) => `${k} = ${typeof v === 'number' || /^[A-Za-z0-9._:-]+$/.test(v) ? v : JSON.stringify(v)}`)
        .join('\n');
      const out = await new Promise<string>((done) => {
        const p = spawn('radclient', ['-x', '-r', '1', '-t', '5', '-d', raddb, `127.0.0.1:${port}`, kind, SECRET]);
        let text = '';
        p.stdout.on('data', (b: Buffer) => (text += b.toString()));
        p.stderr.on('data', (b: Buffer) => (text += b.toString()));
        p.once('close', () => done(text));
        p.stdin.end(`${input}\n`);
      });
      return parseReply(out);
    },
    async stop() {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
        await exited;
        clearTimeout(timer);
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return instance;
}
