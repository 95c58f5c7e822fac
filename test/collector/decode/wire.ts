/**
 * Builders of NetFlow v9 and IPFIX datagrams for tests, written from the
 * RFC layouts (RFC 3954 §5, RFC 7011 §3) rather than from the decoder.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** Path of the vendor datagrams copied into fixtures/. */
export const VENDOR_DIR = fileURLToPath(new URL('../../../fixtures/netflow/vendors/', import.meta.url));

/** Reads one vendor datagram. */
export function vendor(name: string): Buffer {
  return readFileSync(VENDOR_DIR + name);
}

/** Big-endian unsigned integer of `bytes` bytes. */
export function uint(value: number | bigint, bytes: number): Buffer {
  const b = Buffer.alloc(bytes);
  let v = BigInt(value);
  for (let i = bytes - 1; i >= 0; i--) {
    b[i] = Number(v & 0xffn);
    v >>= 8n;
  }
  return b;
}

/** IPv4 text → 4 bytes. */
export function ipv4(text: string): Buffer {
  return Buffer.from(text.split('.').map(Number));
}

/** A field specifier: [id, length] or [id, length, enterprise]. */
export type Spec = [number, number] | [number, number, number];

/** A set/flowset: id, length, body, padded to 4 bytes when `pad`. */
export function set(id: number, body: Buffer, pad = true): Buffer {
  const padding = pad ? (4 - ((body.length + 4) % 4)) % 4 : 0;
  return Buffer.concat([uint(id, 2), uint(body.length + 4 + padding, 2), body, Buffer.alloc(padding)]);
}

/** v9 template flowset body for several templates. */
export function v9Templates(...templates: { id: number; fields: Spec[] }[]): Buffer {
  const parts: Buffer[] = [];
  for (const t of templates) {
    parts.push(uint(t.id, 2), uint(t.fields.length, 2));
    for (const [id, len] of t.fields) parts.push(uint(id, 2), uint(len, 2));
  }
  return set(0, Buffer.concat(parts));
}

/** v9 options template flowset. */
export function v9OptionsTemplate(id: number, scope: Spec[], options: Spec[]): Buffer {
  const parts: Buffer[] = [uint(id, 2), uint(scope.length * 4, 2), uint(options.length * 4, 2)];
  for (const [t, l] of [...scope, ...options]) parts.push(uint(t, 2), uint(l, 2));
  return set(1, Buffer.concat(parts));
}

/** v9 datagram: header (count = number of records given by the caller) and flowsets. */
export function v9Packet(
  h: { uptimeMs: number; unixSecs: number; sequence?: number; sourceId?: number; count?: number },
  ...flowsets: Buffer[]
): Buffer {
  return Buffer.concat([
    uint(9, 2),
    uint(h.count ?? 0, 2),
    uint(h.uptimeMs, 4),
    uint(h.unixSecs, 4),
    uint(h.sequence ?? 0, 4),
    uint(h.sourceId ?? 0, 4),
    ...flowsets,
  ]);
}

/** IPFIX template record (set 2), or options template (set 3) when scopeCount is given. */
export function ipfixTemplateRecord(id: number, fields: Spec[], scopeCount?: number): Buffer {
  const parts: Buffer[] = [uint(id, 2), uint(fields.length, 2)];
  if (scopeCount !== undefined) parts.push(uint(scopeCount, 2));
  for (const [fid, len, pen] of fields) {
    if (pen === undefined) parts.push(uint(fid, 2), uint(len, 2));
    else parts.push(uint(fid | 0x8000, 2), uint(len, 2), uint(pen, 4));
  }
  return Buffer.concat(parts);
}

/** IPFIX message with a correct length field. */
export function ipfixMessage(h: { exportSecs: number; sequence?: number; domain?: number }, ...sets: Buffer[]): Buffer {
  const body = Buffer.concat(sets);
  return Buffer.concat([
    uint(10, 2),
    uint(16 + body.length, 2),
    uint(h.exportSecs, 4),
    uint(h.sequence ?? 0, 4),
    uint(h.domain ?? 0, 4),
    body,
  ]);
}

/** IPFIX variable-length value (1-byte length, or 255 + 2-byte length). */
export function varField(value: Buffer): Buffer {
  return value.length < 255
    ? Buffer.concat([uint(value.length, 1), value])
    : Buffer.concat([uint(255, 1), uint(value.length, 2), value]);
}
