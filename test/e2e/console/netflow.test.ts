/**
 * The console's netflow page in Debian's Chromium against a real `netsvc serve` fed NetFlow v5 over
 * loopback: what the page shows (chart series and sums, top lists, filter errors, flow pages,
 * exporter counters) is compared with the API's own answers for the same query.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { writeCapture, type CaptureRecord } from '../../../collector/pcap/pcap-write.js';
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

const DATAGRAMS = 40;
const PER_DATAGRAM = 30;
/** Every flow sent (DATAGRAMS + 1 datagrams). */
const ALL = (DATAGRAMS + 1) * PER_DATAGRAM;

/** NetFlow v5 datagrams (one more than DATAGRAMS) whose flows started over the last three hours: several hosts, protocols and ports. */
function currentV5(): Buffer[] {
  let seed = 21;
  const rnd = () => {
    seed ^= seed << 13;
    seed ^= seed >>> 17;
    seed ^= seed << 5;
    return (seed >>> 0) / 0x100000000;
  };
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  const uptime = 12 * 3_600_000;
  const out: Buffer[] = [];
  for (let d = 0; d <= DATAGRAMS; d++) {
    const b = Buffer.alloc(24 + PER_DATAGRAM * 48);
    b.writeUInt16BE(5, 0);
    b.writeUInt16BE(PER_DATAGRAM, 2);
    b.writeUInt32BE(uptime, 4);
    b.writeUInt32BE(Math.floor(Date.now() / 1000), 8);
    b.writeUInt32BE(d * PER_DATAGRAM, 16);
    for (let r = 0; r < PER_DATAGRAM; r++) {
      const o = 24 + r * 48;
      const age = Math.floor(rnd() * 3 * 3_600_000);
      const proto = pick([6, 6, 6, 17, 17, 1]);
      b.writeUInt32BE((0x0a000000 | (Math.floor(rnd() * 4) << 8) | (1 + Math.floor(rnd() * 30))) >>> 0, o);
      b.writeUInt32BE(pick([0xc6336401, 0xc6336402, 0x08080808, 0x01010101, 0xcb007107]) >>> 0, o + 4);
      b.writeUInt16BE(1, o + 12);
      b.writeUInt16BE(2, o + 14);
      b.writeUInt32BE(1 + Math.floor(rnd() * 50), o + 16);
      b.writeUInt32BE(60 + Math.floor(rnd() * 60_000), o + 20);
      b.writeUInt32BE(uptime - age - 5000, o + 24);
      b.writeUInt32BE(uptime - age, o + 28);
      const dport = proto === 17 ? pick([53, 123, 443]) : pick([22, 80, 443, 8080]);
      b.writeUInt16BE(proto === 1 ? 0 : 1024 + Math.floor(rnd() * 60_000), o + 32);
      b.writeUInt16BE(proto === 1 ? 0x0800 : dport, o + 34);
      b.writeUInt8(proto === 6 ? 0x1b : 0, o + 37);
      b.writeUInt8(proto, o + 38);
    }
    out.push(b);
  }
  return out;
}

/**
 * History for the chart to show, as `netsvc import` reads it: a pcap of one NetFlow v5 datagram a
 * minute from 6 h to 3 h 10 min ago (before the window the other checks use), traffic rising and
 * falling through those hours.
 */
function historyPcap(dir: string): string {
  const now = Date.now();
  const records: CaptureRecord[] = [];
  const uptime = 12 * 3_600_000;
  for (let m = 0; m < 170; m++) {
    const t = now - 6 * 3_600_000 + m * 60_000;
    const level = 0.35 + 0.65 * Math.sin((Math.PI * m) / 170) ** 2;
    const b = Buffer.alloc(24 + PER_DATAGRAM * 48);
    b.writeUInt16BE(5, 0);
    b.writeUInt16BE(PER_DATAGRAM, 2);
    b.writeUInt32BE(uptime, 4);
    b.writeUInt32BE(Math.floor(t / 1000), 8);
    b.writeUInt32BE(m * PER_DATAGRAM, 16);
    for (let r = 0; r < PER_DATAGRAM; r++) {
      const o = 24 + r * 48;
      const proto = [6, 6, 6, 17, 17, 1][r % 6]!;
      b.writeUInt32BE((0x0a000100 | (1 + ((r * 7 + m) % 30))) >>> 0, o);
      b.writeUInt32BE([0xc6336401, 0x08080808, 0x01010101, 0xcb007107][r % 4]! >>> 0, o + 4);
      b.writeUInt16BE(1, o + 12);
      b.writeUInt16BE(2, o + 14);
      b.writeUInt32BE(1 + (r % 40), o + 16);
      b.writeUInt32BE(Math.round(level * (500_000 + ((r * 7919) % 1_000_000))), o + 20);
      b.writeUInt32BE(uptime - 40_000, o + 24);
      b.writeUInt32BE(uptime - 1000, o + 28);
      b.writeUInt16BE(proto === 1 ? 0 : 1024 + r * 97, o + 32);
      b.writeUInt16BE(proto === 1 ? 0x0800 : proto === 17 ? [53, 123, 443][r % 3]! : [22, 80, 443, 8080][r % 4]!, o + 34);
      b.writeUInt8(proto === 6 ? 0x1b : 0, o + 37);
      b.writeUInt8(proto, o + 38);
    }
    records.push({ timeMs: t, src: '192.0.2.10', dst: '192.0.2.1', srcPort: 40000, dstPort: 2055, payload: b });
  }
  const path = join(dir, 'history.pcap');
  writeFileSync(path, writeCapture(records));
  return path;
}

const isoMinute = (ms: number) => `${new Date(ms).toISOString().slice(0, 16)}Z`;
const digits = (s: string | null) => (s ?? '').replace(/\D/g, '');

describe.skipIf(!chromiumInstalled())('console: netflow page', () => {
  let stack: ConsoleStack;
  let browser: Browser;
  let page: Page;
  let start: string;
  let end: string;
  let view: string;
  let history: string | undefined;

  const q = (params: Record<string, string>) => new URLSearchParams({ start, end, ...params }).toString();

  beforeAll(async () => {
    history = mkdtempSync(join(tmpdir(), 'netsvc-console-history-'));
    [stack, browser] = await Promise.all([
      startConsoleStack({ beforeServe: [['import', historyPcap(history)]] }),
      launchChromium(),
    ]);
    const datagrams = currentV5();
    // One burst, then nothing: the flow list must come to show all of it (a search's snapshot takes
    // in the newest received millisecond once the writer's flush interval has passed).
    await stack.sendFlows(datagrams);
    start = isoMinute(Date.now() - 3 * 3_600_000);
    end = isoMinute(Date.now() + 120_000);
    for (let waited = 0; ; waited += 250) {
      const total = (await stack.api('netflow', `/search?${q({ limit: '1' })}`)).result?.total;
      if (total === ALL) break;
      if (waited > 20_000) throw new Error(`flows not listed after 20 s (${total} of ${ALL})`);
      await new Promise((r) => setTimeout(r, 250));
    }
    view = `/netflow?${new URLSearchParams({ from: start, to: end, by: 'dst_port' }).toString()}`;
    page = await openPage(browser, { viewport: { width: 1280, height: 800 } });
    await signIn(page, stack, view);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await stack?.close();
    if (history) rmSync(history, { recursive: true, force: true });
  });

  /** The legend rows: series name and its window sum as the page states it. */
  const legend = () =>
    page.locator('.nf-legend tbody tr').evaluateAll((rows) =>
      rows.map((r) => ({
        name: r.querySelector('th')?.textContent ?? '',
        sum: Number(r.querySelector('data')?.getAttribute('value')),
      })),
    );
  const talkers = () =>
    page
      .getByRole('region', { name: 'Top talkers' })
      .locator('li')
      .evaluateAll((items) =>
        items.map((li) => ({
          name: li.querySelector('.nf-bar-label')?.textContent ?? '',
          value: Number(li.querySelector('data')?.getAttribute('value')),
        })),
      );

  it('draws the traffic chart with the series the API returns', async () => {
    // 3 h window → 1-minute steps, as the page chooses.
    const api = (await stack.api('netflow', `/series?${q({ by: 'dst_port', metric: 'bytes', step: '1m', limit: '10' })}`)).result;
    const sum = (v: number[]) => v.reduce((a, b) => a + b, 0);
    const want = api.lines.map((l: any) => ({ name: String(l.key.dst_port), sum: sum(l.values) }));
    if (api.other.some((v: number) => v !== 0)) want.push({ name: 'other', sum: sum(api.other) });
    expect(want.length).toBeGreaterThan(3);
    await expect.poll(legend, { timeout: 30_000 }).toEqual(want);
    await page.locator('.nf-plot canvas').waitFor();
    const marks = await page.evaluate(() => ({
      drawn: performance.getEntriesByName('netflow:chart-drawn').length,
      redraw: performance.getEntriesByName('netflow:chart-redraw').length,
      first: performance.getEntriesByName('netflow:first-render').length,
    }));
    expect(marks).toEqual({ drawn: expect.any(Number), redraw: expect.any(Number), first: 1 });
    expect(marks.redraw).toBeGreaterThan(0);
  });

  it('a filter narrows the top talkers to what the API returns for it', async () => {
    const all = (await stack.api('netflow', `/top?${q({ by: 'src_ip', metric: 'bytes', limit: '10' })}`)).result;
    const udp = (await stack.api('netflow', `/top?${q({ by: 'src_ip', metric: 'bytes', limit: '10', filter: 'proto udp' })}`))
      .result;
    const listed = (t: any) => [
      ...t.rows.map((r: any) => ({ name: r.src_ip, value: r.bytes })),
      ...(t.other.bytes > 0 ? [{ name: 'other', value: t.other.bytes }] : []),
    ];
    await expect.poll(talkers, { timeout: 15_000 }).toEqual(listed(all));
    const box = page.getByLabel('Filter (nfdump syntax)');
    await box.fill('proto udp');
    await box.press('Enter');
    await expect.poll(talkers, { timeout: 15_000 }).toEqual(listed(udp));
    expect(udp.total.bytes).toBeLessThan(all.total.bytes);
    expect(new URL(page.url()).searchParams.get('filter')).toBe('proto udp');
  });

  it('a bad filter shows the API’s message inline, with a caret under the column, and keeps the text', async () => {
    const bad = 'proto udp and dst port http';
    const res = await fetch(`${stack.url}/svc/api/netflow/top?${q({ by: 'src_ip', filter: bad })}`, {
      headers: { authorization: `Bearer ${await stack.token('netflow')}` },
    });
    const answer = (await res.json()) as { errorMessage: string; position: number };
    expect(res.status).toBe(400);
    const box = page.getByLabel('Filter (nfdump syntax)');
    await box.fill(bad);
    await box.press('Enter');
    const shown = page.locator('#nf-filter-error');
    await expect.poll(() => shown.locator('span').textContent(), { timeout: 15_000 }).toBe(answer.errorMessage);
    const caret = (await shown.locator('pre').textContent())!.split('\n')[1]!;
    expect(caret.indexOf('^')).toBe(answer.position);
    expect(await box.inputValue()).toBe(bad);
    expect(await box.getAttribute('aria-invalid')).toBe('true');
    await page.getByRole('button', { name: 'Clear' }).click();
    await expect.poll(() => shown.count()).toBe(0);
  });

  it('pages the flow table with the API’s cursor', async () => {
    const p1 = (await stack.api('netflow', `/search?${q({ limit: '50' })}`)).result;
    const p2 = (await stack.api('netflow', `/search?${q({ limit: '50', cursor: p1.next_cursor })}`)).result;
    const flows = page.getByRole('region', { name: 'Flows' });
    const starts = () => flows.locator('tbody tr td:first-child').allTextContents();
    await expect
      .poll(async () => digits(await flows.getByText(/flows match/).textContent()), { timeout: 15_000 })
      .toBe(String(p1.total));
    expect(p1.total).toBe(ALL);
    await expect.poll(starts, { timeout: 15_000 }).toEqual(p1.flows.map((f: any) => f.ts));
    await flows.getByRole('button', { name: 'Next →' }).click();
    await expect.poll(starts, { timeout: 15_000 }).toEqual(p2.flows.map((f: any) => f.ts));
    await expect.poll(() => flows.locator('caption').textContent()).toMatch(/^Page 2/);
    const sources = await flows.locator('tbody tr td:nth-child(2) code').allTextContents();
    expect(sources).toEqual(p2.flows.map((f: any) => (f.proto === 1 ? f.src_ip : `${f.src_ip}:${f.src_port}`)));
    await flows.getByRole('button', { name: '← Previous' }).click();
    await expect.poll(starts, { timeout: 15_000 }).toEqual(p1.flows.map((f: any) => f.ts));
  });

  it('lists the exporter with the datagram count the API reports', async () => {
    const api = (await stack.api('netflow', '/exporters')).result;
    const ex = api.sources.find((s: any) => s.source === 'netflow').exporters[0];
    expect(ex.datagrams).toBe(DATAGRAMS + 1);
    const table = page.getByRole('region', { name: 'Exporters' });
    await table.getByRole('button', { name: 'Refresh' }).click();
    const row = table.locator('tbody tr', { hasText: ex.address });
    await expect
      .poll(async () => digits(await row.locator('td:nth-child(3)').textContent()), { timeout: 10_000 })
      .toBe(String(ex.datagrams));
  });

  it('drag-selecting on the chart sets the window in the URL', async () => {
    const plot = page.locator('.nf-plot .u-over');
    await plot.scrollIntoViewIfNeeded();
    const b = (await plot.boundingBox())!;
    await page.mouse.move(b.x + b.width * 0.5, b.y + b.height / 2);
    await page.mouse.down();
    await page.mouse.move(b.x + b.width * 0.9, b.y + b.height / 2, { steps: 5 });
    await page.mouse.up();
    await expect.poll(() => new URL(page.url()).searchParams.get('from')).not.toBe(start);
    const u = new URL(page.url()).searchParams;
    expect(Date.parse(u.get('from')!)).toBeGreaterThan(Date.parse(start));
    expect(Date.parse(u.get('to')!)).toBeLessThanOrEqual(Date.parse(end));
    await page.goBack();
    await expect.poll(() => new URL(page.url()).searchParams.get('from')).toBe(start);
  });

  it('fits a phone’s width without page-wide horizontal scroll, and looks right at 1280 px', async () => {
    // The imported history by protocol, as an operator looks back at it.
    const from = isoMinute(Date.now() - 6 * 3_600_000);
    const to = isoMinute(Date.now() - 3 * 3_600_000 - 12 * 60_000);
    await page.goto(`${stack.url}/netflow?${new URLSearchParams({ from, to }).toString()}`);
    await page.locator('.nf-plot canvas').waitFor();
    await expect.poll(talkers, { timeout: 15_000 }).not.toEqual([]);
    await page.setViewportSize({ width: 375, height: 800 });
    await expect
      .poll(() => page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth'))
      .toBeLessThanOrEqual(0);
    await page.setViewportSize({ width: 1280, height: 800 });
    await expect
      .poll(() => page.evaluate<number>("document.querySelector('.nf-plot canvas')?.clientWidth ?? 0"))
      .toBeGreaterThan(900);
    await page.screenshot({ path: join(SCREENSHOT_DIR, 'console-netflow.png') });
  });
});
