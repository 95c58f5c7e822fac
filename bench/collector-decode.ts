/**
 * Decode throughput of the flow decoder (one core, no I/O): NetFlow v5, v9
 * and IPFIX datagrams decoded over and over into one FlowBatch, cleared every
 * 64 Ki rows as the capture writer would take the columns.
 *
 * Workloads: full-size synthetic datagrams with a typical router layout (as
 * a loaded exporter sends them) and real vendor datagrams from the fixtures.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createFlowDecoder, exporterRef } from '../collector/decode/decoder.js';
import { FlowBatch } from '../common/flow-batch.js';
import { syntheticWorkloads, type SyntheticWorkload } from '../collector/decode/synthetic.js';

/** One measured workload. */
export interface DecodeResult {
  readonly name: string;
  readonly version: 5 | 9 | 10;
  readonly flowsPerDatagram: number;
  readonly datagrams: number;
  readonly flows: number;
  readonly seconds: number;
  readonly flowsPerSecond: number;
  readonly datagramsPerSecond: number;
}

/** Options of the decode benchmark. */
export interface DecodeBenchOptions {
  /** Measuring time per workload, after a warm-up. */
  secondsPerCase: number;
}

const VENDOR_DIR = fileURLToPath(new URL('../../fixtures/netflow/vendors/', import.meta.url));
const vendor = (name: string): Buffer => readFileSync(VENDOR_DIR + name);

function vendorWorkloads(): SyntheticWorkload[] {
  return [
    {
      name: 'v9 Cisco ASR9k (vendor fixture)',
      version: 9,
      setup: [vendor('netflow9_test_cisco_asr9k_tpl260.dat')],
      datagrams: [vendor('netflow9_test_cisco_asr9k_data260.dat')],
    },
    {
      name: 'IPFIX OpenBSD pflow (vendor fixture)',
      version: 10,
      setup: [vendor('ipfix_test_openbsd_pflow_tpl.dat')],
      datagrams: [vendor('ipfix_test_openbsd_pflow_data.dat')],
    },
    {
      name: 'IPFIX NetScaler var-length (vendor fixture)',
      version: 10,
      setup: [vendor('ipfix_test_netscaler_tpl.dat')],
      datagrams: [vendor('ipfix_test_netscaler_data.dat')],
    },
  ];
}

function measure(w: SyntheticWorkload, seconds: number, nowMs: number): DecodeResult {
  const decoder = createFlowDecoder();
  const from = exporterRef('192.0.2.1');
  const batch = new FlowBatch(1 << 16);
  for (const s of w.setup) decoder.decode(s, from, nowMs, batch);
  batch.clear();
  let flowsPerDatagram = 0;
  for (const d of w.datagrams) flowsPerDatagram += decoder.decode(d, from, nowMs, batch).flows;
  flowsPerDatagram /= w.datagrams.length;
  const run = (budgetNs: bigint): { datagrams: number; flows: number; ns: bigint } => {
    let datagrams = 0;
    let flows = 0;
    const t0 = process.hrtime.bigint();
    let t = t0;
    while (t - t0 < budgetNs) {
      // Check the clock every 256 datagrams, not every one.
      for (let k = 0; k < 256; k++) {
        flows += decoder.decode(w.datagrams[datagrams % w.datagrams.length]!, from, nowMs, batch).flows;
        datagrams++;
        if (batch.length > 65_536 - 64) batch.clear();
      }
      t = process.hrtime.bigint();
    }
    return { datagrams, flows, ns: t - t0 };
  };
  run(BigInt(Math.round(Math.min(1, seconds / 2) * 1e9))); // warm-up: let V8 optimise
  const m = run(BigInt(Math.round(seconds * 1e9)));
  const s = Number(m.ns) / 1e9;
  return {
    name: w.name,
    version: w.version,
    flowsPerDatagram,
    datagrams: m.datagrams,
    flows: m.flows,
    seconds: s,
    flowsPerSecond: m.flows / s,
    datagramsPerSecond: m.datagrams / s,
  };
}

/** Runs every decode workload; the collector bench prints the result. */
export function benchDecode(options: Partial<DecodeBenchOptions> = {}): DecodeResult[] {
  const seconds = options.secondsPerCase ?? 2;
  const nowMs = Date.now();
  const workloads = [...syntheticWorkloads(nowMs), ...vendorWorkloads()];
  return workloads.map((w) => measure(w, seconds, nowMs));
}
