/**
 * The console's hotspot users in Debian's Chromium against a real `netsvc serve` on MariaDB, judged by
 * a real FreeRADIUS 3.2 on the same database: a user made, disabled, enabled, given a profile and an
 * attribute, and deleted in the console is accepted or rejected, and answered, as the console said;
 * what the page shows is compared with the API's own answer.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import type { Browser, Locator, Page } from 'playwright-core';
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

/** What the page functions use of the browser's globals (the test is compiled without the DOM types). */
interface BrowserGlobals {
  document: {
    documentElement: { scrollWidth: number; clientWidth: number };
    activeElement: { getAttribute(name: string): string | null };
  };
  getComputedStyle(el: object): { outlineStyle: string };
}

const ready = chromiumInstalled() && (await freeradiusDialects()).includes('mysql');

describe.skipIf(!ready)('console: hotspot users with a real FreeRADIUS', () => {
  let stack: ConsoleStack;
  let browser: Browser;
  let radius: FreeradiusInstance;
  let page: Page;
  let userId: string;

  /** A hotspot API call with a fresh token: status and body as the API answered. */
  const call = async (method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> => {
    const res = await fetch(`${stack.url}/svc/api/hotspot${path}`, {
      method,
      headers: {
        authorization: `Bearer ${await stack.token('hotspot')}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: await res.json() };
  };
  const alertText = () => page.getByRole('alert').first().textContent();
  const noticeText = () => page.locator('.notice').first().textContent();
  /** True when the page as a whole does not scroll sideways (tables may, in their own box). */
  const noPageWideScroll = () =>
    page.evaluate(() => {
      const root = (globalThis as unknown as BrowserGlobals).document.documentElement;
      return root.scrollWidth <= root.clientWidth;
    });
  const isFocused = (l: Locator) => l.evaluate((el) => el === el.ownerDocument.activeElement);

  beforeAll(async () => {
    [stack, browser] = await Promise.all([startConsoleStack({ mariadb: true }), launchChromium()]);
    radius = await startFreeradius(stack.database!.url);
    // A profile to attach, made as an operator would through the API's profile extension.
    expect((await call('PUT', '/profiles/gold', { description: 'Gold plan' })).status).toBe(201);
    for (const [attribute, value] of [
      ['Session-Timeout', 7200],
      ['WISPr-Bandwidth-Max-Down', 4096],
    ] as const) {
      expect((await call('PUT', `/profiles/gold/attributes/${attribute}`, { value })).status).toBe(200);
    }
    page = await openPage(browser, { viewport: { width: 1280, height: 800 } });
    await signIn(page, stack, '/hotspot/users');
  });
  afterAll(async () => {
    await page?.close();
    await browser?.close();
    await radius?.stop();
    await stack?.close();
  });

  it('names a mistake next to its field before sending, then creates a user that FreeRADIUS accepts', async () => {
    await page.getByRole('button', { name: 'New user' }).click();
    await page.getByRole('heading', { name: 'New user' }).waitFor();
    const name = page.getByLabel('User name', { exact: true });
    await name.fill('carol smith');
    await page.getByLabel('Password', { exact: true }).fill('S3cret-pw');
    await page.getByRole('button', { name: 'Create user' }).click();
    // The problem is shown at the field and the keyboard focus is taken there.
    await expect.poll(() => page.locator('.field-error').first().textContent()).toMatch(/letters, digits/);
    expect(await isFocused(name)).toBe(true);
    expect((await call('GET', '/users?username=carol%20smith')).body.result).toEqual([]);

    await name.fill('carol');
    await page.getByLabel('First name').fill('Carol');
    await page.getByLabel('Email').fill('carol@example.org');
    await page.getByRole('button', { name: 'Create user' }).click();
    await expect.poll(() => new URL(page.url()).pathname).toMatch(/^\/hotspot\/users\/\d+$/);
    userId = new URL(page.url()).pathname.split('/').pop()!;
    expect(await noticeText()).toBe("User 'carol' created successfully.");
    const stored = (await call('GET', `/users/${userId}`)).body.result[0];
    expect(stored).toMatchObject({ username: 'carol', firstname: 'Carol', email: 'carol@example.org', disabled: false });
    expect(await page.getByRole('heading', { level: 2 }).first().textContent()).toMatch(/^carol\s*Enabled$/);

    expect((await radius.radtest('carol', 'S3cret-pw')).code).toBe('Access-Accept');
    expect((await radius.radtest('carol', 's3cret-pw')).code).toBe('Access-Reject');
  });

  it('shows the API’s own message when it refuses a create (a taken name)', async () => {
    await page.goto(`${stack.url}/hotspot/users/new`);
    await page.getByLabel('User name', { exact: true }).fill('carol');
    await page.getByLabel('Password', { exact: true }).fill('other-pw');
    await page.getByRole('button', { name: 'Create user' }).click();
    const refused = await call('POST', '/users', { usertype: 'user', username: 'carol', password: 'other-pw' });
    expect(refused.status).toBe(409);
    await expect.poll(alertText).toBe(refused.body.errorMessage);
    expect(new URL(page.url()).pathname).toBe('/hotspot/users/new');
    // Still the first password: the refused create changed nothing.
    expect((await radius.radtest('carol', 'S3cret-pw')).code).toBe('Access-Accept');
  });

  it('disables and enables the user: FreeRADIUS rejects, then accepts again', async () => {
    await page.goto(`${stack.url}/hotspot/users/${userId}`);
    await page.getByRole('button', { name: 'Disable' }).click();
    await expect.poll(noticeText).toBe("User 'carol' updated successfully.");
    await expect.poll(() => page.getByRole('heading', { level: 2 }).first().textContent()).toMatch(/Disabled$/);
    expect((await call('GET', `/users/${userId}`)).body.result[0].disabled).toBe(true);
    expect((await radius.radtest('carol', 'S3cret-pw')).code).toBe('Access-Reject');

    await page.getByRole('button', { name: 'Enable' }).click();
    await expect.poll(() => page.getByRole('heading', { level: 2 }).first().textContent()).toMatch(/Enabled$/);
    expect((await call('GET', `/users/${userId}`)).body.result[0].disabled).toBe(false);
    expect((await radius.radtest('carol', 'S3cret-pw')).code).toBe('Access-Accept');
  });

  it('edits the details and the password: the API stores them and FreeRADIUS takes the new password', async () => {
    await page.getByLabel('Last name').fill('Smith');
    await page.getByLabel('Email').fill('');
    await page.getByLabel('New password').fill('N3w-secret');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await expect
      .poll(async () => (await call('GET', `/users/${userId}`)).body.result[0])
      .toMatchObject({ firstname: 'Carol', lastname: 'Smith', email: null });
    await expect.poll(noticeText).toBe("User 'carol' updated successfully.");
    // The form shows what was stored, the password field empty again.
    await expect.poll(() => page.getByLabel('Last name').inputValue()).toBe('Smith');
    expect(await page.getByLabel('New password').inputValue()).toBe('');
    expect((await radius.radtest('carol', 'N3w-secret')).code).toBe('Access-Accept');
    expect((await radius.radtest('carol', 'S3cret-pw')).code).toBe('Access-Reject');
  });

  it('attaches a profile and sets an attribute in the catalogue’s unit: FreeRADIUS answers with both, in its unit', async () => {
    await page.getByLabel('Profile to attach').selectOption('gold');
    await page.getByRole('button', { name: 'Attach', exact: true }).click();
    const profiles = page.getByRole('list', { name: /Profiles of carol/ });
    await expect.poll(() => profiles.locator('.profile-name').allTextContents()).toEqual(['gold']);
    expect((await call('GET', `/users/${userId}`)).body.result[0].profile).toBe('gold');

    await page.getByLabel('Attribute', { exact: true }).selectOption('WISPr-Bandwidth-Max-Down');
    // The unit is the catalogue's, named in the label and shown next to the input.
    const value = page.getByLabel('Value in Kbps');
    await value.fill('2048');
    await page.getByRole('button', { name: 'Add', exact: true }).click();
    const table = page.getByRole('table', { name: 'Attributes of carol' });
    await expect.poll(() => table.locator('tbody tr').first().textContent()).toMatch(/WISPr-Bandwidth-Max-Down.*2048 Kbps/);
    const access = (await call('GET', `/user-access/${userId}`)).body.result.attributes;
    expect(access).toEqual([{ 'WISPr-Bandwidth-Max-Down': expect.objectContaining({ format: 'Kbps', value: 2048 }) }]);

    // A value the API refuses (below its minimum) is shown with the API's reasons.
    await page.getByLabel('Attribute', { exact: true }).selectOption('Session-Timeout');
    await page.getByLabel('Value in Seconds').fill('0');
    await page.getByRole('button', { name: 'Add', exact: true }).click();
    await expect.poll(alertText).toMatch(/Session-Timeout: value must be between 1 and/);

    const reply = await radius.radtest('carol', 'N3w-secret');
    expect(reply.code).toBe('Access-Accept');
    // The user's own 2048 Kbps wins over gold's 4096; gold's Session-Timeout applies.
    expect(reply.attributes['WISPr-Bandwidth-Max-Down']).toEqual(['2048000']);
    expect(reply.attributes['Session-Timeout']).toEqual(['7200']);
  });

  it('finds the user as the API does, with the search in the URL', async () => {
    await page.getByRole('link', { name: '← Users' }).click();
    await page.getByLabel('User name (exact)').fill('carol');
    await page.getByRole('button', { name: 'Search' }).click();
    await expect.poll(() => new URL(page.url()).search).toBe('?username=carol');
    const api = (await call('GET', '/users?username=carol')).body.result as Array<{ username: string }>;
    expect(api.map((u) => u.username)).toEqual(['carol']);
    const table = page.getByRole('table', { name: 'Users matching the search' });
    await expect.poll(() => table.locator('tbody tr td:first-child').allTextContents()).toEqual(['carol']);
    expect(await table.locator('tbody tr').first().textContent()).toMatch(/Enabled.*Password.*gold.*Carol Smith/);

    await page.getByLabel('User name (exact)').fill('caro');
    await page.getByRole('button', { name: 'Search' }).click();
    expect((await call('GET', '/users?username=caro')).body.result).toEqual([]);
    await expect.poll(() => page.getByRole('table').locator('td.empty').textContent()).toBe('No user matches the search.');
    // Back restores the earlier search, its input included.
    await page.goBack();
    await expect.poll(() => page.getByLabel('User name (exact)').inputValue()).toBe('carol');
    await expect.poll(() => table.locator('tbody tr td:first-child').allTextContents()).toEqual(['carol']);
  });

  it('creates PIN and MAC users (no password asked): FreeRADIUS lets them in', async () => {
    const create = async (type: string, name: string) => {
      await page.goto(`${stack.url}/hotspot/users/new`);
      await page.getByRole('radio', { name: new RegExp(`^${type}`) }).check();
      expect(await page.getByLabel('Password', { exact: true }).count()).toBe(0);
      await page.getByLabel(type === 'MAC address' ? 'MAC address' : 'PIN', { exact: true }).fill(name);
      await page.getByRole('button', { name: 'Create user' }).click();
      await expect.poll(() => new URL(page.url()).pathname).toMatch(/^\/hotspot\/users\/\d+$/);
      return (await call('GET', `/users/${new URL(page.url()).pathname.split('/').pop()}`)).body.result[0];
    };
    expect(await create('PIN', '424242')).toMatchObject({ username: '424242', usertype: 'Auth-Type' });
    expect((await radius.radtest('424242', '424242')).code).toBe('Access-Accept');
    // Any notation in, stored as XX-XX-XX-XX-XX-XX (the heading shows what the API stored).
    expect(await create('MAC address', '02:00:00:00:00:bb')).toMatchObject({ username: '02-00-00-00-00-BB' });
    await expect.poll(() => page.getByRole('heading', { level: 2 }).first().textContent()).toMatch(/^02-00-00-00-00-BB/);
    const mac = await radius.radclient('auth', {
      'User-Name': '02-00-00-00-00-BB',
      'User-Password': '02-00-00-00-00-BB',
      'Calling-Station-Id': '02-00-00-00-00-BB',
      'NAS-IP-Address': '127.0.0.1',
    });
    expect(mac.code).toBe('Access-Accept');
  });

  it('is usable with the keyboard alone, the focus visible', async () => {
    await page.goto(`${stack.url}/hotspot/users/new`);
    await page.getByLabel('User name', { exact: true }).waitFor();
    // From the type choice (one tab stop, arrows move within it) into the fields, by Tab.
    await page.getByRole('radio', { name: /^User name and password/ }).focus();
    await page.keyboard.press('Tab');
    await page.keyboard.type('dave');
    await page.keyboard.press('Tab');
    await page.keyboard.type('dave-pw-1');
    const focused = () =>
      page.evaluate(() => {
        const { document, getComputedStyle } = globalThis as unknown as BrowserGlobals;
        const el = document.activeElement;
        return { name: el.getAttribute('name'), outline: getComputedStyle(el).outlineStyle };
      });
    expect(await focused()).toEqual({ name: 'password', outline: 'solid' });
    await page.keyboard.press('Enter');
    await expect.poll(() => new URL(page.url()).pathname).toMatch(/^\/hotspot\/users\/\d+$/);
    expect((await radius.radtest('dave', 'dave-pw-1')).code).toBe('Access-Accept');
    // Disable by keyboard: Tab onto the button, Enter.
    await page.getByRole('link', { name: '← Users' }).focus();
    await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    await expect.poll(() => page.getByRole('heading', { level: 2 }).first().textContent()).toMatch(/Disabled$/);
    expect((await radius.radtest('dave', 'dave-pw-1')).code).toBe('Access-Reject');
  });

  it('pages through the users as the API does, the page in the URL and the back button', async () => {
    for (let i = 0; i < 25; i++) {
      expect((await call('POST', '/users', { usertype: 'pin', username: `9000${String(i).padStart(2, '0')}` })).status).toBe(200);
    }
    const names = (page: number) =>
      call('GET', `/users?perPage=25&page=${page}`).then((r) =>
        (r.body.result as Array<{ username: string }>).map((u) => u.username),
      );
    const [first, second] = [await names(1), await names(2)];
    expect(first).toHaveLength(25);
    expect(second.length).toBeGreaterThan(0);
    const shown = () => page.getByRole('table').locator('tbody tr td:first-child').allTextContents();
    await page.goto(`${stack.url}/hotspot/users`);
    await expect.poll(shown).toEqual(first);
    await page.getByRole('button', { name: 'Next →' }).click();
    await expect.poll(() => new URL(page.url()).search).toBe('?page=2');
    await expect.poll(shown).toEqual(second);
    await page.goBack();
    await expect.poll(shown).toEqual(first);
  });

  it('shows an API error instead of a blank page (an unknown user)', async () => {
    await page.goto(`${stack.url}/hotspot/users/999999`);
    const missing = await call('GET', '/users/999999');
    expect(missing.status).toBe(404);
    // The API's message alone: asking again cannot find a user that is not there.
    await expect.poll(alertText).toBe(missing.body.errorMessage);
  });

  it('fits a 375-px phone without page-wide scrolling, and a 1280×800 screenshot goes to docs/', async () => {
    await page.setViewportSize({ width: 375, height: 800 });
    for (const path of ['/hotspot/users', '/hotspot/users/new', `/hotspot/users/${userId}`]) {
      await page.goto(`${stack.url}${path}`);
      await page.locator('section').first().waitFor();
      await page.waitForLoadState('networkidle');
      expect(await noPageWideScroll(), path).toBe(true);
    }
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.goto(`${stack.url}/hotspot/users/${userId}`);
    await page.getByRole('table', { name: 'Attributes of carol' }).locator('tbody tr').first().waitFor();
    await page.waitForLoadState('networkidle');
    await page.screenshot({ path: join(SCREENSHOT_DIR, 'console-hotspot.png') });
  });

  it('deletes the user after a confirmation naming it: gone from the list, and FreeRADIUS rejects it', async () => {
    await page.getByRole('button', { name: 'Delete…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete user' });
    expect(await dialog.textContent()).toMatch(/Delete carol\?/);
    // Cancel (the focused, safe choice) keeps the user.
    expect(await isFocused(dialog.getByRole('button', { name: 'Cancel' }))).toBe(true);
    await page.keyboard.press('Escape');
    expect((await call('GET', `/users/${userId}`)).status).toBe(200);

    await page.getByRole('button', { name: 'Delete…' }).click();
    await dialog.getByRole('button', { name: 'Delete carol' }).click();
    await expect.poll(() => new URL(page.url()).pathname).toBe('/hotspot/users');
    expect(await noticeText()).toBe("User 'carol' deleted successfully.");
    expect((await call('GET', '/users?username=carol')).body.result).toEqual([]);
    await expect.poll(() => page.getByRole('table').locator('tbody tr td:first-child').allTextContents()).not.toContain('carol');
    expect((await radius.radtest('carol', 'N3w-secret')).code).toBe('Access-Reject');
  });
});
