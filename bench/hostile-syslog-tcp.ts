/**
 * `npm run bench -- hostile syslog-tcp`: 600 idle TCP connections to the
 * syslog port from one address (127.0.0.2), then an honest sender from
 * another (127.0.0.3) sends 100 messages. Against a spawned `netsvc serve`
 * with `tcpIdleTimeoutSec` 10 (the default, 300 s, would make the run five
 * minutes long; the behaviour is the same). Reports how many idle
 * connections were held and refused, whether the honest messages were
 * stored, and when the idle ones were closed.
 */
import { openSqlite } from '../storage/sql/sqlite-driver.js';
import { join } from 'node:path';
import type { HostileRow } from './hostile.js';
import { openIdleConnections, sendTcpLines, spawnSyslogServe, syslogCounters, syslogLine } from './hostile-syslog-lib.js';
import { log } from './lib.js';

const ATTACK = 'syslog-tcp';
const IDLE = 600;
const HONEST = 100;
const IDLE_TIMEOUT_SEC = 10;
const PER_ADDRESS = 32;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export async function run(_args: string[]): Promise<HostileRow[]> {
  const serve = await spawnSyslogServe({
    tcpIdleTimeoutSec: IDLE_TIMEOUT_SEC,
    maxConnectionsPerAddress: PER_ADDRESS,
    maxConnections: 512,
  });
  const rows: HostileRow[] = [];
  const row = (measure: string, value: string, target: string, ok: boolean): void =>
    void rows.push({ attack: ATTACK, measure, value, target, ok });
  try {
    log(`${ATTACK}: ${IDLE} idle connections from 127.0.0.2 to 127.0.0.1:${serve.syslogPort}`);
    const openedAt = performance.now();
    const idle = await openIdleConnections(serve.syslogPort, '127.0.0.2', IDLE);
    await sleep(500);
    const held = idle.open();
    const before = syslogCounters((await serve.metrics()).text);
    row('idle connections held (one address)', `${held} of ${IDLE}`, `<= ${PER_ADDRESS}`, held <= PER_ADDRESS);
    row('refused and counted', String(before.tcpRejectedAddress), `= ${IDLE - held}`, before.tcpRejectedAddress === IDLE - held);

    log(`${ATTACK}: honest sender from 127.0.0.3`);
    let honestOk = true;
    await sendTcpLines(
      serve.syslogPort,
      '127.0.0.3',
      Array.from({ length: HONEST }, (_, i) => syslogLine(`honest-${i}`)),
    ).catch(() => (honestOk = false));
    let stored = 0;
    for (const end = Date.now() + 10_000; Date.now() < end; await sleep(100)) {
      const db = openSqlite(join(serve.dataDir, 'syslog.sqlite'), { readonly: true, fileMustExist: true });
      try {
        stored = (db.prepare("SELECT COUNT(*) AS n FROM SystemEvents WHERE Message LIKE 'honest-%'").get() as { n: number }).n;
      } finally {
        db.close();
      }
      if (stored >= HONEST) break;
    }
    row(
      'honest sender (other address) served',
      `${honestOk ? 'yes' : 'NO'}, ${stored} of ${HONEST} stored`,
      `yes, ${HONEST}`,
      honestOk && stored === HONEST,
    );

    log(`${ATTACK}: waiting for the idle timeout (${IDLE_TIMEOUT_SEC} s)`);
    for (const end = performance.now() + (IDLE_TIMEOUT_SEC + 10) * 1000; idle.open() > 0 && performance.now() < end;)
      await sleep(100);
    const last = idle.open() === 0 ? Math.max(...idle.closedAt) : Number.NaN;
    const first = Math.min(...idle.closedAt.slice(-held));
    const closedAfter = (last - openedAt) / 1000;
    const firstAfter = (first - openedAt) / 1000;
    row(
      'idle connections closed after',
      Number.isNaN(closedAfter) ? `${idle.open()} still open` : `${firstAfter.toFixed(1)}–${closedAfter.toFixed(1)} s`,
      `${IDLE_TIMEOUT_SEC}–${IDLE_TIMEOUT_SEC + 2} s (tcpIdleTimeoutSec ${IDLE_TIMEOUT_SEC})`,
      firstAfter >= IDLE_TIMEOUT_SEC - 0.1 && closedAfter <= IDLE_TIMEOUT_SEC + 2,
    );
    const after = syslogCounters((await serve.metrics()).text);
    row('closed idle, counted', String(after.tcpIdleClosed), `= ${held}`, after.tcpIdleClosed === held);
    idle.destroy();
  } finally {
    await serve.stop();
  }
  return rows;
}
