import { describe, expect, it } from 'vitest';
import {
  countJson,
  formatDuration,
  formatFlowTime,
  formatIsoUtc,
  formatPorts,
  formatQueryMinute,
  formatTcpFlags,
  formatTraffic,
  parseQueryMinute,
  percent,
  protocolName,
  throughputMbps,
  verdict,
} from '../../../api/routes/netflow-format.js';
import { serviceName } from '../../../storage/kpi/iana-names.js';

describe('netflow value formats (decisions.md)', () => {
  it('writes volumes 1024-based with one decimal and no trailing .0', () => {
    expect(formatTraffic(181_500_000_000)).toBe('169 G');
    expect(formatTraffic(2.5 * 1024 ** 3)).toBe('2.5 G');
    expect(formatTraffic(17)).toBe('17 B');
    expect(formatTraffic(0)).toBe('0 B');
    expect(formatTraffic(1536)).toBe('1.5 K');
    expect(formatTraffic(1023.99 * 1024)).toBe('1 M'); // would round to "1024 K"
    expect(formatTraffic(3 * 1024 ** 5)).toBe('3 P');
  });

  it('computes throughput over the window and byte shares with two decimals', () => {
    expect(throughputMbps(450_000_000, 3_600_000)).toBe(1);
    expect(throughputMbps(1_000_000, 3_600_000)).toBe(0);
    expect(throughputMbps(123_456_789, 60_000)).toBe(16.46);
    expect(percent(1, 3)).toBe(33.33);
    expect(percent(2, 3)).toBe(66.67);
    expect(percent(5, 0)).toBe(0);
  });

  it('prints TCP flags in six positions UAPRSF as nfdump 1.6 does', () => {
    expect(formatTcpFlags(0x18, 6)).toBe('.AP...');
    expect(formatTcpFlags(0x04, 6)).toBe('...R..');
    expect(formatTcpFlags(0x3f, 6)).toBe('UAPRSF');
    expect(formatTcpFlags(0xc2, 6)).toBe('....S.'); // ECE/CWR are not among the six
    expect(formatTcpFlags(0x04, 17)).toBe('......');
  });

  it('denies RST without SYN only', () => {
    expect(verdict(0x14)).toBe('Deny');
    expect(verdict(0x06)).toBe('Allow');
    expect(verdict(0x18)).toBe('Allow');
  });

  it('shows ICMP ports as nfdump does and durations with three decimals', () => {
    expect(formatPorts(1, 0, 0x0800)).toEqual({ src_port: '0', dst_port: '8.0' });
    expect(formatPorts(58, 0, (135 << 8) | 0)).toEqual({ src_port: '0', dst_port: '135.0' });
    expect(formatPorts(6, 51234, 443)).toEqual({ src_port: '51234', dst_port: '443' });
    expect(formatDuration(1000, 2763)).toBe('1.763');
    expect(formatDuration(5000, 5000)).toBe('0.000');
  });

  it('reads and writes query minutes in the configured zone', () => {
    expect(parseQueryMinute('2026/03/25 09:00', 'UTC')).toBe(Date.parse('2026-03-25T09:00:00Z'));
    expect(parseQueryMinute('2026/03/25 09:00', 'Asia/Kolkata')).toBe(Date.parse('2026-03-25T03:30:00Z'));
    expect(parseQueryMinute('2026/02/30 09:00', 'UTC')).toBeUndefined();
    expect(parseQueryMinute('2026/3/25 9:00', 'UTC')).toBeUndefined();
    // The forms logviewer and hotspot take too: dashes in the zone, ISO 8601 with an offset converted;
    // seconds are dropped (windows are whole minutes).
    expect(parseQueryMinute('2026-03-25 09:00', 'Asia/Kolkata')).toBe(Date.parse('2026-03-25T03:30:00Z'));
    expect(parseQueryMinute('2026-03-25T09:00:59', 'UTC')).toBe(Date.parse('2026-03-25T09:00:00Z'));
    expect(parseQueryMinute('2026-03-25T09:00Z', 'Asia/Kolkata')).toBe(Date.parse('2026-03-25T09:00:00Z'));
    expect(parseQueryMinute('2026-03-25T14:30:15.5+05:30', 'UTC')).toBe(Date.parse('2026-03-25T09:00:00Z'));
    expect(parseQueryMinute('2026-03-25T09:00', 'UTC')).toBe(Date.parse('2026-03-25T09:00:00Z'));
    expect(parseQueryMinute('2026-13-01T09:00Z', 'UTC')).toBeUndefined();
    expect(parseQueryMinute('yesterday', 'UTC')).toBeUndefined();
    expect(formatQueryMinute(Date.parse('2026-03-25T03:30:00Z'), 'Asia/Kolkata')).toBe('2026/03/25 09:00');
    expect(formatFlowTime(Date.parse('2023-11-14T22:13:41.235Z'), 'UTC')).toBe('2023-11-14 22:13:41');
    expect(formatIsoUtc(Date.parse('2026-03-25T09:00:00Z'))).toBe('2026-03-25T09:00:00Z');
    // Across a DST change the wall clock jumps; each instant keeps its own offset.
    expect(formatFlowTime(Date.parse('2026-03-29T00:59:59Z'), 'Europe/Paris')).toBe('2026-03-29 01:59:59');
    expect(formatFlowTime(Date.parse('2026-03-29T01:00:00Z'), 'Europe/Paris')).toBe('2026-03-29 03:00:00');
    expect(formatQueryMinute(Date.parse('2026-10-25T00:30:00Z'), 'Europe/Paris')).toBe('2026/10/25 02:30');
    expect(formatQueryMinute(Date.parse('2026-10-25T01:30:00Z'), 'Europe/Paris')).toBe('2026/10/25 02:30');
  });

  it('names protocols and services from the IANA registries', () => {
    expect([1, 6, 17, 47, 50, 58, 112].map(protocolName)).toEqual(['ICMP', 'TCP', 'UDP', 'GRE', 'ESP', 'ICMPv6', 'VRRP']);
    expect(protocolName(132)).toBe('SCTP');
    expect(protocolName(2)).toBe('IGMP');
    expect(protocolName(253)).toBe('253');
    expect(serviceName(443)).toBe('https');
    expect(serviceName(53)).toBe('domain');
    expect(serviceName(123)).toBe('ntp');
    expect(serviceName(47_999)).toBe('');
  });

  it('keeps absurd values sane: exact counts as digit strings above 2^53, units past P, no NaN in times and durations', () => {
    expect(countJson(1500)).toBe(1500);
    expect(countJson(2 ** 53 - 1)).toBe(9_007_199_254_740_991);
    expect(countJson(2 ** 64)).toBe('18446744073709551616');
    expect(countJson(2n ** 64n - 1n)).toBe('18446744073709551615');
    expect(countJson(6.195e30)).toMatch(/^6195\d{27}$/);
    expect(countJson(Number.NaN)).toBe(0);
    expect(formatTraffic(2 ** 64)).toBe('16 E');
    expect(formatTraffic(6.195e30)).toBe('5124383.9 Y');
    expect(formatTraffic(Number.NaN)).toBe('0 B');
    expect(formatFlowTime(1.8446744073709552e19, 'UTC')).not.toMatch(/NaN/);
    expect(formatFlowTime(Number.NaN, 'Europe/Paris')).toBe('1970-01-01 01:00:00');
    expect(formatDuration(0, 1.8446744073709552e22)).toBe('0.000');
    expect(formatDuration(Number.NaN, 5)).toBe('0.000');
  });
});
