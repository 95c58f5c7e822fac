import { describe, expect, it } from 'vitest';
import { formatIp, parseIp } from '../../../collector/pcap/ip-text.js';

describe('address text', () => {
  it('formats and parses IPv4, IPv6 and IPv4-mapped addresses', () => {
    for (const a of [
      '0.0.0.0',
      '255.255.255.255',
      '::',
      '::1',
      '2001:db8::',
      'fe80::1:2',
      '2001:db8:0:1:1:1:1:1',
      '::ffff:10.0.0.1',
      '1:0:0:1::1',
    ]) {
      expect(formatIp(parseIp(a))).toBe(a);
    }
    expect(formatIp(parseIp('2001:0db8:0000:0000:0000:0000:0000:0001'))).toBe('2001:db8::1');
    for (const bad of ['1.2.3', '256.1.1.1', '1::2::3', 'g::1', '1:2:3:4:5:6:7']) expect(() => parseIp(bad)).toThrow(RangeError);
  });
});
