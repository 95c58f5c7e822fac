/**
 * `npm run bench -- hostile flow-state [--rounds N]`: the domain flood
 * (200 000 IPFIX headers, each naming a new observation domain) and the
 * template flood (3 000 datagrams of 300 templates, each in a new domain),
 * then a restart on the templates kept, then a trickle of 5 new-template
 * datagrams a second beside an honest softflowd stream at 20 000
 * datagrams/s, against a spawned `netsvc serve` over loopback. Every round
 * is reported.
 */
import type { HostileRow } from './hostile.js';
import {
  ATTACKER,
  flood,
  HONEST_PCAP,
  idleRss,
  ipfix,
  manyTemplates,
  removeDataDir,
  replayFrom,
  rss,
  settle,
  spawnFlowServe,
  treeBytes,
  udpFrom,
  type FlowServe,
} from './hostile-flow-lib.js';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TemplateCache } from '../collector/decode/template-cache.js';
import { TemplatePersistence } from '../collector/listen/template-persistence.js';
import { log } from './lib.js';
import { metricValue } from './hostile-syslog-lib.js';

const MB = 1024 * 1024;
const nowSecs = (): number => Math.floor(Date.now() / 1000);

/** Honest softflowd replay at `rate`/s: datagrams sent, read by serve, and dropped by the kernel. */
export async function honest(
  s: FlowServe,
  rate: number,
  loops: number,
  during?: () => Promise<void>,
): Promise<{ sent: number; read: number; kernelDrops: number }> {
  const drops = async (): Promise<number> =>
    metricValue(await s.metrics(), 'netsvc_flow_kernel_drops_total', { listen: `127.0.0.1:${s.udpPort}` }) ?? 0;
  const before = s.counter(await s.metrics(), 'datagrams_total', '127.0.0.1');
  const dropsBefore = await drops();
  const [r] = await Promise.all([replayFrom(HONEST_PCAP, s.udpPort, rate, loops), during?.()]);
  const read = (await settle(async () => s.counter(await s.metrics(), 'datagrams_total', '127.0.0.1'))) - before;
  return { sent: r.sent, read, kernelDrops: (await drops()) - dropsBefore };
}

/** A row over every round: the values joined, ok when each meets `ok`. */
export function roundsRow(
  attack: string,
  measure: string,
  values: number[],
  fmt: (v: number) => string,
  target: string,
  ok: (v: number) => boolean,
): HostileRow {
  return { attack, measure, value: values.map(fmt).join(' / '), target, ok: values.every(ok) };
}

export async function run(args: string[]): Promise<HostileRow[]> {
  const i = args.indexOf('--rounds');
  const rounds = i >= 0 ? Number(args[i + 1]) : 3;
  const r = {
    domainRss: [] as number[],
    domainPeak: [] as number[],
    evicted: [] as number[],
    read: [] as number[],
    tplRss: [] as number[],
    files: [] as number[],
    restart: [] as number[],
    loss: [] as number[],
    refused: [] as number[],
  };
  for (let round = 1; round <= rounds; round++) {
    log(`flow-state round ${round}: domain flood`);
    let s = await spawnFlowServe();
    try {
      await honest(s, 20_000, 5000); // warm, and the datagram ring written through once
      const base = await idleRss(s.pid);
      const a = await udpFrom(ATTACKER, s.udpPort);
      const secs = nowSecs();
      let peak = 0;
      const watch = setInterval(() => (peak = Math.max(peak, rss(s.pid))), 100);
      await flood(
        a.send,
        (function* () {
          for (let d = 0; d < 200_000; d++) yield ipfix(d + 1, secs);
        })(),
        20,
      );
      await a.close();
      r.read.push(await settle(async () => s.counter(await s.metrics(), 'datagrams_total', ATTACKER)));
      clearInterval(watch);
      r.domainPeak.push(peak - base);
      r.domainRss.push((await idleRss(s.pid)) - base);
      r.evicted.push(s.counter(await s.metrics(), 'domains_evicted_total', ATTACKER));
    } finally {
      await s.stop();
      removeDataDir(s.dataDir);
    }

    log(`flow-state round ${round}: template flood, restart, trickle`);
    s = await spawnFlowServe();
    const dataDir = s.dataDir;
    try {
      await honest(s, 20_000, 5000);
      const base = rss(s.pid);
      const a = await udpFrom(ATTACKER, s.udpPort);
      const secs = nowSecs();
      await flood(
        a.send,
        (function* () {
          for (let k = 0; k < 3000; k++) yield manyTemplates(1_000_000 + k, 300, secs);
        })(),
        2,
      );
      await settle(async () => s.counter(await s.metrics(), 'datagrams_total', ATTACKER));
      r.tplRss.push(rss(s.pid) - base);
      r.refused.push(s.counter(await s.metrics(), 'templates_refused_total', ATTACKER));
      await new Promise((ok) => setTimeout(ok, 1500));
      r.files.push(treeBytes(`${dataDir}/templates`));
      await s.stop();
      s = await spawnFlowServe({ dataDir, udpPort: s.udpPort });
      r.restart.push(s.startMs);
      let k = 0;
      let on = true;
      const trickle = async (): Promise<void> => {
        while (on) {
          for (let n = 0; n < 5; n++) await a.send(manyTemplates(2_000_000 + k++, 300, nowSecs()));
          await new Promise((ok) => setTimeout(ok, 1000));
        }
      };
      const t = trickle();
      const h = await honest(s, 20_000, 5000);
      on = false;
      await t;
      await a.close();
      r.loss.push(h.sent - h.read);
      log(`  honest: sent ${h.sent}, read ${h.read}, kernel drops ${h.kernelDrops}`);
    } finally {
      await s.stop();
      removeDataDir(dataDir);
    }
  }
  // A restart with the caps full: the files written straight from a store filled to its bounds.
  const full: number[] = [];
  const fresh: number[] = [];
  let fullFiles = 0;
  for (let round = 1; round <= rounds; round++) {
    log(`flow-state round ${round}: restart with the caps full`);
    const dataDir = mkdtempSync(join(tmpdir(), 'netsvc-hostile-full-'));
    try {
      const first = await spawnFlowServe({ dataDir });
      fresh.push(first.startMs);
      await first.stop();
      const cache = new TemplateCache({ ttlMs: 3_600_000, limits: { budgetBurst: 1e12 } });
      const fields = Array.from({ length: 30 }, (_, k) => ({ id: 1 + k, length: 4, enterprise: 0 }));
      const t = Date.now();
      for (let e = 0; cache.size < cache.limits.maxTemplates && cache.fieldTotal + 30 <= cache.limits.maxFields; e++) {
        const d = cache.domain(`198.51.100.${e}`, 10, 0, t);
        for (
          let id = 256;
          id < 256 + cache.limits.maxTemplatesPerExporter && cache.fieldTotal + 30 <= cache.limits.maxFields;
          id++
        )
          cache.set(d, id, false, 0, fields, t);
      }
      new TemplatePersistence({ dir: join(dataDir, 'templates', 'netflow'), now: () => t, ttlMs: 3_600_000 }).save(cache, true);
      fullFiles = treeBytes(join(dataDir, 'templates'));
      const again = await spawnFlowServe({ dataDir, udpPort: first.udpPort });
      full.push(again.startMs);
      await again.stop();
    } finally {
      removeDataDir(dataDir);
    }
  }
  const mb = (v: number): string => `${(v / MB).toFixed(1)} MB`;
  return [
    roundsRow(
      'caps full (16 384 templates / 500 000 fields)',
      `restart to listening (files ${mb(fullFiles)})`,
      full,
      (v) => `${(v / 1000).toFixed(2)} s`,
      '≤ 2 s',
      (v) => v <= 2000,
    ),
    roundsRow(
      'caps full (16 384 templates / 500 000 fields)',
      'first start, no templates (reference)',
      fresh,
      (v) => `${(v / 1000).toFixed(2)} s`,
      '',
      () => true,
    ),
    roundsRow(
      'domain flood 200 000',
      'RSS growth (idle before and after: what is kept)',
      r.domainRss,
      mb,
      '≤ 20 MB',
      (v) => v <= 20 * MB,
    ),
    roundsRow(
      'domain flood 200 000',
      'RSS peak during the flood over idle before (garbage until collected)',
      r.domainPeak,
      mb,
      'information',
      () => true,
    ),
    {
      attack: 'domain flood 200 000',
      measure: 'datagrams read / domains evicted',
      value: r.read.map((v, j) => `${v}/${r.evicted[j]}`).join(' / '),
      target: 'evicted = read − 64',
      ok: r.read.every((v, j) => r.evicted[j] === v - 64),
    },
    roundsRow('template flood 3 000 × 300', 'RSS growth', r.tplRss, mb, '≤ 150 MB', (v) => v <= 150 * MB),
    roundsRow('template flood 3 000 × 300', 'templates refused', r.refused, String, 'counted', (v) => v > 0),
    roundsRow('template flood 3 000 × 300', 'template files', r.files, mb, '≤ 10 MB', (v) => v <= 10 * MB),
    roundsRow(
      'template flood 3 000 × 300',
      'restart to listening',
      r.restart,
      (v) => `${(v / 1000).toFixed(2)} s`,
      '≤ 2 s',
      (v) => v <= 2000,
    ),
    roundsRow('template trickle 5/s + honest 20 000/s', 'honest datagrams lost', r.loss, String, '0', (v) => v === 0),
  ];
}
