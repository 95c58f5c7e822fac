/**
 * A private FreeRADIUS 3.2 for end-to-end tests, set up the way the
 * reference stack did on this machine kind (radius-syslog-stack/radius_up.sh):
 * a copy of /etc/freeradius/3.0 in a temp dir, one client 127.0.0.1, auth and
 * acct listeners on 127.0.0.1 at free ports (IPv6, proxy and inner-tunnel
 * listeners removed), the sql module on the test database, `sql` in
 * session {} for Simultaneous-Use, and `reject_delay = 0` so rejects are
 * answered at once. netsvc's own FreeRADIUS files from `radius/` are
 * installed as docs/hotspot.md tells operators to. The server is started in
 * the foreground (`-X`), and stopped by its PID.
 */
import { execFile, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import {
  accessSync,
  constants,
  cpSync,
  existsSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
  appendFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { Dialect } from '../../storage/sql/sql-client.js';
import { availableDialects, requireAll } from './databases.js';
import { freePort } from './net.js';

const run = promisify(execFile);
const ETC = process.env.FREERADIUS_ETC ?? '/etc/freeradius/3.0';
const REPO = resolve(fileURLToPath(new URL('../..', import.meta.url)));
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

/** Where the sql module finds the database. */
export type SqlTarget =
  | { dialect: 'mysql' | 'postgres'; host: string; port: number; user: string; password: string; database: string }
  | { dialect: 'sqlite'; path: string };

/** The SqlTarget of a test database URL (as test/helpers/databases.ts builds them). */
export function sqlTargetOf(dialect: Dialect, url: string): SqlTarget {
  if (dialect === 'sqlite') return { dialect, path: url.slice('sqlite:'.length) };
  const u = new URL(url);
  return {
    dialect,
    host: u.hostname,
    port: Number(u.port || (dialect === 'mysql' ? 3306 : 5432)),
    user: decodeURIComponent(u.username),
    password: decodeURIComponent(u.password),
    database: u.pathname.slice(1),
  };
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

/** Rewrites the stock default site: loopback listeners on our ports, sql in session {}, netsvc counters after -sql. */
function defaultSite(text: string, authPort: number, acctPort: number): string {
  const out: string[] = [];
  const lines = text.split('\n');
  let block: string[] | undefined;
  let section = '';
  let counters = false;
  for (const line of lines) {
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
    if (/^listen\s*{/.test(line)) {
      block = [line];
      continue;
    }
    const s = /^(\w[\w-]*)\s*{/.exec(line);
    if (s) section = s[1]!;
    if (section === 'session' && /^#\s*sql\s*$/.test(line)) {
      out.push('\tsql');
      continue;
    }
    out.push(line);
    if (section === 'authorize' && !counters && /^\t-sql\s*$/.test(line)) {
      out.push('\tnetsvc_counters');
      counters = true;
    }
  }
  return out.join('\n');
}

function sqlModule(target: SqlTarget): string {
  const fr = target.dialect === 'postgres' ? 'postgresql' : target.dialect;
  const conn =
    target.dialect === 'sqlite'
      ? { server: '', port: 0, login: '', password: '', db: 'radius' }
      : { server: target.host, port: target.port, login: target.user, password: target.password, db: target.database };
  return `sql {
	dialect = "${fr}"
	driver = "rlm_sql_\${dialect}"
	sqlite {
		filename = "${target.dialect === 'sqlite' ? target.path : ''}"
		busy_timeout = 200
	}
	mysql {
		warnings = auto
	}
	postgresql {
		send_application_name = yes
	}
	server = "${conn.server}"
	port = ${conn.port}
	login = "${conn.login}"
	password = "${conn.password}"
	radius_db = "${conn.db}"
	acct_table1 = "radacct"
	acct_table2 = "radacct"
	postauth_table = "radpostauth"
	authcheck_table = "radcheck"
	groupcheck_table = "radgroupcheck"
	authreply_table = "radreply"
	groupreply_table = "radgroupreply"
	usergroup_table = "radusergroup"
	read_groups = yes
	read_profiles = yes
	delete_stale_sessions = yes
	pool {
		start = 1
		min = 1
		max = 4
		spare = 2
		uses = 0
		retry_delay = 1
		lifetime = 0
		idle_timeout = 60
	}
	read_clients = no
	client_table = "nas"
	group_attribute = "SQL-Group"
	$INCLUDE \${modconfdir}/\${.:name}/main/\${dialect}/queries.conf
}
`;
}

/** Copies /etc/freeradius/3.0, configures it for `target` and starts it; resolves once it is ready. */
export async function startFreeradius(target: SqlTarget): Promise<FreeradiusInstance> {
  const dir = mkdtempSync(join(tmpdir(), 'netsvc-freeradius-'));
  const raddb = join(dir, 'raddb');
  try {
    accessSync(join(ETC, 'radiusd.conf'), constants.R_OK);
    cpSync(ETC, raddb, { recursive: true, verbatimSymlinks: true });
  } catch {
    // Debian makes /etc/freeradius 0750 freerad; a non-root CI user copies it with sudo.
    await run('sudo', ['-n', 'cp', '-a', ETC, raddb]);
    await run('sudo', ['-n', 'chown', '-R', `${process.getuid?.()}:${process.getgid?.()}`, raddb]);
  }
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
  rmSync(join(raddb, 'sites-enabled', 'default'), { force: true });
  rmSync(join(raddb, 'sites-enabled', 'inner-tunnel'), { force: true });
  writeFileSync(
    join(raddb, 'sites-enabled', 'default'),
    defaultSite(readFileSync(join(ETC, 'sites-available', 'default'), 'utf8'), authPort, acctPort),
  );
  // The inner-tunnel's own test listener is 127.0.0.1:18120; eap needs the virtual server, not the listener.
  writeFileSync(
    join(raddb, 'sites-enabled', 'inner-tunnel'),
    readFileSync(join(ETC, 'sites-available', 'inner-tunnel'), 'utf8').replace(
      /^listen\s*{[\s\S]*?^}/m,
      '# listener removed for tests',
    ),
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

  // netsvc's files, installed as docs/hotspot.md says.
  cpSync(join(REPO, 'radius', 'dictionary.netsvc'), join(raddb, 'dictionary.netsvc'));
  appendFileSync(join(raddb, 'dictionary'), '\n$INCLUDE dictionary.netsvc\n');
  cpSync(join(REPO, 'radius', 'mods-available', 'netsvc_sqlcounter'), join(raddb, 'mods-available', 'netsvc_sqlcounter'));
  symlinkSync('../mods-available/netsvc_sqlcounter', join(raddb, 'mods-enabled', 'netsvc_sqlcounter'));
  for (const d of ['mysql', 'postgresql', 'sqlite']) {
    cpSync(join(REPO, 'radius', 'mods-config', 'sql', 'counter', d), join(raddb, 'mods-config', 'sql', 'counter', d), {
      recursive: true,
    });
  }
  cpSync(join(REPO, 'radius', 'policy.d', 'netsvc'), join(raddb, 'policy.d', 'netsvc'));
  if (target.dialect === 'sqlite') {
    await run('sh', [
      join(REPO, 'radius', 'fix-sqlite-simul-verify.sh'),
      join(raddb, 'mods-config', 'sql', 'main', 'sqlite', 'queries.conf'),
    ]);
  }
  rmSync(join(raddb, 'mods-enabled', 'sql'), { force: true });
  writeFileSync(join(raddb, 'mods-enabled', 'sql'), sqlModule(target));

  const check = spawnSync('freeradius', ['-XC', '-d', raddb], { encoding: 'utf8' });
  if (check.status !== 0)
    throw new Error(`freeradius config check failed:\n${(check.stdout + check.stderr).split('\n').slice(-30).join('\n')}`);

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
