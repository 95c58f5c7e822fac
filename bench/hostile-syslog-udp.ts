/**
 * `npm run bench -- hostile syslog-udp`: a burst of 100 000 UDP syslog
 * datagrams, as fast as this process sends them, to a spawned `netsvc
 * serve`: once with the configured receive buffer (default 8 MiB, capped
 * by net.core.rmem_max) and once with the kernel's usual default (208 KiB,
 * what the tester had). Reports the buffer the kernel set and whether
 * received + kernel drops accounts for every datagram sent (within 1 %).
 */
import type { HostileRow } from './hostile.js';
import { spawnSyslogServe, syslogCounters, syslogLine, udpBurst } from './hostile-syslog-lib.js';
import { log } from './lib.js';

const ATTACK = 'syslog-udp';
const BURST = 100_000;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function round(label: string, receiveBuffer: number | undefined, rows: HostileRow[]): Promise<void> {
  const serve = await spawnSyslogServe(receiveBuffer === undefined ? {} : { receiveBuffer });
  const row = (measure: string, value: string, target: string, ok: boolean): void =>
    void rows.push({ attack: ATTACK, measure: `${label}: ${measure}`, value, target, ok });
  try {
    log(`${ATTACK} (${label}): ${BURST} datagrams to 127.0.0.1:${serve.syslogPort}`);
    const { sendErrors } = await udpBurst(serve.syslogPort, BURST, (i) => Buffer.from(syslogLine(`burst-${i}`)));
    let c = syslogCounters((await serve.metrics()).text);
    // Quiet: the counters stop moving (the receiver has read what the kernel kept).
    for (let last = -1; c.receivedUdp !== last;) {
      last = c.receivedUdp;
      await sleep(500);
      c = syslogCounters((await serve.metrics()).text);
    }
    const sent = BURST - sendErrors;
    const accounted = c.receivedUdp + c.kernelDrops;
    const off = Math.abs(accounted - sent) / sent;
    row(
      'receive buffer set',
      `${c.receiveBuffer} B`,
      receiveBuffer === undefined ? 'as configured, or rmem_max' : `${receiveBuffer} B`,
      c.receiveBuffer > 0,
    );
    row(
      'received + kernel drops',
      `${c.receivedUdp} + ${c.kernelDrops} = ${accounted} of ${sent} (${(off * 100).toFixed(2)} % off)`,
      `= sent within 1 %`,
      off <= 0.01,
    );
    for (const end = Date.now() + 30_000; c.queueDepth > 0 && Date.now() < end; await sleep(200))
      c = syslogCounters((await serve.metrics()).text);
    row(
      'stored + dropped',
      `${c.stored} + ${c.dropped} of ${c.receivedUdp} received`,
      '= received',
      c.stored + c.dropped === c.receivedUdp,
    );
  } finally {
    await serve.stop();
  }
}

export async function run(_args: string[]): Promise<HostileRow[]> {
  const rows: HostileRow[] = [];
  await round('default buffer', undefined, rows);
  await round('208 KiB buffer', 212_992, rows);
  return rows;
}
