/**
 * A tiny authoritative DNS server on 127.0.0.1 for tests: answers PTR
 * questions from a table, NXDOMAIN for names it does not know, and nothing
 * at all for names (or, when `silent`, every name) it is told to ignore.
 */
import { createSocket, type Socket } from 'node:dgram';
import type { AddressInfo } from 'node:net';
import { ptrName } from '../../storage/dns/cached-reverse-dns.js';

export { ptrName };

/** A running test DNS server. */
export interface TestDnsServer {
  /** `127.0.0.1:PORT`, for Resolver.setServers. */
  address: string;
  /** Questions received, by PTR name (`4.3.2.1.in-addr.arpa`). */
  queries: Map<string, number>;
  /** When true, no question gets an answer (a dead resolver). */
  silent: boolean;
  close(): Promise<void>;
}

function readName(msg: Buffer, offset: number): { name: string; end: number } {
  const labels: string[] = [];
  let o = offset;
  while (o < msg.length && msg[o] !== 0) {
    const len = msg[o]!;
    labels.push(msg.subarray(o + 1, o + 1 + len).toString('latin1'));
    o += 1 + len;
  }
  return { name: labels.join('.').toLowerCase(), end: o + 1 };
}

function encodeName(name: string): Buffer {
  const parts = name
    .split('.')
    .filter(Boolean)
    .map((l) => Buffer.concat([Buffer.from([l.length]), Buffer.from(l, 'latin1')]));
  return Buffer.concat([...parts, Buffer.from([0])]);
}

/** Starts the server; `ptr` maps addresses to names, `ignore` lists addresses never answered. */
export async function startDnsServer(ptr: Record<string, string>, ignore: string[] = []): Promise<TestDnsServer> {
  const table = new Map(Object.entries(ptr).map(([ip, name]) => [ptrName(ip), name]));
  const ignored = new Set(ignore.map(ptrName));
  const socket: Socket = createSocket('udp4');
  const server: TestDnsServer = {
    address: '',
    queries: new Map(),
    silent: false,
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
  socket.on('message', (msg, rinfo) => {
    if (msg.length < 12) return;
    const { name, end } = readName(msg, 12);
    const qtype = msg.readUInt16BE(end);
    server.queries.set(name, (server.queries.get(name) ?? 0) + 1);
    if (server.silent || ignored.has(name)) return;
    const question = msg.subarray(12, end + 4);
    const answerName = qtype === 12 ? table.get(name) : undefined;
    const header = Buffer.alloc(12);
    msg.copy(header, 0, 0, 2); // id
    // QR, opcode 0, AA, RD copied; RA; RCODE 0 or 3 (NXDOMAIN).
    header.writeUInt16BE(0x8400 | (msg.readUInt16BE(2) & 0x0100) | 0x0080 | (answerName ? 0 : 3), 2);
    header.writeUInt16BE(1, 4);
    header.writeUInt16BE(answerName ? 1 : 0, 6);
    const parts: Buffer[] = [header, question];
    if (answerName) {
      const rdata = encodeName(answerName);
      const rr = Buffer.alloc(12);
      rr.writeUInt16BE(0xc00c, 0); // pointer to the question name
      rr.writeUInt16BE(12, 2); // PTR
      rr.writeUInt16BE(1, 4); // IN
      rr.writeUInt32BE(300, 6);
      rr.writeUInt16BE(rdata.length, 10);
      parts.push(rr, rdata);
    }
    socket.send(Buffer.concat(parts), rinfo.port, rinfo.address);
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  server.address = `127.0.0.1:${(socket.address() as AddressInfo).port}`;
  return server;
}
