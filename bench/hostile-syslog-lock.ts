/**
 * `npm run bench -- hostile syslog-lock`: another process holds `BEGIN
 * EXCLUSIVE` on a spawned `netsvc serve`'s syslog.sqlite for 20 s while
 * 20 000 UDP syslog messages arrive (1 000/s); /metrics is asked every
 * 50 ms meanwhile. Reports the slowest /metrics answer during the lock, and
 * whether every message sent was stored after the lock or counted as
 * dropped (stored + dropped + kernel drops = sent, rows = stored).
 */
import { openSqlite } from '../storage/sql/sqlite-driver.js';
import { join } from 'node:path';
import type { HostileRow } from './hostile.js';
import { holdSqliteLock, spawnSyslogServe, syslogCounters, syslogLine, udpBurst } from './hostile-syslog-lib.js';
import { fmt, log, percentile } from './lib.js';

const ATTACK = 'syslog-lock';
const LOCK_MS = 20_000;
const MESSAGES = 20_000;
const TICK_MS = 100;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export async function run(_args: string[]): Promise<HostileRow[]> {
  const serve = await spawnSyslogServe();
  const rows: HostileRow[] = [];
  const row = (measure: string, value: string, target: string, ok: boolean): void =>
    void rows.push({ attack: ATTACK, measure, value, target, ok });
  const file = join(serve.dataDir, 'syslog.sqlite');
  const lock = await holdSqliteLock(file, LOCK_MS);
  try {
    log(`${ATTACK}: ${file} locked for ${LOCK_MS / 1000} s; ${MESSAGES} UDP messages meanwhile`);
    let locked = true;
    void lock.released.then(() => (locked = false));
    // 1 000 messages a second, in 100-message bursts every 100 ms, spread over the lock.
    const perTick = (MESSAGES * TICK_MS) / (LOCK_MS - 2000);
    const sending = (async () => {
      const start = performance.now();
      for (let sent = 0, tick = 0; sent < MESSAGES; tick++) {
        const n = Math.min(MESSAGES - sent, Math.round(perTick));
        const base = sent;
        await udpBurst(serve.syslogPort, n, (i) => Buffer.from(syslogLine(`locked-${base + i}`)));
        sent += n;
        const wait = start + (tick + 1) * TICK_MS - performance.now();
        if (wait > 0) await sleep(wait);
      }
    })();
    const latencies: number[] = [];
    while (locked) {
      latencies.push((await serve.metrics()).ms);
      await sleep(50);
    }
    await sending;
    latencies.sort((a, b) => a - b);
    const max = latencies[latencies.length - 1] ?? Number.NaN;
    row(
      '/metrics during the 20 s lock (max, p99)',
      `${fmt(max, 1)} ms, ${fmt(percentile(latencies, 99), 1)} ms (${latencies.length} asks)`,
      '<= 100 ms',
      max <= 100,
    );

    log(`${ATTACK}: lock released; waiting for the queue to drain`);
    const draining: number[] = [];
    let c = syslogCounters((await serve.metrics()).text);
    for (
      const end = Date.now() + 30_000;
      (c.queueDepth > 0 || c.receivedUdp + c.kernelDrops < MESSAGES) && Date.now() < end;
      await sleep(50)
    ) {
      const m = await serve.metrics();
      draining.push(m.ms);
      c = syslogCounters(m.text);
    }
    const drainMax = draining.length ? Math.max(...draining) : Number.NaN;
    row(
      '/metrics while the backlog is written (max)',
      `${fmt(drainMax, 1)} ms (${draining.length} asks)`,
      '<= 100 ms',
      !(drainMax > 100),
    );
    const db = openSqlite(file, { readonly: true, fileMustExist: true });
    const inTable = (db.prepare("SELECT COUNT(*) AS n FROM SystemEvents WHERE Message LIKE 'locked-%'").get() as { n: number }).n;
    db.close();
    const accounted = c.stored + c.dropped + c.kernelDrops;
    row(
      'stored + dropped + kernel drops',
      `${c.stored} + ${c.dropped} + ${c.kernelDrops} = ${accounted} of ${MESSAGES}`,
      `= ${MESSAGES}`,
      accounted === MESSAGES && c.queueDepth === 0,
    );
    row('rows in SystemEvents after the lock', String(inTable), `= stored (${c.stored})`, inTable === c.stored);
    row('writes refused by the lock (retried)', String(c.writeErrors), '> 0 (the lock was hit)', c.writeErrors > 0);
  } finally {
    lock.kill();
    await serve.stop();
  }
  return rows;
}
