/**
 * Addresses that have no origin AS or country, whatever a table says: IANA's special-purpose
 * blocks that are not globally reachable (RFC 6890 and its registries: private, shared, loopback,
 * link-local, documentation, benchmarking, multicast, reserved), and for IPv6 everything outside
 * the global unicast 2000::/3. The shipped country table does map some of them (192.168.0.0/16
 * to AU, 2001:db8::/32 to JP), so the builders cut them out of every table, at no cost per lookup.
 */
import { v6Key } from './range-table.js';

function v4(cidr: string): readonly [number, number] {
  const [addr, len] = cidr.split('/') as [string, string];
  const start = addr.split('.').reduce((a, o) => a * 256 + Number(o), 0);
  return [start, start + 2 ** (32 - Number(len)) - 1];
}

/** Inclusive IPv4 ranges (host-order u32), sorted, disjoint. */
export const NOT_GLOBAL_V4: readonly (readonly [number, number])[] = [
  '0.0.0.0/8',
  '10.0.0.0/8',
  '100.64.0.0/10',
  '127.0.0.0/8',
  '169.254.0.0/16',
  '172.16.0.0/12',
  '192.0.0.0/24',
  '192.0.2.0/24',
  '192.88.99.0/24',
  '192.168.0.0/16',
  '198.18.0.0/15',
  '198.51.100.0/24',
  '203.0.113.0/24',
  '224.0.0.0/3', // multicast 224/4, reserved 240/4 and broadcast
].map(v4);

/** The key of the IPv6 address whose first groups are `head`, the rest `fill` (0 or 0xffff). */
function v6(head: number[], fill: number): string {
  const g = [...head, ...Array<number>(8 - head.length).fill(fill)];
  return v6Key(g);
}

/** Inclusive IPv6 ranges as `v6Key`s, sorted, disjoint. */
export const NOT_GLOBAL_V6: readonly (readonly [string, string])[] = [
  [v6([0x0000], 0), v6([0x1fff], 0xffff)], // below 2000::/3: unspecified, loopback, IPv4-mapped, NAT64, discard
  [v6([0x2001, 0x0db8], 0), v6([0x2001, 0x0db8], 0xffff)], // documentation 2001:db8::/32
  [v6([0x3fff, 0x0000], 0), v6([0x3fff, 0x0fff], 0xffff)], // documentation 3fff::/20 (RFC 9637)
  [v6([0x4000], 0), v6([0xffff], 0xffff)], // above 2000::/3: ULA fc00::/7, link-local fe80::/10, multicast ff00::/8
];
