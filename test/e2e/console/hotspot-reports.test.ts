/**
 * The console's hotspot reports in Debian's Chromium against a real `netsvc serve` on MariaDB, with
 * rows made the way they are made in production: a user created through the API, Access-Requests
 * and accounting sent to a real FreeRADIUS on the same database (radtest, radclient), purchases
 * recorded with `netsvc quota add`. Each page's rows are compared with the API's own answer.
 */
import { execFile } from 'node:child_process';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import mysql from 'mysql2/promise';
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
import { freeradiusDialects, startFreeradius, type FreeradiusInstance } from '../../helpers/freeradius.js';

const run = promisify(execFile);
const ready = chromiumInstalled() && (await freeradiusDialects()).includes('mysql');

type Row = Record<string, string>;

/** The rows of the report table as a user reads them: column label → the cell's visible text. */
function tableRows(page: Page): Promise<Row[]> {
  return page
    .locator('section.report')
    .evaluate((section) =>
      [...section.querySelectorAll('tbody tr')]
        .filter((tr) => !tr.querySelector('td.empty'))
        .map((tr) =>
          Object.fromEntries(
            [...tr.querySelectorAll('td')].map((td) => [td.dataset.label ?? '', (td.innerText as string).trim()]),
          ),
        ),
    );
}

/** Waits until the table holds `n` rows (the page loads after navigation), then returns them. */
async function rowsWhen(page: Page, n: number): Promise<Row[]> {
  await expect.poll(async () => (await tableRows(page)).length, { timeout: 10_000 }).toBe(n);
  return tableRows(page);
}

/** No page-wide sideways scroll. */
function scrollsSideways(page: Page): Promise<boolean> {
  return page.evaluate<boolean>('document.documentElement.scrollWidth > document.documentElement.clientWidth');
}

describe.skipIf(!ready)('console: hotspot reports (MariaDB, real FreeRADIUS)', () => {
  let stack: ConsoleStack;
  let browser: Browser;
  let radius: FreeradiusInstance;
  let page: Page;
  const hotspot = (path: string) => stack.api('hotspot', path);

  const send = async (method: string, path: string, body: unknown) => {
    const res = await fetch(`${stack.url}/svc/api/hotspot${path}`, {
      method,
      headers: { authorization: `Bearer ${await stack.token('hotspot')}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(res.status, await res.clone().text()).toBe(200);
    return res.json();
  };
  const quotaAdd = (args: string[]) =>
    run(process.execPath, [resolve('dist/src/cli.js'), 'quota', 'add', ...args, '--config', stack.config]);

  const gina = {
    'User-Name': 'gina',
    'Acct-Session-Id': 'gina-0001',
    'Framed-IP-Address': '10.10.0.23',
    'Calling-Station-Id': 'aa:bb:cc:dd:ee:30',
    'Called-Station-Id': '00-11-22-33-44-55:Guest',
    'NAS-IP-Address': '127.0.0.1',
    'NAS-Port': 7,
  };

  beforeAll(async () => {
    [stack, browser] = await Promise.all([startConsoleStack({ mariadb: true }), launchChromium()]);
    radius = await startFreeradius(stack.database!.url);
    // The NAS's short name is what the reports call the hotspot (docs/hotspot.md 5).
    const db = await mysql.createConnection({ uri: stack.database!.url });
    await db.query("INSERT INTO nas (nasname, shortname, type, secret) VALUES ('127.0.0.1', 'lobby', 'other', 'testing123')");
    await db.end();
    await send('POST', '/users', { username: 'gina', usertype: 'user', password: 'gina-pw', firstname: 'Gina', lastname: 'Ray' });
    await send('POST', '/users', { username: 'hugo', usertype: 'user', password: 'hugo-pw' });
    page = await openPage(browser, { viewport: { width: 1280, height: 800 } });
    await signIn(page, stack, '/hotspot/attempts');
  });

  afterAll(async () => {
    await page?.close();
    await browser?.close();
    await radius?.stop();
    await stack?.close();
  });

  it('login attempts: accepts and rejects from FreeRADIUS, as the API lists them, coloured and in words', async () => {
    expect((await radius.radtest('gina', 'gina-pw')).code).toBe('Access-Accept');
    expect((await radius.radtest('gina', 'wrong')).code).toBe('Access-Reject');
    expect((await radius.radtest('hugo', 'hugo-pw')).code).toBe('Access-Accept');

    // Searched from the form with the keyboard: the field has its label and a visible focus; Enter searches.
    const username = page.getByLabel('Username');
    await username.focus();
    expect(await username.evaluate((el) => el.ownerDocument.defaultView!.getComputedStyle(el).outlineStyle)).toBe('solid');
    await username.fill('gina');
    await username.press('Enter');
    await expect.poll(() => new URL(page.url()).searchParams.get('username')).toBe('gina');
    expect(await username.evaluate((el) => el === el.ownerDocument.activeElement)).toBe(true);

    const api = await hotspot('/login-attempts?username=gina');
    expect(api.result).toHaveLength(2);
    const rows = await rowsWhen(page, 2);
    expect(rows.map((r) => [r.Time, r.Username, r.Reply!.replace(/^[✓✗]\s*/, '')])).toEqual(
      api.result.map((a: { authdate: string; username: string; reply: string }) => [a.authdate, a.username, a.reply]),
    );
    expect(rows.map((r) => r.Reply)).toEqual(['✗ Access-Reject', '✓ Access-Accept']);
    const [rejectColour, acceptColour] = await page
      .locator('section.report .reply')
      .evaluateAll((els) => els.map((el) => el.ownerDocument.defaultView!.getComputedStyle(el).color));
    expect(rejectColour).not.toBe(acceptColour);

    // The reply filter, and paging through the API's pages.
    await page.getByLabel('Reply').selectOption('Access-Reject');
    await page.getByRole('button', { name: 'Search' }).click();
    expect(await rowsWhen(page, 1)).toMatchObject([{ Username: 'gina', Reply: '✗ Access-Reject' }]);
    await page.getByRole('button', { name: 'Clear' }).click();
    await page.getByLabel('Rows per page').selectOption('25');
    const all = await hotspot('/login-attempts?perPage=25');
    expect((await rowsWhen(page, all.result.length)).map((r) => r.Username)).toEqual(
      all.result.map((a: { username: string }) => a.username),
    );

    // Paging: the API's pages, Next and Previous following isLastPage.
    const ids = async (q: string) =>
      (await hotspot(`/login-attempts?${q}`)).result.map((a: { authdate: string; username: string }) => [a.authdate, a.username]);
    const shown = async (n: number) => (await rowsWhen(page, n)).map((r) => [r.Time, r.Username]);
    await page.goto(`${stack.url}/hotspot/attempts?perPage=2`);
    expect(await shown(2)).toEqual(await ids('perPage=2'));
    await page.getByRole('button', { name: 'Next' }).click();
    await expect.poll(() => new URL(page.url()).searchParams.get('page')).toBe('2');
    expect(await shown(1)).toEqual(await ids('perPage=2&page=2'));
    expect(await page.getByRole('button', { name: 'Next' }).isDisabled()).toBe(true);
    await page.getByRole('button', { name: 'Previous' }).click();
    expect(await shown(2)).toEqual(await ids('perPage=2'));
  });

  it('a refused parameter shows the API message, not a blank page', async () => {
    await page.getByLabel('From').fill('2026-13-45');
    await page.getByRole('button', { name: 'Search' }).click();
    const api = await hotspot('/login-attempts?startTime=2026-13-45&perPage=2');
    expect(api.status).toBe(false);
    await expect.poll(() => page.getByRole('alert').textContent()).toContain(api.errorMessage);
    expect(await page.locator('section.report table').count()).toBe(0);

    // A bookmarked bad value is refused the same way on the quota report.
    await page.goto(`${stack.url}/hotspot/quota?transaction_time=2026-02-30`);
    const quota = await hotspot('/quota-purchase-report?transaction_time=2026-02-30');
    await expect.poll(() => page.getByRole('alert').textContent()).toContain(quota.errorMessage);
  });

  it('online sessions: an accounting Start shows, with the API traffic and time online', async () => {
    await radius.radclient('acct', { 'Acct-Status-Type': 'Start', ...gina });
    await radius.radclient('acct', {
      'Acct-Status-Type': 'Interim-Update',
      ...gina,
      'Acct-Session-Time': 60,
      'Acct-Input-Octets': 1048576,
      'Acct-Output-Octets': 524288,
    });
    await radius.radclient('acct', {
      'Acct-Status-Type': 'Start',
      'User-Name': 'hugo',
      'Acct-Session-Id': 'hugo-0001',
      'Framed-IP-Address': '10.10.0.24',
      'Calling-Station-Id': '02:00:00:00:00:24',
      'NAS-IP-Address': '127.0.0.1',
      'NAS-Port': 8,
    });
    await page.getByRole('link', { name: 'Sessions' }).click();
    await expect.poll(() => new URL(page.url()).pathname).toBe('/hotspot/sessions');
    expect(await page.getByRole('link', { name: 'Online now' }).getAttribute('aria-current')).toBe('page');

    const api = await hotspot('/online-sessions');
    expect(api.result).toHaveLength(2);
    const rows = await rowsWhen(page, 2);
    expect(rows.map((r) => [r.User!.split('\n')[0], r.Started, r.Traffic, r.Client, r.Hotspot])).toEqual(
      api.result.map((s: Record<string, string>) => [
        s.username,
        s.starttime,
        s.traffic,
        `${s.ipaddress}\n${s.macaddress}`,
        `${s.hotspot}\n${[s.nas, s.calledstationid].filter(Boolean).join(' · ')}`,
      ]),
    );
    const ginaRow = rows.find((r) => r.User!.startsWith('gina'))!;
    expect(ginaRow.User).toBe('gina\nGina Ray');
    expect(ginaRow.Traffic).toBe('1.50 MB');
    // The API's HH:MM:SS, and the same in words under it.
    expect(ginaRow['Online for']).toMatch(/^00:0\d:\d\d\n\d+ (min|s)/);
  });

  it('historical sessions: the Stop moves the session from online to the history, figures readable', async () => {
    await radius.radclient('acct', {
      'Acct-Status-Type': 'Stop',
      ...gina,
      'Acct-Session-Time': 3725,
      'Acct-Input-Octets': 705032704,
      'Acct-Input-Gigawords': 1,
      'Acct-Output-Octets': 3000,
      'Acct-Terminate-Cause': 'User-Request',
    });
    await page.getByRole('button', { name: 'Refresh' }).click();
    expect((await rowsWhen(page, 1))[0]!.User).toBe('hugo');

    // The history keeps the search (here: none) and is its own URL.
    await page.getByRole('link', { name: 'History' }).click();
    await expect.poll(() => new URL(page.url()).searchParams.get('view')).toBe('history');
    const api = await hotspot('/historical-sessions');
    expect(api.result).toHaveLength(2);
    const rows = await rowsWhen(page, 2);
    expect(rows.map((r) => [r.User, r.Started])).toEqual(
      api.result.map((s: Record<string, string>) => [s.username, s.acctstarttime]),
    );
    const stopped = api.result.find((s: { username: string }) => s.username === 'gina');
    expect(stopped).toMatchObject({ acctsessiontime: 3725, acctinputoctets: 5_000_000_000, acctoutputoctets: 3000 });
    expect(rows.find((r) => r.User === 'gina')).toEqual({
      User: 'gina',
      Started: stopped.acctstarttime,
      Stopped: stopped.acctstoptime,
      Duration: '1 h 2 min\n3\u202f725 s',
      Input: '4.66 GB\n5\u202f000\u202f000\u202f000 B',
      Output: '2.93 KB\n3\u202f000 B',
      Client: '10.10.0.23\nAA-BB-CC-DD-EE-30',
      Hotspot: 'lobby\n127.0.0.1 · 00-11-22-33-44-55',
      'Ended by': 'User-Request',
    });
    expect(rows.find((r) => r.User === 'hugo')!.Stopped).toBe('still open');

    // Searched by user: the URL holds it, so a reload shows the same.
    await page.getByLabel('Username').fill('gina');
    await page.getByRole('button', { name: 'Search' }).click();
    await rowsWhen(page, 1);
    await page.reload();
    expect((await rowsWhen(page, 1))[0]!.User).toBe('gina');
    await page.getByRole('button', { name: 'Clear' }).click();
    await rowsWhen(page, 2);
    await page.screenshot({ path: join(SCREENSHOT_DIR, 'console-hotspot-sessions.png') });
  });

  it('quota purchases recorded with netsvc quota add show as the report lists them, with the page total', async () => {
    await quotaAdd([
      'gina',
      '--plan',
      '5GB monthly',
      '--amount',
      '20.50',
      '--remarks',
      'paid at the desk',
      '--time',
      '2026-03-25T10:15:00Z',
    ]);
    await quotaAdd([
      'hugo',
      '--plan',
      '1 day',
      '--amount',
      '3',
      '--currency',
      'usd',
      '--time',
      '2026-03-26T08:00:00Z',
      '--by',
      'billing',
    ]);
    await quotaAdd(['gina', '--plan', '1 day', '--amount', '3.25', '--time', '2026-03-27T09:30:00Z']);
    await page.getByRole('link', { name: 'Quota purchases' }).click();
    const api = await hotspot('/quota-purchase-report');
    expect(api.result).toHaveLength(3);
    const rows = await rowsWhen(page, 3);
    expect(rows).toEqual(
      api.result.map((p: Record<string, string>) => ({
        Time: p.transaction_time,
        Username: p.username,
        Plan: p.plan_name,
        Amount: `${p.amount} ${p.currency}`,
        Profiles: '—',
        Remarks: p.remarks || '—',
        Recorded: `${p.create_by}\n${p.create_at}`,
      })),
    );
    expect(rows[0]).toMatchObject({ Time: '2026-03-27 09:30:00', Amount: '3.25 EUR' });
    await expect.poll(() => page.locator('.report-footer').textContent()).toBe('Total on this page: 23.75 EUR · 3.00 USD');

    // remarks is a substring search.
    await page.getByLabel('Remarks contain').fill('desk');
    await page.getByRole('button', { name: 'Search' }).click();
    expect(await rowsWhen(page, 1)).toMatchObject([{ Username: 'gina', Plan: '5GB monthly' }]);
  });

  it('at 375 px wide no report scrolls the page sideways', async () => {
    await page.setViewportSize({ width: 375, height: 800 });
    for (const [path, n] of [
      ['/hotspot/sessions', 1],
      ['/hotspot/sessions?view=history', 2],
      ['/hotspot/attempts', 3],
      ['/hotspot/quota', 3],
    ] as const) {
      await page.goto(`${stack.url}${path}`);
      await rowsWhen(page, n);
      expect(await scrollsSideways(page), path).toBe(false);
    }
    await page.setViewportSize({ width: 1280, height: 800 });
  });
});
