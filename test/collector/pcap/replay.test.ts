import { createSocket, type Socket } from 'node:dgram';
import { afterEach, describe, expect, it } from 'vitest';
import { parseDestination, replayDatagrams, ReplayOptionError, type ReplayDatagram } from '../../../collector/pcap/replay.js';
import { runCli } from '../../../src/cli.js';
import { captureCli } from '../../helpers/cli.js';
import { flowFixtures } from '../../helpers/flow-fixtures.js';

const receivers: Socket[] = [];
afterEach(() => {
  for (const r of receivers.splice(0)) r.close();
});

/** A loopback receiver that records payloads and their arrival times. */
async function receiver(type: 'udp4' | 'udp6' = 'udp4'): Promise<{ port: number; got: { hex: string; at: number }[] }> {
  const s = createSocket({ type, recvBufferSize: 8 << 20 });
  receivers.push(s);
  const got: { hex: string; at: number }[] = [];
  s.on('message', (m) => got.push({ hex: m.toString('hex'), at: performance.now() }));
  await new Promise<void>((r) => s.bind(0, type === 'udp4' ? '127.0.0.1' : '::1', () => r()));
  return { port: s.address().port, got };
}

async function until(cond: () => boolean, ms = 3000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 5));
  }
}

function numbered(n: number, gapMs = 0): ReplayDatagram[] {
  return Array.from({ length: n }, (_, i) => ({ payload: Buffer.from(`datagram ${i}`), timeMs: 1_000_000 + i * gapMs }));
}

describe('replay', () => {
  it('sends every datagram of a real capture, in order, unchanged', async () => {
    const f = flowFixtures().find((x) => x.name === '1/pmacct-v9')!;
    const datagrams = f.datagrams();
    const r = await receiver();
    const result = await replayDatagrams(datagrams, { host: '127.0.0.1', port: r.port, timing: 'max' });
    await until(() => r.got.length === datagrams.length);
    expect(r.got.map((g) => g.hex)).toEqual(datagrams.map((d) => d.payload.toString('hex')));
    expect(result).toMatchObject({ sent: datagrams.length, bytes: f.reference().datagram_bytes_replayed, errors: 0 });
  });

  it('loops and reaches IPv6 loopback', async () => {
    const r = await receiver('udp6');
    await replayDatagrams(numbered(5), { host: '::1', port: r.port, timing: 'max', loops: 3 });
    await until(() => r.got.length === 15);
    const once = numbered(5).map((d) => d.payload.toString());
    expect(r.got.map((g) => Buffer.from(g.hex, 'hex').toString())).toEqual([...once, ...once, ...once]);
  });

  it('paces a fixed rate', async () => {
    const r = await receiver();
    const result = await replayDatagrams(numbered(100), { host: '127.0.0.1', port: r.port, timing: 'fixed', rate: 500 });
    await until(() => r.got.length === 100);
    // 100 datagrams at 500/s: the last leaves 99/500 s after the first.
    const span = r.got[99]!.at - r.got[0]!.at;
    expect(span).toBeGreaterThan(180);
    expect(span).toBeLessThan(600);
    expect(result.elapsedMs).toBeGreaterThan(180);
  });

  it('keeps the capture timing, scaled by speed', async () => {
    const r = await receiver();
    // 3 datagrams 100 ms apart in the capture, played twice as fast: 50 ms apart.
    await replayDatagrams(numbered(3, 100), { host: '127.0.0.1', port: r.port, timing: 'original', speed: 2 });
    await until(() => r.got.length === 3);
    const gaps = [r.got[1]!.at - r.got[0]!.at, r.got[2]!.at - r.got[1]!.at];
    for (const g of gaps) {
      expect(g).toBeGreaterThan(40);
      expect(g).toBeLessThan(150);
    }
  });

  it('stops when aborted', async () => {
    const r = await receiver();
    const abort = new AbortController();
    setTimeout(() => abort.abort(), 50);
    const result = await replayDatagrams(numbered(1000), {
      host: '127.0.0.1',
      port: r.port,
      timing: 'fixed',
      rate: 1000,
      signal: abort.signal,
    });
    expect(result.sent).toBeGreaterThan(0);
    expect(result.sent).toBeLessThan(1000);
  });

  it('only takes address literals as destination', () => {
    expect(parseDestination('127.0.0.1:2055')).toEqual({ host: '127.0.0.1', port: 2055 });
    expect(parseDestination('[::1]:4739')).toEqual({ host: '::1', port: 4739 });
    expect(parseDestination('localhost:9995')).toEqual({ host: '127.0.0.1', port: 9995 });
    for (const bad of ['router.example.com:2055', '127.0.0.1', '::1:2055', '127.0.0.1:0', '127.0.0.1:70000', '']) {
      expect(() => parseDestination(bad), bad).toThrow(ReplayOptionError);
    }
  });
});

describe('netsvc replay', () => {
  it('sends a capture to the named address', async () => {
    const f = flowFixtures().find((x) => x.name === '2/softflowd-v10')!;
    const r = await receiver();
    const ctx = captureCli();
    expect(await runCli(['replay', f.pcap, '--to', `127.0.0.1:${r.port}`, '--rate', '2000', '--loop', '2', '--json'], ctx)).toBe(
      0,
    );
    const out = JSON.parse(ctx.stdout.join(''));
    const n = f.reference().datagrams_replayed;
    expect(out).toMatchObject({ sent: 2 * n, datagrams: n, timing: 'fixed', errors: 0 });
    await until(() => r.got.length === 2 * n);
  });

  it('refuses a host name, a missing --to and an unknown timing', async () => {
    const f = flowFixtures()[0]!;
    for (const args of [
      ['--to', 'collector.example.com:2055'],
      [],
      ['--to', '127.0.0.1:2055', '--timing', 'warp'],
      ['--to', '127.0.0.1:2055', '--timing', 'fixed'],
    ]) {
      const ctx = captureCli();
      const code = await runCli(['replay', f.pcap, ...args], ctx);
      expect(code, args.join(' ')).not.toBe(0);
      expect(ctx.stderr.join(''), args.join(' ')).not.toBe('');
    }
  });
});
