/**
 * `npm run bench -- hostile values`: the outside tester's absurd values,
 * sent over UDP to a spawned `netsvc serve`: an IPFIX record whose every
 * byte is 0xFF (start, end, octets and packets at their maximum), and
 * options data announcing a sampling interval of 2^32 − 1 followed by an
 * honest record. Then reads `/flows`, `/kpi` and `/latest` and `/metrics`
 * and reports: `NaN` in the answers, the 64-bit counters exact, the KPI
 * totals integers, and the anomalies counted.
 */
import { spawnSync } from 'node:child_process';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { HostileRow } from './hostile.js';
import {
  ATTACKER,
  ipfix,
  ipfixSet,
  removeDataDir,
  settle,
  spawnFlowServe,
  templateRecord,
  udpFrom,
  type FlowServe,
} from './hostile-flow-lib.js';
import { log } from './lib.js';

const ATTACK = 'values';
const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = basename(dirname(HERE)) === 'dist' ? join(HERE, '..', '..') : join(HERE, '..');
const CLI = join(ROOT, 'dist/src/cli.js');

/** 2^64 − 1, as `/flows` must print the 0xFF… record's octets and packets. */
export const U64_MAX_TEXT = '18446744073709551615';

// sourceIPv4Address, destinationIPv4Address, octetDeltaCount, packetDeltaCount,
// flowStartMilliseconds, flowEndMilliseconds, protocolIdentifier, source and destination port.
const FIELDS: Array<[number, number]> = [
  [8, 4],
  [12, 4],
  [1, 8],
  [2, 8],
  [152, 8],
  [153, 8],
  [4, 1],
  [7, 2],
  [11, 2],
];
const RECORD_LENGTH = 45;

function uint(value: number, bytes: number): Buffer {
  const b = Buffer.alloc(bytes);
  b.writeUIntBE(value, 0, bytes);
  return b;
}

/**
 * The two datagrams, exported at `nowMs`: template 256 and the 0xFF… record;
 * options template 300 (scope observationDomainId, samplingInterval) with
 * 2^32 − 1 and an honest 1500-byte record of template 256.
 */
export function hostileValueDatagrams(nowMs: number): Buffer[] {
  const exportSecs = Math.floor(nowMs / 1000);
  const template = ipfixSet(2, templateRecord(256, FIELDS));
  const allOnes = ipfixSet(256, Buffer.alloc(RECORD_LENGTH, 0xff));
  const optionsTemplate = ipfixSet(
    3,
    Buffer.concat([uint(300, 2), uint(2, 2), uint(1, 2), uint(149, 2), uint(4, 2), uint(34, 2), uint(4, 2)]),
  );
  const options = ipfixSet(300, Buffer.concat([uint(0, 4), uint(0xffffffff, 4)]));
  const t = (ms: number): Buffer => Buffer.concat([uint(Math.floor(ms / 2 ** 32), 4), uint(ms % 2 ** 32, 4)]);
  const honest = ipfixSet(
    256,
    Buffer.concat([
      Buffer.from([10, 1, 1, 1, 10, 2, 2, 2]),
      uint(0, 4),
      uint(1500, 4),
      uint(0, 4),
      uint(3, 4),
      t(nowMs - 2000),
      t(nowMs - 1000),
      uint(6, 1),
      uint(40000, 2),
      uint(443, 2),
    ]),
  );
  return [ipfix(7, exportSecs, template, allOnes), ipfix(7, exportSecs, optionsTemplate, options, template, honest)];
}

/** `YYYY/MM/DD HH:mm` in UTC (the spawned serve's zone). */
const minute = (ms: number): string => new Date(ms).toISOString().slice(0, 16).replace(/-/g, '/').replace('T', ' ');

/** Every count of a `kpi` answer: integers (numbers or strings of digits)? */
function countsAreIntegers(r: any): boolean {
  const counts: unknown[] = [
    r.kpi.total_bytes,
    r.kpi.active_flows,
    r.kpi.denied_flows,
    ...r.top_src.flatMap((e: any) => [e.bytes, e.packets, e.flows]),
    ...r.top_dst_ip.flatMap((e: any) => [e.bytes, e.packets, e.flows]),
    ...r.top_dst.flatMap((e: any) => [e.bytes, e.flows]),
    ...r.protocols.flatMap((p: any) => [p.bytes, p.flows]),
    ...r.timeseries.flatMap((p: any) => [p.bytes, p.flows]),
  ];
  return counts.every((v) => (typeof v === 'number' ? Number.isSafeInteger(v) : typeof v === 'string' && /^\d+$/.test(v)));
}

async function login(serve: FlowServe): Promise<string> {
  const config = join(serve.dataDir, 'netsvc.config.json');
  const cli = (args: string[]) => spawnSync(process.execPath, [CLI, ...args, '--config', config], { encoding: 'utf8' });
  cli(['admin', 'entity', 'add', 'default', '--areas', 'netflow']);
  cli(['admin', 'user', 'add', 'default', 'bench', '--areas', 'netflow']);
  const cred = JSON.parse(cli(['admin', 'credentials', 'issue', 'default', 'bench', '--json']).stdout) as {
    api_id: string;
    secret: string;
  };
  const res = await fetch(`${serve.url}/svc/api/netflow/auth`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(cred),
  });
  return ((await res.json()) as any).result.access_token as string;
}

export async function run(_args: string[]): Promise<HostileRow[]> {
  const rows: HostileRow[] = [];
  const row = (measure: string, value: string, target: string, ok: boolean): void =>
    void rows.push({ attack: ATTACK, measure, value, target, ok });
  const serve = await spawnFlowServe();
  try {
    const token = await login(serve);
    const sent = Date.now();
    const sock = await udpFrom(ATTACKER, serve.udpPort);
    log(`${ATTACK}: the 0xFF… record and a 2^32 − 1 sampling interval from ${ATTACKER} to 127.0.0.1:${serve.udpPort}`);
    for (const d of hostileValueDatagrams(sent)) await sock.send(d);
    await sock.close();
    await settle(async () => serve.counter(await serve.metrics(), 'flows_total', ATTACKER), 500, 10_000);

    const get = async (path: string): Promise<string> =>
      (await fetch(`${serve.url}/svc/api/netflow${path}`, { headers: { authorization: `Bearer ${token}` } })).text();
    const window = `start=${encodeURIComponent(minute(sent - 3_600_000))}&end=${encodeURIComponent(minute(sent + 3_600_000))}`;
    // Flows reach the capture file at the next flush (capture.flushIntervalMs, 5 s by default).
    let flowsText = '';
    for (const end = Date.now() + 30_000; Date.now() < end; await new Promise((r) => setTimeout(r, 250))) {
      flowsText = await get(`/flows?${window}`);
      if (((JSON.parse(flowsText) as any).result?.flows?.length ?? 0) >= 2) break;
    }
    const kpiText = await get(`/kpi?${window}`);
    const latestText = await get('/latest');
    const nan = [flowsText, kpiText, latestText].reduce((n, t) => n + (t.match(/NaN/g)?.length ?? 0), 0);
    row('"NaN" in flows, kpi, latest', String(nan), '0', nan === 0);

    const flows = ((JSON.parse(flowsText) as any).result?.flows ?? []) as Array<Record<string, string>>;
    const ones = flows.find((f) => f.src_ip === '255.255.255.255');
    const honest = flows.find((f) => f.src_ip === '10.1.1.1');
    const exact = ones?.bytes === U64_MAX_TEXT && ones?.packets === U64_MAX_TEXT;
    row(
      '0xFF… record: bytes / packets in flows',
      ones ? `${ones.bytes} / ${ones.packets}` : 'not found',
      `${U64_MAX_TEXT} (exact)`,
      exact,
    );
    const exported = new Date(Math.floor(sent / 1000) * 1000).toISOString().slice(0, 19).replace('T', ' ');
    row('0xFF… record: ts', ones?.ts ?? 'not found', `its export time ${exported}`, ones?.ts === exported);
    row('honest record after 2^32 − 1: bytes', honest?.bytes ?? 'not found', '1500 (interval refused)', honest?.bytes === '1500');

    const kpi = (JSON.parse(kpiText) as any).result;
    const integers = kpi !== undefined && countsAreIntegers(kpi) && !/\d[eE][+-]?\d/.test(kpiText);
    row(
      'kpi totals',
      kpi ? `total_bytes ${JSON.stringify(kpi.kpi.total_bytes)}, total_traffic ${kpi.kpi.total_traffic}` : 'no answer',
      'integers, no exponent',
      integers,
    );

    const after = await serve.metrics();
    const clamped = serve.counter(after, 'timestamps_clamped_total', ATTACKER);
    const refused = serve.counter(after, 'sampling_refused_total', ATTACKER);
    row(
      'anomalies counted',
      `timestampsClamped ${clamped}, samplingRefused ${refused}`,
      '2 and 1',
      clamped === 2 && refused === 1,
    );
  } finally {
    await serve.stop();
    removeDataDir(serve.dataDir);
  }
  return rows;
}
