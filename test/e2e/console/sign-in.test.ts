/**
 * The console in Debian's Chromium against a real `netsvc serve`: served at `/`, nothing fetched from
 * elsewhere, sign-in with API id and secret, the API's own message on a refused sign-in.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { chromiumInstalled, launchChromium, signIn, startConsoleStack, type ConsoleStack } from '../../helpers/console-stack.js';

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
    const page = await browser.newPage();
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

  it('opens a bookmarked view after sign-in, with its query intact', async () => {
    const page = await browser.newPage();
    await signIn(page, stack, '/logviewer?host=edge1');
    await expect.poll(() => page.url()).toBe(`${stack.url}/logviewer?host=edge1`);
    await page.close();
  });
});
