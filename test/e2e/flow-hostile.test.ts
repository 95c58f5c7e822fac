/**
 * Hostile exporters against a spawned `netsvc serve`, over loopback (issue
 * 16): floods of observation domains and templates, costly templates, and
 * an honest softflowd stream from another address that must not lose a
 * datagram meanwhile. The attacker sends from 127.0.0.2, the honest
 * exporter from 127.0.0.1. `npm run bench -- hostile flow-state
 * costly-templates` runs the same attacks and prints the figures.
 */
import { afterAll, describe, expect, it } from 'vitest';
import {
  ATTACKER,
  costlyData,
  costlyTemplate,
  flood,
  idleRss,
  ipfix,
  manyTemplates,
  removeDataDir,
  settle,
  spawnFlowServe,
  treeBytes,
  udpFrom,
  type FlowServe,
} from '../../bench/hostile-flow-lib.js';
import { honest } from '../../bench/hostile-flow-state.js';

const MB = 1024 * 1024;
const HONEST = '127.0.0.1';
const nowSecs = () => Math.floor(Date.now() / 1000);

describe('netsvc serve under hostile exporters', () => {
  const dirs: string[] = [];
  const running: FlowServe[] = [];
  afterAll(async () => {
    for (const s of running) await s.stop();
    for (const d of dirs) removeDataDir(d);
  });
  const start = async (o: Parameters<typeof spawnFlowServe>[0] = {}): Promise<FlowServe> => {
    const s = await spawnFlowServe(o);
    running.push(s);
    if (!dirs.includes(s.dataDir)) dirs.push(s.dataDir);
    return s;
  };

  it('200 000 headers with unique domain ids from one address: memory stays flat, the evictions are counted', async () => {
    const s = await start();
    // Warm: the path has run at speed and the datagram ring (128 MiB, allocated at start, touched as
    // it fills) has been written through once.
    await honest(s, 20_000, 5000);
    const attacker = await udpFrom(ATTACKER, s.udpPort);
    const secs = nowSecs();
    function* headers(from: number, n: number) {
      for (let d = from; d < from + n; d++) yield ipfix(d + 1, secs);
    }
    // RSS is compared idle (the memory reducer has run) before and after: what the service keeps.
    // Right after a burst it moves by tens of MB with when the last collection ran (garbage, not
    // state; bench/README.md, "hostile: attacks of issue 16"). What must not happen is growth with the flood, as
    // when every domain was kept (116–134 MB for 200 000).
    const base = await idleRss(s.pid);
    const sent = await flood(attacker.send, headers(0, 200_000), 20);
    await attacker.close();
    const read = await settle(async () => s.counter(await s.metrics(), 'datagrams_total', ATTACKER));
    const text = await s.metrics();
    const grown = (await idleRss(s.pid)) - base;
    expect(sent).toBe(200_000);
    expect(read).toBeGreaterThan(190_000);
    expect(s.counter(text, 'domains_evicted_total', ATTACKER)).toBe(read - 64);
    expect(grown, `RSS grew ${(grown / MB).toFixed(1)} MB`).toBeLessThanOrEqual(20 * MB);
  }, 120_000);

  it('3 000 datagrams of 300 templates, each in a new domain: bounded memory and template files, a quick restart, then a template trickle costs an honest stream nothing', async () => {
    let s = await start();
    await honest(s, 5000, 50);
    // Idle before and after, as in the domain flood above: right after 3 000 datagrams RSS holds
    // the burst's garbage too, tens of MB with when V8 last collected (160 MB once in CI, against
    // 20–31 MB kept: bench/README.md, "hostile").
    const base = await idleRss(s.pid);
    const attacker = await udpFrom(ATTACKER, s.udpPort);
    const secs = nowSecs();
    function* templates() {
      for (let k = 0; k < 3000; k++) yield manyTemplates(1_000_000 + k, 300, secs);
    }
    await flood(attacker.send, templates(), 2);
    const read = await settle(async () => s.counter(await s.metrics(), 'datagrams_total', ATTACKER));
    expect(read).toBeGreaterThan(2900);
    let text = await s.metrics();
    expect(s.counter(text, 'templates_refused_total', ATTACKER)).toBeGreaterThan(800_000);
    const grown = (await idleRss(s.pid)) - base;
    expect(grown, `RSS grew ${(grown / MB).toFixed(1)} MB`).toBeLessThanOrEqual(150 * MB);
    // The idle wait also covers the template save, 500 ms after the last change.
    const fileBytes = treeBytes(`${s.dataDir}/templates`);
    expect(fileBytes, `template files ${(fileBytes / MB).toFixed(2)} MB`).toBeLessThanOrEqual(10 * MB);

    await s.stop();
    s = await start({ dataDir: s.dataDir, udpPort: s.udpPort });
    // What the restart reads is bounded by the caps (the bench times the restart itself: ≤ 2 s on a
    // quiet machine; here other tests share the cores, and a wall-clock bound would measure them).
    const restored = /"templates":(\d+),"exporters":(\d+),"msg":"flow templates restored"/.exec(s.output());
    expect(restored, s.output().slice(-2000)).not.toBeNull();
    expect(Number(restored![1])).toBeLessThanOrEqual(2048 + 20);

    // 5 datagrams a second of new templates, while the honest exporter sends 20 000 a second for 5 s.
    let k = 0;
    let trickling = true;
    const trickle = async (): Promise<void> => {
      while (trickling) {
        for (let i = 0; i < 5; i++) await attacker.send(manyTemplates(2_000_000 + k++, 300, nowSecs()));
        await new Promise((r) => setTimeout(r, 1000));
      }
    };
    const t = trickle();
    const stream = await honest(s, 20_000, 5000);
    trickling = false;
    await t;
    await attacker.close();
    expect(stream.sent).toBe(100_000);
    expect(stream.kernelDrops).toBe(0);
    expect(stream.read).toBe(stream.sent);
    text = await s.metrics();
    expect(s.counter(text, 'flows_total', HONEST)).toBeGreaterThan(0);
  }, 300_000);

  it('100 pairs of alternating 16 000-field templates cost an honest 20 000/s stream nothing; they are refused and counted', async () => {
    const s = await start();
    // The same stream alone first: it must pass here for the comparison to mean anything.
    const control = await honest(s, 20_000, 5000);
    expect(control.read, 'the honest stream alone lost datagrams: this machine cannot measure the attack').toBe(control.sent);
    const attacker = await udpFrom(ATTACKER, s.udpPort);
    const costly = async (): Promise<void> => {
      for (let k = 0; k < 100; k++) {
        for (const layout of ['A', 'B'] as const) {
          await attacker.send(costlyTemplate(layout, 16_000, nowSecs()));
          await attacker.send(costlyData(16_000, nowSecs()));
        }
        await new Promise((r) => setTimeout(r, 20));
      }
    };
    const stream = await honest(s, 20_000, 5000, costly);
    await attacker.close();
    expect(stream.kernelDrops).toBe(0);
    expect(stream.read).toBe(stream.sent);
    const text = await s.metrics();
    expect(s.counter(text, 'templates_refused_total', ATTACKER)).toBe(200);
    expect(s.counter(text, 'templates_added_total', ATTACKER)).toBe(0);
  }, 120_000);
});
