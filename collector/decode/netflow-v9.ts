/**
 * NetFlow v9 (RFC 3954).
 *
 * ```
 * header (20): version 9 | count | sysUptime (ms) | unixSecs | sequence | sourceId
 * flowset:     id (2) | length (2, includes these 4 bytes) | body, padded to 4
 *   id 0     template flowset:   { templateId, fieldCount, fieldCount × (type, length) }…
 *   id 1     options templates:  { templateId, scopeLength, optionLength, scope fields, option fields }…
 *   id ≥ 256 data flowset:       records laid out by template `id`, then padding
 * ```
 * The sequence number counts export packets per source id; record times
 * (FIRST/LAST_SWITCHED) are sysUptime values, turned absolute with the
 * header's unixSecs and sysUptime.
 */
import { trackSequence, type DecodeEnv } from './decode-env.js';
import { handleDataSet, releasePending, type SetHeader } from './data-sets.js';
import type { FlowBatch } from '../../common/flow-batch.js';
import type { DomainState, Template, TemplateField } from './template-cache.js';

/** Bytes in the v9 header. */
export const V9_HEADER_LENGTH = 20;

/** Decodes one v9 datagram into `out`; false when it is malformed (the caller takes back any rows). */
export function decodeV9(buf: Buffer, env: DecodeEnv, out: FlowBatch): boolean {
  if (buf.length < V9_HEADER_LENGTH) return false;
  const domain = env.templates.domain(env.exporter.address, 9, buf.readUInt32BE(16), env.receivedMs);
  // The header is whole, so the packet counts in the sequence even when its
  // flowsets turn out malformed: else the next packet would count a false gap.
  trackSequence(domain, buf.readUInt32BE(12), 1, env);
  const end = flowsetsEnd(buf);
  if (end < 0) return false;
  const header: SetHeader = {
    exportMs: buf.readUInt32BE(8) * 1000,
    sysUptimeMs: buf.readUInt32BE(4),
    exporter: env.exporter.bytes16,
    receivedMs: env.receivedMs,
  };
  for (let p = V9_HEADER_LENGTH; p < end;) {
    const id = buf.readUInt16BE(p);
    const len = buf.readUInt16BE(p + 2);
    const bodyStart = p + 4;
    const setEnd = p + len;
    if (id === 0) {
      if (!readTemplates(buf, bodyStart, setEnd, domain, env, out)) return false;
    } else if (id === 1) {
      if (!readOptionsTemplates(buf, bodyStart, setEnd, domain, env, out)) return false;
    } else if (id >= 256) {
      const t = env.templates.get(domain, id, env.receivedMs);
      if (handleDataSet(t, domain, id, buf, bodyStart, setEnd, header, env, out) === -1) return false;
    } else {
      // ids 2–255 are reserved: skipped by their length, and counted (whatever they hold is not read).
      env.counters.add(env.exporterCounters, 'setsReserved');
    }
    p = setEnd;
  }
  return true;
}

/**
 * Checks that the flowset lengths tile the datagram; returns where the
 * flowsets end, or -1 when one overruns it. A zero length, or fewer than 4
 * bytes left, ends the walk: some exporters send their datagrams zero-filled
 * to a fixed size.
 */
function flowsetsEnd(buf: Buffer): number {
  let p = V9_HEADER_LENGTH;
  while (buf.length - p >= 4) {
    const len = buf.readUInt16BE(p + 2);
    if (len === 0) return p;
    if (len < 4 || len > buf.length - p) return -1;
    p += len;
  }
  return p;
}

function readTemplates(buf: Buffer, p: number, end: number, domain: DomainState, env: DecodeEnv, out: FlowBatch): boolean {
  while (end - p >= 4) {
    const id = buf.readUInt16BE(p);
    const count = buf.readUInt16BE(p + 2);
    if (id === 0 && count === 0) return true; // zero padding
    p += 4;
    if (id < 256 || count * 4 > end - p) return false;
    if (count > env.templates.limits.maxFieldsPerTemplate) {
      env.templates.refuse(domain, id);
      p += count * 4;
      continue;
    }
    // Most exporters repeat their templates in datagram after datagram: one already stored
    // with this layout is refreshed without building its fields again.
    const known = domain.templates.get(id);
    if (known !== undefined && sameFields(known, buf, p, count)) {
      refreshTemplate(known, domain, env, out);
      p += count * 4;
      continue;
    }
    const fields: TemplateField[] = [];
    for (let k = 0; k < count; k++, p += 4) {
      fields.push({ id: buf.readUInt16BE(p), length: buf.readUInt16BE(p + 2), enterprise: 0 });
    }
    storeTemplate(domain, id, false, 0, fields, env, out);
  }
  return true;
}

function readOptionsTemplates(buf: Buffer, p: number, end: number, domain: DomainState, env: DecodeEnv, out: FlowBatch): boolean {
  while (end - p >= 6) {
    const id = buf.readUInt16BE(p);
    const scopeLength = buf.readUInt16BE(p + 2);
    const optionLength = buf.readUInt16BE(p + 4);
    if (id === 0) return true; // zero padding
    p += 6;
    if (id < 256 || scopeLength + optionLength > end - p) return false;
    const fields: TemplateField[] = [];
    // Lengths are in bytes; a length that is not a multiple of 4 leaves a
    // tail that is not a whole field specifier, which is skipped.
    const scopeCount = scopeLength >>> 2;
    const optionCount = optionLength >>> 2;
    if (scopeCount + optionCount > env.templates.limits.maxFieldsPerTemplate) {
      env.templates.refuse(domain, id);
      p += scopeLength + optionLength;
      continue;
    }
    for (let k = 0; k < scopeCount; k++) {
      fields.push({ id: buf.readUInt16BE(p + k * 4), length: buf.readUInt16BE(p + k * 4 + 2), enterprise: 0 });
    }
    const q = p + scopeLength;
    for (let k = 0; k < optionCount; k++) {
      fields.push({ id: buf.readUInt16BE(q + k * 4), length: buf.readUInt16BE(q + k * 4 + 2), enterprise: 0 });
    }
    p = q + optionLength;
    storeTemplate(domain, id, true, scopeCount, fields, env, out);
  }
  return true;
}

/** True when `t` is a data template whose fields are the `count` v9 specifiers (type, length) at `buf[p]`. */
function sameFields(t: Template, buf: Buffer, p: number, count: number): boolean {
  if (t.options || t.fields.length !== count) return false;
  for (let k = 0; k < count; k++, p += 4) {
    const f = t.fields[k]!;
    if (f.enterprise !== 0 || f.id !== buf.readUInt16BE(p) || f.length !== buf.readUInt16BE(p + 2)) return false;
  }
  return true;
}

/** A re-announcement of stored template `t` with the same layout: refreshed (as `storeTemplate` would), held data released. */
export function refreshTemplate(t: Template, domain: DomainState, env: DecodeEnv, out: FlowBatch): void {
  env.templates.refresh(t, env.receivedMs);
  releasePending(t, domain, env, out);
}

/** Stores a template, counts what changed, and decodes data that was waiting for it. */
export function storeTemplate(
  domain: DomainState,
  id: number,
  options: boolean,
  scopeCount: number,
  fields: TemplateField[],
  env: DecodeEnv,
  out: FlowBatch,
): void {
  const change = env.templates.set(domain, id, options, scopeCount, fields, env.receivedMs);
  if (change === 'added') env.counters.add(env.exporterCounters, 'templatesAdded');
  else if (change === 'updated') env.counters.add(env.exporterCounters, 'templatesUpdated');
  const t = domain.templates.get(id);
  if (t !== undefined) releasePending(t, domain, env, out);
}
