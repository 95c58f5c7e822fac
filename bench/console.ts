/**
 * `npm run bench -- console [--rounds R] [--flows N]`: the web console's budgets (issue 21), measured
 * in Debian's Chromium against a spawned `netsvc serve` on loopback.
 *
 * Data: the storage suite's hour (softflowd seed expanded, N flows, default 200 000) under 24 hour
 * names with their KPI cache entries, as `flow-cache` builds them, so the netflow page's 24-hour
 * window is answered from the cache as an operator's would be.
 *
 * Per round (a fresh browser page, signed in):
 * - JavaScript: bytes of every script the browser fetched after visiting the three areas (encoded,
 *   i.e. gzip as served, from Resource Timing); budget ≤ 250 KB in all;
 * - first render of the netflow page: navigation start → the page's `netflow:first-render` mark (the
 *   chart drawn with data); budget ≤ 1 s;
 * - 24-hour chart redraw: the page's `netflow:chart-redraw` measures (new data → drawn) after the
 *   metric and the dimension change; budget ≤ 200 ms; and the whole change (click → drawn, the API
 *   call included) beside it.
 */
import { spawnSync } from 'node:child_process';
import { linkSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { sealedName, sourceDir } from '../storage/capture/file-names.js';
import { listCaptureFiles } from '../storage/capture/reader.js';
import { aggregateFiles, hourEntry } from '../storage/kpi/kpi-builder.js';
import { SqliteKpiCache } from '../storage/kpi/sqlite-kpi-cache.js';
import { loadSeedFlows, SEED_FIXTURE } from './capture-flows.js';
import { fmt } from './lib.js';
import { ROOT, spawnServe } from './spawned-serve.js';
import { HOUR, writeHour } from './storage.js';

const HOUR_MS = 3_600_000;
const BUDGET = { jsKb: 250, firstRenderMs: 1000, redrawMs: 200 };
const CLI = join(ROOT, 'dist/src/cli.js');

/** The netflow page over the 24 cached hours (the page keeps its window in the URL). */
export function netflowPath(from: number, to: number): string {
  const fmtTime = (ms: number) => `${new Date(ms).toISOString().slice(0, 16)}Z`;
  return `/netflow?${new URLSearchParams({ from: fmtTime(from), to: fmtTime(to) }).toString()}`;
}

async function prepareData(flows: number): Promise<string> {
  const dataDir = mkdtempSync(join(tmpdir(), 'netsvc-bench-console-'));
  await writeHour(loadSeedFlows(SEED_FIXTURE), flows, dataDir);
  const file = listCaptureFiles(dataDir, 'netflow', 'UTC').find((f) => f.hourStart === HOUR && f.kind === 'sealed');
  if (!file) throw new Error('the bench hour was not sealed');
  const cache = new SqliteKpiCache(join(dataDir, 'kpi.sqlite'));
  const entry = hourEntry(file, await aggregateFiles([file]));
  cache.put(entry);
  const dir = sourceDir(dataDir, 'netflow');
  for (let k = 1; k < 24; k++) {
    const h = HOUR - k * HOUR_MS;
    const name = sealedName(h, 'UTC');
    linkSync(file.path, join(dir, name));
    cache.put({ ...entry, hourStart: h, file: name });
  }
  cache.close();
  return dataDir;
}

interface Round {
  jsKb: number;
  scripts: number;
  firstRenderMs: number;
  redrawMs: number[];
  changeMs: number[];
}

async function marks(page: Page, name: string): Promise<number[]> {
  return page.evaluate(
    (n) => performance.getEntriesByName(n).map((e) => (e.entryType === 'measure' ? e.duration : e.startTime)),
    name,
  );
}

async function waitMarks(page: Page, name: string, count: number): Promise<number[]> {
  const until = Date.now() + 30_000;
  for (;;) {
    const xs = await marks(page, name);
    if (xs.length >= count) return xs;
    if (Date.now() > until) {
      const shot = join(tmpdir(), 'netsvc-bench-console-failed.png');
      await page.screenshot({ path: shot });
      throw new Error(`${name}: ${xs.length} of ${count} entries after 30 s (the page: ${shot})`);
    }
    await page.waitForTimeout(20);
  }
}

async function oneRound(browser: Browser, url: string, cred: { api_id: string; secret: string }): Promise<Round> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  // Sign in once (the token stays in the tab's storage), then load the page cold: a new document.
  await page.goto(`${url}/`);
  await page.getByLabel('API id').fill(cred.api_id);
  await page.getByLabel('Secret').fill(cred.secret);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('navigation', { name: 'Areas' }).waitFor();

  await page.goto(`${url}${netflowPath(HOUR - 23 * HOUR_MS, HOUR + HOUR_MS - 60_000)}`);
  const [firstRenderMs] = await waitMarks(page, 'netflow:first-render', 1);

  const redrawMs: number[] = [];
  const changeMs: number[] = [];
  const changes: Array<{ label: string; value: string }> = [
    { label: 'Metric', value: 'packets' },
    { label: 'Metric', value: 'bytes' },
    { label: 'Series by', value: 'dst_port' },
    { label: 'Series by', value: 'proto' },
  ];
  for (const change of changes) {
    const before = (await marks(page, 'netflow:chart-redraw')).length;
    const t0 = await page.evaluate(() => performance.now());
    await page.getByLabel(change.label, { exact: true }).first().selectOption(change.value);
    const after = await waitMarks(page, 'netflow:chart-redraw', before + 1);
    const drawn = await marks(page, 'netflow:chart-drawn');
    redrawMs.push(after[after.length - 1]!);
    changeMs.push(drawn[drawn.length - 1]! - t0);
  }

  // Every area once, so that every chunk the console has is counted.
  for (const area of ['Logs', 'Hotspot', 'Traffic']) {
    await page.getByRole('navigation', { name: 'Areas' }).getByRole('link', { name: area }).click();
    await page.waitForLoadState('networkidle');
  }
  const scripts = await page.evaluate(() =>
    (performance.getEntriesByType('resource') as unknown as Array<{ name: string; encodedBodySize: number }>)
      .filter((r) => r.name.endsWith('.js'))
      .map((r) => ({ name: r.name, bytes: r.encodedBodySize })),
  );
  await context.close();
  return {
    jsKb: scripts.reduce((s, x) => s + x.bytes, 0) / 1000,
    scripts: scripts.length,
    firstRenderMs: firstRenderMs!,
    redrawMs,
    changeMs,
  };
}

/** Runs the suite. */
export async function run(args: string[]): Promise<void> {
  const get = (name: string): string | undefined => {
    const i = args.indexOf(name);
    return i >= 0 ? args[i + 1] : undefined;
  };
  const rounds = Number(get('--rounds') ?? 3);
  const flows = Number(get('--flows') ?? 200_000);
  const dataDir = await prepareData(flows);
  const config = join(dataDir, 'netsvc.config.json');
  const base = {
    dataDir,
    timezone: 'UTC',
    http: { host: '127.0.0.1', port: 0 },
    flowSources: { netflow: { listen: '127.0.0.1:0' }, lentor: { listen: '127.0.0.1:0' } },
    syslogReceiver: { host: '127.0.0.1', port: 0 },
  };
  writeFileSync(config, JSON.stringify(base));
  const cli = (a: string[]) => {
    const r = spawnSync(process.execPath, [CLI, ...a, '--config', config], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`netsvc ${a.join(' ')}: ${r.stderr}`);
    return r.stdout;
  };
  cli(['admin', 'entity', 'add', 'default', '--areas', 'netflow,logviewer,hotspot']);
  cli(['admin', 'user', 'add', 'default', 'bench', '--areas', 'netflow,logviewer,hotspot']);
  const cred = JSON.parse(cli(['admin', 'credentials', 'issue', 'default', 'bench', '--json'])) as {
    api_id: string;
    secret: string;
  };
  const serve = await spawnServe(dataDir, base, () => true);
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
  try {
    console.log(`\n# web console budgets (issue 21): ${flows.toLocaleString('en-US')} flows per hour, 24 cached hours`);
    console.log(
      `# ${new Date().toISOString()}, load average ${(await import('node:os'))
        .loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}\n`,
    );
    console.log(
      '| round | JS gzip (KB) | scripts | first render (ms) | chart redraw, 4 changes (ms) | change → drawn, API included (ms) |',
    );
    console.log('|---|---|---|---|---|---|');
    const all: Round[] = [];
    for (let r = 1; r <= rounds; r++) {
      const x = await oneRound(browser, serve.url, cred);
      all.push(x);
      console.log(
        `| ${r} | ${fmt(x.jsKb, 1)} | ${x.scripts} | ${fmt(x.firstRenderMs, 0)} | ${x.redrawMs.map((m) => fmt(m, 1)).join(' / ')} | ${x.changeMs.map((m) => fmt(m, 0)).join(' / ')} |`,
      );
    }
    const worst = {
      jsKb: Math.max(...all.map((x) => x.jsKb)),
      firstRenderMs: Math.max(...all.map((x) => x.firstRenderMs)),
      redrawMs: Math.max(...all.flatMap((x) => x.redrawMs)),
    };
    console.log(
      `\nworst over the rounds: JS ${fmt(worst.jsKb, 1)} KB (≤ ${BUDGET.jsKb}: ${worst.jsKb <= BUDGET.jsKb ? 'met' : 'NOT met'}), ` +
        `first render ${fmt(worst.firstRenderMs, 0)} ms (≤ ${BUDGET.firstRenderMs}: ${worst.firstRenderMs <= BUDGET.firstRenderMs ? 'met' : 'NOT met'}), ` +
        `redraw ${fmt(worst.redrawMs, 1)} ms (≤ ${BUDGET.redrawMs}: ${worst.redrawMs <= BUDGET.redrawMs ? 'met' : 'NOT met'})`,
    );
  } finally {
    await browser.close();
    await serve.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
