/**
 * The console in Debian's Chromium against a real `netsvc serve`: served at `/`, nothing fetched from
 * elsewhere, sign-in with API id and secret, the API's own message on a refused sign-in.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import {
  chromiumInstalled,
  launchChromium,
  openPage,
  signIn,
  startConsoleStack,
  type ConsoleStack,
} from '../../helpers/console-stack.js';

describe.skipIf(!chromiumInstalled())('console: sign-in', () => {
  let stack: ConsoleStack;
  let browser: Browser;

  beforeAll(async () => {
    [stack, browser] = await Promise.all([startConsoleStack(), launchChromium()]);
  });
  afterAll(async () => {
    await browser?.close();
    await stack?.close();
  });

  it('refuses a wrong secret with the API message, then signs in and lands on the first area', async () => {
    const page = await openPage(browser);
    const foreign: string[] = [];
    page.on('request', (r) => {
      if (!r.url().startsWith(stack.url)) foreign.push(r.url());
    });
    await page.goto(stack.url);
    await page.getByLabel('API id').fill(stack.credentials.api_id);
    await page.getByLabel('Secret').fill('not-the-secret');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toMatch(/invalid|credential|secret/i);

    await page.getByLabel('Secret').fill(stack.credentials.secret);
    await page.getByRole('button', { name: 'Sign in' }).click();
    const nav = page.getByRole('navigation', { name: 'Areas' });
    await nav.waitFor();
    expect(await nav.getByRole('link').allTextContents()).toEqual(['Traffic', 'Logs', 'Hotspot']);
    await expect.poll(() => new URL(page.url()).pathname).toBe('/netflow');

    // A reload keeps the session (this tab's storage); signing out forgets it.
    await page.reload();
    await nav.waitFor();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('API id').waitFor();
    expect(foreign).toEqual([]);
    await page.close();
  });

  it('asks to sign in again when the server refuses a token, and finishes the request afterwards', async () => {
    const page = await openPage(browser);
    await signIn(page, stack, '/logviewer');
    await page.getByRole('button', { name: 'Search' }).waitFor();
    // A token the server no longer takes (as after `admin credentials issue` or a new jwt.key), which
    // the browser still believes good: only the 401 can tell.
    await page.evaluate(() => {
      const storage = (globalThis as any).sessionStorage;
      const saved = JSON.parse(storage.getItem('netsvc.session')!);
      saved.tokens.logviewer.value = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl';
      storage.setItem('netsvc.session', JSON.stringify(saved));
    });
    // The page's own first search is refused: the dialog opens over it.
    const answered = page.waitForResponse((r) => r.url().includes('/svc/api/logviewer/') && r.status() === 401);
    await page.goto(`${stack.url}/logviewer?host=edge9`);
    await answered;
    const dialog = page.getByRole('dialog', { name: 'Sign in again' });
    await dialog.waitFor();
    // The same user signs in again: the waiting request must not resume as someone else.
    expect(await dialog.getByLabel('API id').inputValue()).toBe(stack.credentials.api_id);
    expect(await dialog.getByLabel('API id').isEditable()).toBe(false);
    await dialog.getByLabel('Secret').fill(stack.credentials.secret);
    const retried = page.waitForResponse((r) => r.url().includes('/svc/api/logviewer/') && r.status() === 200);
    await dialog.getByRole('button', { name: 'Sign in' }).click();
    await retried;
    await dialog.waitFor({ state: 'hidden' });
    expect(await page.getByLabel('Host').inputValue()).toBe('edge9');
    expect(new URL(page.url()).searchParams.get('host')).toBe('edge9');
    await page.close();
  });

  it('opens a bookmarked view after sign-in, with its query intact', async () => {
    const page = await openPage(browser);
    await signIn(page, stack, '/logviewer?host=edge1');
    await expect.poll(() => page.url()).toBe(`${stack.url}/logviewer?host=edge1`);
    await page.close();
  });
});
