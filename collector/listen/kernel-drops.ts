/**
 * Datagrams the kernel dropped on a UDP socket because its receive buffer
 * was full: the loss no counter of ours can see, since those datagrams never
 * reach the process. Linux keeps the count per socket in the last column
 * ("drops") of /proc/net/udp and /proc/net/udp6; other systems report none.
 */
import { readFileSync } from 'node:fs';
import { endianness } from 'node:os';
import ipaddr from 'ipaddr.js';

/** Drop counts of the machine's UDP sockets, keyed by `address|port` (address as ipaddr.js prints it). */
export type UdpDropTable = ReadonlyMap<string, number>;

/** Reads a /proc table; a missing file (not Linux) reads as empty. */
export type ProcReader = (path: string) => string | undefined;

const readProc: ProcReader = (path) => {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
};

/** The address of a /proc/net/udp{,6} `local_address` hex field: 32-bit words in the host's byte order. */
function procAddress(hex: string, little: boolean): string | undefined {
  if (hex.length !== 8 && hex.length !== 32) return undefined;
  const bytes: number[] = [];
  for (let w = 0; w < hex.length; w += 8) {
    const word = [0, 2, 4, 6].map((i) => parseInt(hex.slice(w + i, w + i + 2), 16));
    if (word.some(Number.isNaN)) return undefined;
    bytes.push(...(little ? word.reverse() : word));
  }
  return ipaddr.fromByteArray(bytes).toString();
}

/** Parses the tables; lines that do not parse are passed over. */
export function parseUdpDrops(tables: ReadonlyArray<string | undefined>, little = endianness() === 'LE'): UdpDropTable {
  const out = new Map<string, number>();
  for (const text of tables) {
    if (!text) continue;
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length < 13) continue;
      const [addrHex, portHex] = f[1]!.split(':');
      const address = addrHex === undefined ? undefined : procAddress(addrHex, little);
      const port = parseInt(portHex ?? '', 16);
      const drops = Number(f[f.length - 1]);
      if (address === undefined || !Number.isInteger(port) || !Number.isFinite(drops)) continue;
      const key = `${address}|${port}`;
      out.set(key, (out.get(key) ?? 0) + drops);
    }
  }
  return out;
}

/** The machine's UDP drop counts now (empty where /proc/net/udp does not exist). */
export function readUdpDrops(read: ProcReader = readProc): UdpDropTable {
  return parseUdpDrops([read('/proc/net/udp'), read('/proc/net/udp6')]);
}

/** Kernel drops of the socket bound to `address`:`port`, or undefined when the table has no such socket. */
export function dropsOf(table: UdpDropTable, address: string, port: number): number | undefined {
  let key: string;
  try {
    key = `${ipaddr.parse(address.replace(/%.*$/, '')).toString()}|${port}`;
  } catch {
    return undefined;
  }
  return table.get(key);
}
