/**
 * What the console's browser tests run against: a real `netsvc serve` (spawned from dist/, stopped
 * by its PID) on loopback, with one entity `default` and one API user holding all three areas; on
 * MariaDB when asked (FreeRADIUS's and rsyslog's tables created by `netsvc db migrate
 * --create-peer-tables`, the embedded syslog receiver feeding rsyslog's SystemEvents), else on the
 * embedded SQLite default. And Debian's Chromium driven by playwright-core.
 */
import { createSocket } from 'node:dgram';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { spawnServe, type ServeProcess } from '../../bench/spawned-serve.js';
import { createTestDatabase, requireAll, type TestDatabase } from './databases.js';
import { runCliCaptured } from './cli.js';
import { freeUdpPort } from './flow-fixtures.js';
import { freePort } from './net.js';

export const CHROMIUM = '/usr/bin/chromium';

/** True when Debian's Chromium is installed; under NETSVC_REQUIRE_ALL its absence is a failure. */
export function chromiumInstalled(): boolean {
  const there = existsSync(CHROMIUM);
  if (!there && requireAll) throw new Error(`${CHROMIUM} is missing (apt-get install chromium) and NETSVC_REQUIRE_ALL=1`);
  return there;
}

/** A headless Chromium as the brief prescribes: no sandbox (root), no GPU, nothing fetched in the background. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
}

/** Longest a page's step (a click, a fill, a wait for an element) waits, inside a test's 30 s, so that a step that never completes fails naming its locator. */
const STEP_TIMEOUT_MS = 15_000;

/** A new page (in its own context) whose steps give up after STEP_TIMEOUT_MS. */
export async function openPage(browser: Browser, options?: Parameters<Browser['newPage']>[0]): Promise<Page> {
  const page = await browser.newPage(options);
  page.setDefaultTimeout(STEP_TIMEOUT_MS);
  return page;
}

export interface ConsoleStack {
  url: string;
  credentials: { api_id: string; secret: string };
  /** UDP port of the `netflow` flow source. */
  flowPort: number;
  /** UDP/TCP port of the embedded syslog receiver. */
  syslogPort: number;
  /** The MariaDB database of the entity's RADIUS and syslog tables (when `mariadb`). */
  database?: TestDatabase;
  dir: string;
  /** The configuration file serve and the CLI steps read (`netsvc … --config <it>`). */
  config: string;
  /** Sends export datagrams to the flow source over loopback. */
  sendFlows(payloads: readonly Buffer[]): Promise<void>;
  /** A token for `area`, for the API answers a test compares the page with. */
  token(area: 'netflow' | 'logviewer' | 'hotspot'): Promise<string>;
  /** GET /svc/api/<area><path> with a fresh token; the parsed body. */
  api(area: 'netflow' | 'logviewer' | 'hotspot', path: string): Promise<any>;
  close(): Promise<void>;
}

export interface ConsoleStackOptions {
  /** FreeRADIUS and rsyslog tables on a fresh MariaDB database instead of SQLite. */
  mariadb?: boolean;
  tokenTtlSec?: number;
  /** Milliseconds between capture flushes (flows reach queries after one). */
  flushIntervalMs?: number;
  /** Runs `netsvc <args…> --config <the stack's config>` before serve starts (e.g. an `import` of history). */
  beforeServe?: Array<string[]>;
}

/** Starts the stack; `close()` stops serve by its PID and drops the database. */
export async function startConsoleStack(opts: ConsoleStackOptions = {}): Promise<ConsoleStack> {
  const dir = mkdtempSync(join(tmpdir(), 'netsvc-console-'));
  const [flowPort, syslogPort, dnsPort] = [await freeUdpPort(), await freePort(), await freeUdpPort()];
  const database = opts.mariadb ? await createTestDatabase('mysql', 'netsvc_console') : undefined;
  let serve: ServeProcess | undefined;
  try {
    const dataDir = join(dir, 'data');
    mkdirSync(dataDir);
    // Where spawnServe writes it too (the same settings): the CLI steps below read this file.
    const config = join(dataDir, 'netsvc.config.json');
    const settings = {
      dataDir,
      timezone: 'UTC',
      http: { host: '127.0.0.1', port: 0 },
      log: { level: 'info' },
      admin: { database: `sqlite:${join(dataDir, 'admin.sqlite')}` },
      auth: { tokenTtlSec: opts.tokenTtlSec ?? 3600 },
      flowSources: { netflow: { listen: `127.0.0.1:${flowPort}` }, lentor: { listen: '127.0.0.1:0' } },
      capture: { flushIntervalMs: opts.flushIntervalMs ?? 300 },
      analytics: { warmUp: false },
      syslogReceiver: { host: '127.0.0.1', port: syslogPort, flushIntervalMs: 100, feedExternal: true },
      // Nothing answers there: reverse lookups stay on loopback and fail fast.
      dns: { servers: [`127.0.0.1:${dnsPort}`], timeoutMs: 200 },
      entities: {
        default: {
          flowSources: ['netflow', 'lentor'],
          // Else the embedded default's SQLite stores.
          ...(database
            ? { radius: database.url, syslog: database.url }
            : { radius: 'sqlite:radius.sqlite', syslog: 'sqlite:syslog.sqlite' }),
        },
      },
    };
    writeFileSync(config, JSON.stringify(settings));
    const cli = async (args: string[]) => {
      const r = await runCliCaptured([...args, '--config', config]);
      if (r.code !== 0) throw new Error(`netsvc ${args.join(' ')} failed: ${r.err || r.out}`);
      return r.out;
    };
    await cli(['admin', 'entity', 'add', 'default', '--areas', 'netflow,logviewer,hotspot']);
    await cli(['admin', 'user', 'add', 'default', 'operator', '--areas', 'netflow,logviewer,hotspot']);
    const credentials = JSON.parse(await cli(['admin', 'credentials', 'issue', 'default', 'operator', '--json'])) as {
      api_id: string;
      secret: string;
    };
    await cli(['db', 'migrate', ...(database ? ['--create-peer-tables'] : [])]);
    for (const args of opts.beforeServe ?? []) await cli(args);

    serve = await spawnServe(dataDir, settings, () => true, 5000);
    const url = serve.url;
    const started = serve;

    const token = async (area: string): Promise<string> => {
      const res = await fetch(`${url}/svc/api/${area}/auth`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(credentials),
      });
      return ((await res.json()) as { result: { access_token: string } }).result.access_token;
    };
    return {
      url,
      credentials,
      flowPort,
      syslogPort,
      database,
      dir,
      config,
      async sendFlows(payloads) {
        const sock = createSocket('udp4');
        for (const p of payloads) await new Promise<void>((r) => sock.send(p, flowPort, '127.0.0.1', () => r()));
        await new Promise<void>((r) => sock.close(() => r()));
      },
      token,
      async api(area, path) {
        const res = await fetch(`${url}/svc/api/${area}${path}`, { headers: { authorization: `Bearer ${await token(area)}` } });
        return res.json();
      },
      async close() {
        await started.stop();
        await database?.drop();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    await serve?.stop();
    await database?.drop();
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}

/** Signs in through the console's own form. */
export async function signIn(page: Page, stack: Pick<ConsoleStack, 'url' | 'credentials'>, path = '/'): Promise<void> {
  await page.goto(`${stack.url}${path}`);
  await page.getByLabel('API id').fill(stack.credentials.api_id);
  await page.getByLabel('Secret').fill(stack.credentials.secret);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('navigation', { name: 'Areas' }).waitFor();
}

/**
 * Where the tests' screenshots go: docs/ (`docs/console-<area>.png`, shown in the README) when
 * UPDATE_SCREENSHOTS=1 (not NETSVC_: the config reads those), else a temp directory, so that a test run leaves the tree as it was.
 */
export const SCREENSHOT_DIR =
  process.env.UPDATE_SCREENSHOTS === '1' ? resolve('docs') : mkdtempSync(join(tmpdir(), 'netsvc-console-shots-'));
