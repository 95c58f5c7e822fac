/**
 * What the flow attacks of issue 16 share (bench/hostile-flow-state.ts,
 * bench/hostile-costly-templates.ts, and the e2e test that runs them):
 * the hostile datagrams themselves (pure builders), a `netsvc serve`
 * spawned on its own data directory with its flow port on 127.0.0.1, its
 * resident memory, and an honest softflowd stream replayed from another
 * process while the attack runs.
 */
import { spawn } from 'node:child_process';
import { createSocket, type Socket } from 'node:dgram';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../test/helpers/net.js';
import { metricValue } from './hostile-syslog-lib.js';
import { ROOT, spawnServe } from './spawned-serve.js';

const SENDER = join(ROOT, 'dist/bench/collector-ingest-sender.js');

/** The honest exporter's capture: softflowd NetFlow v9, 20 datagrams, replayed in loops. */
export const HONEST_PCAP = join(ROOT, 'fixtures/flow-oracle/1/softflowd-v9/export.pcap');

/** Replays `loops` × `pcap` to 127.0.0.1:`port` at `rate` datagrams/s from a separate process (from 127.0.0.1). */
export async function replayFrom(
  pcap: string,
  port: number,
  rate: number,
  loops: number,
): Promise<{ sent: number; elapsedMs: number }> {
  const child = spawn(process.execPath, [SENDER, pcap, String(port), String(rate), String(loops)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout!.on('data', (b: Buffer) => (out += b.toString()));
  const code = await new Promise<number | null>((r) => child.once('exit', r));
  if (code !== 0) throw new Error(`sender exited with ${code}`);
  return JSON.parse(out) as { sent: number; elapsedMs: number };
}

/** Where the attacks come from: a loopback alias, so the honest stream (from 127.0.0.1) is another exporter. */
export const ATTACKER = '127.0.0.2';

function u16(n: number): Buffer {
  const b = Buffer.alloc(2);
  b.writeUInt16BE(n);
  return b;
}

function u32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n >>> 0);
  return b;
}

/** An IPFIX message: header (16 bytes) with `domain`, then `sets`. */
export function ipfix(domain: number, exportSecs: number, ...sets: Buffer[]): Buffer {
  const body = Buffer.concat(sets);
  return Buffer.concat([u16(10), u16(16 + body.length), u32(exportSecs), u32(0), u32(domain), body]);
}

/** A set with its 4-byte header. */
export function ipfixSet(id: number, body: Buffer): Buffer {
  return Buffer.concat([u16(id), u16(body.length + 4), body]);
}

/** An IPFIX template record: id, then (element id, length) pairs. */
export function templateRecord(id: number, fields: ReadonlyArray<readonly [number, number]>): Buffer {
  const parts = [u16(id), u16(fields.length)];
  for (const [e, l] of fields) parts.push(u16(e), u16(l));
  return Buffer.concat(parts);
}

/** A datagram of `templates` templates of 10 fields each, in observation domain `domain` (the template flood). */
export function manyTemplates(domain: number, templates: number, exportSecs: number, firstId = 256): Buffer {
  const fields: Array<[number, number]> = [
    [8, 4],
    [12, 4],
    [7, 2],
    [11, 2],
    [4, 1],
    [1, 8],
    [2, 8],
    [150, 4],
    [151, 4],
    [10, 4],
  ];
  const records: Buffer[] = [];
  for (let k = 0; k < templates; k++) records.push(templateRecord(firstId + k, fields));
  return ipfix(domain, exportSecs, ipfixSet(2, Buffer.concat(records)));
}

/**
 * The costly template: two address fields then `varFields` variable-length
 * fields, in layout A or B (B swaps the address fields' order, so each
 * announcement is a change), with one data record of it in the same message
 * when it fits.
 */
export function costlyTemplate(layout: 'A' | 'B', varFields: number, exportSecs: number): Buffer {
  const addresses: Array<[number, number]> =
    layout === 'A'
      ? [
          [8, 4],
          [12, 4],
        ]
      : [
          [12, 4],
          [8, 4],
        ];
  const fields: Array<[number, number]> = [...addresses];
  for (let k = 0; k < varFields; k++) fields.push([k % 2 === 0 ? 82 : 83, 0xffff]); // interfaceName / interfaceDescription
  const tpl = ipfixSet(2, templateRecord(300, fields));
  const record = Buffer.concat([Buffer.from([10, 0, 0, 1, 10, 0, 0, 2]), Buffer.alloc(varFields)]); // every variable field empty
  const data = ipfixSet(300, record);
  return tpl.length + data.length + 16 <= 65_507 ? ipfix(1, exportSecs, tpl, data) : ipfix(1, exportSecs, tpl);
}

/** The data record alone for `costlyTemplate` (sent after a template too big to carry it). */
export function costlyData(varFields: number, exportSecs: number): Buffer {
  return ipfix(1, exportSecs, ipfixSet(300, Buffer.concat([Buffer.from([10, 0, 0, 1, 10, 0, 0, 2]), Buffer.alloc(varFields)])));
}

/** Resident memory of a process, bytes (Linux /proc). */
export function rss(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : 0;
}

/**
 * RSS once the process has been idle long enough for V8's memory reducer to
 * run (it collects and gives pages back some 8 s after allocation slows): the
 * memory the process keeps, without the garbage a burst of traffic leaves
 * until then. Measured right after a burst, RSS moves by ±30–50 MB with when
 * the last collection happened; idle it is steady to 1–2 MB (bench/README.md
 * "Hostile input"). Waits `idleMs`, then takes the median of 7 samples 0.5 s
 * apart.
 */
export async function idleRss(pid: number, idleMs = 12_000): Promise<number> {
  await new Promise((r) => setTimeout(r, idleMs));
  const samples: number[] = [];
  for (let i = 0; i < 7; i++) {
    samples.push(rss(pid));
    await new Promise((r) => setTimeout(r, 500));
  }
  return samples.sort((a, b) => a - b)[3]!;
}

/** Bytes of every file under `dir`. */
export function treeBytes(dir: string): number {
  let n = 0;
  for (const name of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, name.name);
    n += name.isDirectory() ? treeBytes(p) : statSync(p).size;
  }
  return n;
}

/** A UDP socket bound to `localAddress`, sending to 127.0.0.1:`port`. */
export async function udpFrom(
  localAddress: string,
  port: number,
): Promise<{ send(b: Buffer): Promise<void>; close(): Promise<void> }> {
  const sock: Socket = createSocket('udp4');
  await new Promise<void>((r) => sock.bind(0, localAddress, () => r()));
  return {
    send: (b) => new Promise<void>((ok, fail) => sock.send(b, port, '127.0.0.1', (err) => (err ? fail(err) : ok()))),
    close: () => new Promise<void>((r) => sock.close(() => r())),
  };
}

/**
 * Sends `datagrams` at most `perMs` per millisecond (a flood the service is
 * meant to read, not one that overflows the socket buffer before it can).
 */
export async function flood(send: (b: Buffer) => Promise<void>, datagrams: Iterable<Buffer>, perMs = 20): Promise<number> {
  let n = 0;
  const t0 = performance.now();
  for (const d of datagrams) {
    await send(d);
    n++;
    if (n % perMs === 0) {
      const ahead = n / perMs - (performance.now() - t0);
      if (ahead > 1) await new Promise((r) => setTimeout(r, ahead));
    }
  }
  return n;
}

/** A spawned `netsvc serve` with its flow source `netflow` on 127.0.0.1:`udpPort`. */
export interface FlowServe {
  pid: number;
  url: string;
  udpPort: number;
  dataDir: string;
  /** Milliseconds from spawn to the HTTP API answering and the flow socket listening. */
  startMs: number;
  metrics(): Promise<string>;
  /** A counter of the flow source for one exporter (or all), 0 when absent. */
  counter(text: string, name: string, exporter?: string): number;
  /** Stops it (SIGTERM; SIGKILL after 15 s); the data directory stays for `spawnFlowServe(…, same)`. */
  stop(): Promise<void>;
  output(): string;
}

/** Spawns serve on `dataDir` (a fresh one when absent) with `flowSource` merged into the netflow source. */
export async function spawnFlowServe(
  opts: { dataDir?: string; udpPort?: number; flowSource?: Record<string, unknown> } = {},
): Promise<FlowServe> {
  const dataDir = opts.dataDir ?? mkdtempSync(join(tmpdir(), 'netsvc-hostile-flow-'));
  const udpPort = opts.udpPort ?? (await freePort());
  const serve = await spawnServe(
    dataDir,
    {
      flowSources: { netflow: { listen: `127.0.0.1:${udpPort}`, ...opts.flowSource }, lentor: { listen: '127.0.0.1:0' } },
      syslogReceiver: { enabled: false },
    },
    (out) => out.includes('flow listener started'),
  );
  const { url } = serve;
  const metrics = async (): Promise<string> => {
    // A kept-alive connection the server is closing just then fails once: asked again on a new one.
    try {
      return await (await fetch(`${url}/metrics`)).text();
    } catch {
      return (await fetch(`${url}/metrics`, { headers: { connection: 'close' } })).text();
    }
  };
  return {
    pid: serve.pid,
    url,
    udpPort,
    dataDir,
    startMs: serve.startMs,
    metrics,
    counter: (text, name, exporter) =>
      metricValue(
        text,
        `netsvc_flow_${name}`,
        exporter === undefined ? { source: 'netflow' } : { source: 'netflow', exporter },
      ) ?? 0,
    stop: serve.stop,
    output: serve.output,
  };
}

/** Waits until `read()` stops changing for `quietMs` (the service has read what was sent); answers its last value. */
export async function settle(read: () => Promise<number>, quietMs = 1500, maxMs = 120_000): Promise<number> {
  let last = await read();
  let since = performance.now();
  const end = performance.now() + maxMs;
  while (performance.now() < end) {
    await new Promise((r) => setTimeout(r, 250));
    const v = await read();
    if (v !== last) {
      last = v;
      since = performance.now();
    } else if (performance.now() - since >= quietMs) break;
  }
  return last;
}

/** Removes a data directory made by `spawnFlowServe`. */
export function removeDataDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}
