/**
 * The console's logviewer in Debian's Chromium against a real `netsvc serve` whose syslog table is
 * rsyslog's SystemEvents on MariaDB, fed by the embedded receiver: a `logger` line reaches the live
 * tail, searches and the CSV export show what the API answers for the same query, the API's message
 * for a refused parameter, an expired token leads to sign-in and back to the search, a phone width
 * has no sideways scroll. Leaves docs/console-logviewer.png.
 */
import { execFile } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { readFileSync } from 'node:fs';
import mysql from 'mysql2/promise';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  chromiumInstalled,
  launchChromium,
  openPage,
  SCREENSHOT_DIR,
  signIn,
  startConsoleStack,
  type ConsoleStack,
} from '../../helpers/console-stack.js';

const run = promisify(execFile);
// RFC 5424 6.2.1, as an operator reads them on the badges.
const SEVERITY = ['Emergency', 'Alert', 'Critical', 'Error', 'Warning', 'Notice', 'Informational', 'Debug'];

interface Row {
  ID: number;
  ReceivedAt: string | null;
  DeviceReportedTime: string | null;
  FromHost: string;
  SysLogTag: string;
  processid: string;
  Message: string;
  Priority: number | null;
}

/** RFC 5424 datagrams with the host, program and severity given (facility local0). */
async function sendSyslog(port: number, lines: Array<{ host: string; app: string; sev: number; msg: string }>) {
  const sock = createSocket('udp4');
  for (const l of lines) {
    const d = Buffer.from(`<${16 * 8 + l.sev}>1 ${new Date().toISOString()} ${l.host} ${l.app} ${100 + l.sev} - - ${l.msg}`);
    await new Promise<void>((ok) => sock.send(d, port, '127.0.0.1', () => ok()));
  }
  await new Promise<void>((ok) => sock.close(() => ok()));
}

/** Every row of a search through the API (all pages), for comparison. */
async function allRows(stack: ConsoleStack, query: string): Promise<Row[]> {
  const out: Row[] = [];
  for (let page = 1; ; page++) {
    const body = await stack.api('logviewer', `/search?${query}${query ? '&' : ''}perPage=2000&page=${page}`);
    out.push(...(body.result as Row[]));
    if (body.isLastPage) return out;
  }
}

async function waitForRows(stack: ConsoleStack, query: string, n: number): Promise<void> {
  const until = Date.now() + 10_000;
  while ((await allRows(stack, query)).length < n) {
    if (Date.now() > until) throw new Error(`the receiver did not store ${n} rows for '${query}' in 10 s`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** What a user reads in each row of the results table. */
function shownRows(page: Page): Promise<string[][]> {
  return page
    .locator('table.log-table tbody tr[data-id]')
    .evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent ?? '')));
}

/** The same cells from the API's rows. */
const asShown = (rows: Row[]) =>
  rows.map((r) => [
    r.ReceivedAt ?? '—',
    r.FromHost,
    r.Priority === null ? 'Unknown' : SEVERITY[r.Priority]!,
    r.SysLogTag,
    r.Message,
  ]);

/** RFC 4180 records (quoted fields may hold commas, quotes and line breaks). */
function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let field = '';
  let record: string[] = [];
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      record.push(field);
      field = '';
    } else if (c === '\r' && text[i + 1] === '\n') {
      record.push(field);
      records.push(record);
      record = [];
      field = '';
      i++;
    } else field += c;
  }
  if (field !== '' || record.length > 0) throw new Error('CSV does not end with CRLF');
  return records;
}

/** The documented guard (docs/logviewer.md): a cell starting with = + - @ tab or CR gets a leading '. */
const guarded = (v: string | number | null) => {
  const s = v === null ? '' : String(v);
  return /^[=+\-@\t\r]/.test(s) ? `'${s}` : s;
};

const SEED = [
  { host: 'edge1', app: 'sshd', sev: 6, msg: 'Accepted publickey for ops from 192.0.2.7 port 51022 ssh2' },
  { host: 'edge1', app: 'sshd', sev: 4, msg: 'Failed password for invalid user admin from 198.51.100.23 port 40112 ssh2' },
  { host: 'edge1', app: 'kernel', sev: 3, msg: 'eth1: link down' },
  { host: 'edge1', app: 'kernel', sev: 3, msg: 'eth1: carrier lost, "renegotiating", speed=1000' },
  { host: 'edge2', app: 'hostapd', sev: 5, msg: 'wlan0: STA 02:00:5e:10:00:01 IEEE 802.11: associated' },
  { host: 'edge2', app: 'dnsmasq', sev: 7, msg: 'query[A] example.net from 10.0.0.12' },
  { host: 'core1', app: 'bgpd', sev: 2, msg: 'neighbor 203.0.113.1 Down BGP Notification send' },
  { host: 'core1', app: 'watchdog', sev: 1, msg: 'temperature 92C above limit' },
  { host: 'core1', app: 'kernel', sev: 0, msg: 'Kernel panic - not syncing: Fatal exception' },
  { host: 'edge2', app: 'excel', sev: 4, msg: '=HYPERLINK("http://198.51.100.9/x","click")' },
  // A spreadsheet set to `;` as separator would split this unquoted and read `=1+2` as a formula.
  { host: 'edge2', app: 'portal', sev: 6, msg: 'user a;=1+2 logged in' },
  { host: 'edge2', app: 'hostapd', sev: 6, msg: 'wlan0: STA 02:00:5e:10:00:02 WPA: pairwise key handshake completed (RSN)' },
];

describe.skipIf(!chromiumInstalled())('console: logviewer on MariaDB', () => {
  let stack: ConsoleStack;
  let browser: Browser;

  beforeAll(async () => {
    [stack, browser] = await Promise.all([startConsoleStack({ mariadb: true }), launchChromium()]);
    await sendSyslog(stack.syslogPort, SEED);
    await waitForRows(stack, '', SEED.length);
  });
  afterAll(async () => {
    await browser?.close();
    await stack?.close();
  });

  it('shows a logger line in the live tail within 5 s of sending it', async () => {
    const page = await openPage(browser);
    await signIn(page, stack, '/logviewer?live=1');
    await expect.poll(() => page.getByRole('status').filter({ hasText: 'Live:' }).count()).toBe(1);
    const probe = `tail-probe-${Date.now().toString(36)}`;
    const sent = Date.now();
    await run('logger', ['-n', '127.0.0.1', '-P', String(stack.syslogPort), '-t', 'probe', '-p', 'user.warning', probe]);
    const row = page.locator('table.log-table tbody tr', { hasText: probe });
    await row.waitFor({ timeout: 5000 });
    const elapsed = Date.now() - sent;
    expect(elapsed).toBeLessThan(5000);
    expect(await row.getAttribute('class')).toContain('fresh');
    expect(await row.locator('.sev').textContent()).toBe('Warning');
    // The tail is the API's newest records, the new one on top.
    const latest = (await stack.api('logviewer', '/latest?perPage=200')).result as Row[];
    expect(await shownRows(page)).toEqual(asShown(latest));
    await page.close();
  });

  it('pauses the live tail while the tab is hidden and catches up when it is shown', async () => {
    const page = await openPage(browser);
    await signIn(page, stack, '/logviewer?live=1');
    await expect.poll(() => page.getByRole('status').filter({ hasText: 'Live:' }).count()).toBe(1);
    const setHidden = (hidden: boolean) =>
      page.evaluate(
        `Object.defineProperty(document, 'hidden', { configurable: true, get: () => ${hidden} }); document.dispatchEvent(new Event('visibilitychange'))`,
      );
    await setHidden(true);
    await expect.poll(() => page.getByRole('status').filter({ hasText: 'Paused while this tab is hidden.' }).count()).toBe(1);
    await new Promise((r) => setTimeout(r, 300));
    let polls = 0;
    page.on('request', (r) => {
      if (r.url().includes('/svc/api/logviewer/latest')) polls++;
    });
    const probe = `hidden-probe-${Date.now().toString(36)}`;
    await run('logger', ['-n', '127.0.0.1', '-P', String(stack.syslogPort), '-t', 'probe', '-p', 'user.err', probe]);
    await new Promise((r) => setTimeout(r, 3000));
    expect(polls).toBe(0);
    const row = page.locator('table.log-table tbody tr', { hasText: probe });
    expect(await row.count()).toBe(0);
    await setHidden(false);
    await row.waitFor({ timeout: 5000 });
    await page.close();
  });

  it('narrows by host and severity to what the API returns, and the back button undoes it', async () => {
    const page = await openPage(browser);
    await signIn(page, stack, '/logviewer');
    await page.locator('table.log-table tbody tr[data-id]').first().waitFor();
    const all = await allRows(stack, '');
    expect(await shownRows(page)).toEqual(asShown(all.slice(0, 100)));

    await page.getByLabel('Host').fill('edge1');
    await page.getByLabel('Severity').selectOption({ label: '3 Error' });
    await page.getByLabel('Host').press('Enter');
    await expect.poll(() => new URL(page.url()).search).toBe('?host=edge1&priority=3');
    const expected = asShown(await allRows(stack, 'host=edge1&priority=3'));
    expect(expected.length).toBeGreaterThan(0);
    expect(expected.length).toBeLessThan(all.length);
    await expect.poll(() => shownRows(page)).toEqual(expected);

    await page.goBack();
    await expect.poll(() => new URL(page.url()).search).toBe('');
    // The form follows the URL on the render after popstate: the address bar can be back first.
    await expect.poll(() => page.getByLabel('Host').inputValue()).toBe('');
    await expect.poll(() => shownRows(page)).toEqual(asShown(all.slice(0, 100)));
    await page.close();
  });

  it('pages through a search as the API pages it', async () => {
    const page = await openPage(browser);
    await signIn(page, stack, '/logviewer?perPage=5');
    await page.locator('table.log-table tbody tr[data-id]').first().waitFor();
    const api = async (n: number) => asShown((await stack.api('logviewer', `/search?perPage=5&page=${n}`)).result as Row[]);
    expect(await shownRows(page)).toEqual(await api(1));
    await page.getByRole('button', { name: 'Next →' }).click();
    await expect.poll(() => new URL(page.url()).search).toBe('?perPage=5&page=2');
    await expect.poll(() => shownRows(page)).toEqual(await api(2));
    await page.goBack();
    await expect.poll(() => shownRows(page)).toEqual(await api(1));
    await page.close();
  });

  it('exports the result as CSV: the API rows, RFC 4180, formula cells guarded', async () => {
    const page = await openPage(browser);
    await signIn(page, stack, '/logviewer?host=edge2');
    await page.locator('table.log-table tbody tr[data-id]').first().waitFor();
    const [file] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export CSV' }).click()]);
    expect(file.suggestedFilename()).toMatch(/^syslog-\d{8}-\d{6}\.csv$/);
    const text = readFileSync((await file.path())!, 'utf8').replace(/^\ufeff/, '');
    const [header, ...records] = parseCsv(text);
    expect(header).toEqual([
      'ID',
      'ReceivedAt',
      'DeviceReportedTime',
      'FromHost',
      'Priority',
      'Severity',
      'SysLogTag',
      'processid',
      'Message',
    ]);
    const rows = await allRows(stack, 'host=edge2');
    expect(records).toEqual(
      rows.map((r) =>
        [
          r.ID,
          r.ReceivedAt,
          r.DeviceReportedTime,
          r.FromHost,
          r.Priority,
          r.Priority === null ? '' : SEVERITY[r.Priority]!,
          r.SysLogTag,
          r.processid,
          r.Message,
        ].map(guarded),
      ),
    );
    expect(records.some((r) => r[8]!.startsWith(`'=HYPERLINK`))).toBe(true);
    expect(text).toContain('"user a;=1+2 logged in"');
    await expect
      .poll(() =>
        page
          .getByRole('status')
          .filter({ hasText: `Exported ${rows.length} records.` })
          .count(),
      )
      .toBe(1);
    await page.close();
  });

  it('shows the API’s own message for a time range it refuses', async () => {
    const page = await openPage(browser);
    await signIn(page, stack, '/logviewer');
    await page.getByLabel('From', { exact: true }).fill('2026-01-02');
    await page.getByLabel('To', { exact: true }).fill('2026-01-01 12:00');
    await page.getByRole('button', { name: 'Search' }).click();
    const body = await stack.api('logviewer', `/search?startTime=2026-01-02&endTime=${encodeURIComponent('2026-01-01 12:00')}`);
    expect(body.status).toBe(false);
    await expect.poll(() => page.getByRole('alert').textContent()).toContain(body.errorMessage);
    await page.close();
  });

  it('has no sideways page scroll at 375 px, live or not', async () => {
    const page = await openPage(browser, { viewport: { width: 375, height: 800 } });
    await signIn(page, stack, '/logviewer');
    await page.locator('table.log-table tbody tr[data-id]').first().waitFor();
    const overflow = () => page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth');
    expect(await overflow()).toBe(0);
    await page.getByLabel('Live tail').check();
    await expect.poll(() => page.getByRole('status').filter({ hasText: 'Live:' }).count()).toBe(1);
    expect(await overflow()).toBe(0);
    await page.close();
  });

  it('takes the screenshot for docs/ at 1280×800', async () => {
    const page = await openPage(browser, { viewport: { width: 1280, height: 800 } });
    await signIn(page, stack, '/logviewer');
    await page.locator('table.log-table tbody tr[data-id]').first().waitFor();
    expect(new Set(await page.locator('table.log-table .sev').allTextContents()).size).toBeGreaterThanOrEqual(6);
    await page.screenshot({ path: join(SCREENSHOT_DIR, 'console-logviewer.png') });
    await page.close();
  });

  it('exports at most 10 000 rows, the newest, and says so', async () => {
    // 10 050 rows a day old for one host, written as rsyslog would (one INSERT, like a backlog).
    const conn = await mysql.createConnection({ uri: stack.database!.url });
    const dayAgo = new Date(Date.now() - 86_400_000).toISOString().slice(0, 19).replace('T', ' ');
    const values = Array.from({ length: 10_050 }, (_, i) => [`bulk line ${i}`, 16, 'bulk1', i % 8, dayAgo, dayAgo, 1, 'bulk:']);
    await conn.query(
      'INSERT INTO SystemEvents (Message, Facility, FromHost, Priority, DeviceReportedTime, ReceivedAt, InfoUnitID, SysLogTag) VALUES ?',
      [values],
    );
    await conn.end();
    const page = await openPage(browser);
    await signIn(page, stack, '/logviewer?host=bulk1');
    await page.locator('table.log-table tbody tr[data-id]').first().waitFor();
    const [file] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export CSV' }).click()]);
    const [, ...records] = parseCsv(readFileSync((await file.path())!, 'utf8').replace(/^\ufeff/, ''));
    const rows = await allRows(stack, 'host=bulk1');
    expect(rows.length).toBe(10_050);
    expect(records.map((r) => Number(r[0]))).toEqual(rows.slice(0, 10_000).map((r) => r.ID));
    await expect
      .poll(() => page.getByRole('status').filter({ hasText: 'Exported the newest 10,000 records only' }).count())
      .toBe(1);
    await page.close();
  });
});

describe.skipIf(!chromiumInstalled())('console: logviewer with a token that expires', () => {
  let stack: ConsoleStack;
  let browser: Browser;

  beforeAll(async () => {
    [stack, browser] = await Promise.all([startConsoleStack({ mariadb: true, tokenTtlSec: 2 }), launchChromium()]);
    await sendSyslog(stack.syslogPort, [{ host: 'expiry1', app: 'sshd', sev: 4, msg: 'expired-token probe' }]);
    await waitForRows(stack, 'host=expiry1', 1);
  });
  afterAll(async () => {
    await browser?.close();
    await stack?.close();
  });

  it('asks to sign in again, then completes the search with the form as typed', async () => {
    const page = await openPage(browser);
    await signIn(page, stack, '/logviewer');
    await page.getByRole('button', { name: 'Search' }).waitFor();
    await new Promise((r) => setTimeout(r, 2500));

    await page.getByLabel('Host').fill('expiry1');
    await page.getByLabel('Tag (program)').fill('sshd');
    await page.getByRole('button', { name: 'Search' }).click();
    const dialog = page.getByRole('dialog', { name: 'Sign in again' });
    await dialog.waitFor();
    await dialog.getByLabel('Secret').fill(stack.credentials.secret);
    await dialog.getByRole('button', { name: 'Sign in' }).click();
    await dialog.waitFor({ state: 'hidden' });

    const expected = asShown(await allRows(stack, 'host=expiry1&tag=sshd'));
    expect(expected.length).toBe(1);
    await expect.poll(() => shownRows(page)).toEqual(expected);
    expect(await page.getByLabel('Host').inputValue()).toBe('expiry1');
    expect(await page.getByLabel('Tag (program)').inputValue()).toBe('sshd');
    expect(new URL(page.url()).search).toBe('?host=expiry1&tag=sshd');
    await page.close();
  });
});
