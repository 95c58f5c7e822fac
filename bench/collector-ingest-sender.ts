/**
 * The sender of the ingest benchmark, run as its own process (the same send
 * logic as `netsvc replay`, without loading the rest of the CLI):
 * `node dist/bench/collector-ingest-sender.js PCAP PORT RATE LOOPS` → one JSON line.
 */
import { readFileSync } from 'node:fs';
import { readCapture } from '../collector/pcap/pcap.js';
import { replayDatagrams } from '../collector/pcap/replay.js';

const [pcap, port, rate, loops] = process.argv.slice(2);
if (!pcap || !port || !rate || !loops) throw new Error('usage: collector-ingest-sender PCAP PORT RATE LOOPS');
const { datagrams } = readCapture(readFileSync(pcap));
const r = await replayDatagrams(datagrams, {
  host: '127.0.0.1',
  port: Number(port),
  timing: 'fixed',
  rate: Number(rate),
  loops: Number(loops),
});
process.stdout.write(`${JSON.stringify(r)}\n`);
