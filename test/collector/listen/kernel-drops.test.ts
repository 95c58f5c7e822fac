import { createSocket, type Socket } from 'node:dgram';
import { afterEach, describe, expect, it } from 'vitest';
import { dropsOf, parseUdpDrops, readUdpDrops } from '../../../collector/listen/kernel-drops.js';

const HEADER =
  '   sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode ref pointer drops\n';

describe('kernel drops from /proc/net/udp', () => {
  const open: Socket[] = [];
  afterEach(() => {
    for (const s of open.splice(0)) s.close();
  });

  it('reads the drops column by local address and port, IPv4 and IPv6, in the host byte order', () => {
    const v4 = `${HEADER} 3145: 0100007F:0807 00000000:0000 07 00000000:00000000 00:00000000 00000000     0        0 39285 2 0000000004fac999 1234\n`;
    const v6 =
      `${HEADER}  512: 00000000000000000000000001000000:0808 00000000000000000000000000000000:0000 07 00000000:00000000 00:00000000 00000000     0        0 40001 2 00000000aa 7\n` +
      `  513: 00000000000000000000000000000000:0809 00000000000000000000000000000000:0000 07 00000000:00000000 00:00000000 00000000     0        0 40002 2 00000000bb 0\n`;
    const t = parseUdpDrops([v4, v6, undefined], true);
    expect(dropsOf(t, '127.0.0.1', 2055)).toBe(1234);
    expect(dropsOf(t, '::1', 2056)).toBe(7);
    expect(dropsOf(t, '::', 2057)).toBe(0);
    expect(dropsOf(t, '127.0.0.1', 2056)).toBeUndefined();
    // A big-endian host writes the words the other way round.
    expect(dropsOf(parseUdpDrops([v4.replace('0100007F', '7F000001')], false), '127.0.0.1', 2055)).toBe(1234);
  });

  it('passes over lines that do not parse', () => {
    const t = parseUdpDrops([`${HEADER}garbage\n 1: ZZZZ:0807 x x x x x x x x x x x 5\n`], true);
    expect(t.size).toBe(0);
  });

  it.runIf(process.platform === 'linux')('finds a socket this process bound, with no drops yet', async () => {
    for (const [type, host] of [
      ['udp4', '127.0.0.1'],
      ['udp6', '::1'],
    ] as const) {
      const s = createSocket(type);
      open.push(s);
      await new Promise<void>((r) => s.bind(0, host, () => r()));
      expect(dropsOf(readUdpDrops(), host, s.address().port), host).toBe(0);
    }
  });
});
