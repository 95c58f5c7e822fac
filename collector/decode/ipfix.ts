/**
 * IPFIX (RFC 7011).
 *
 * ```
 * header (16): version 10 | length | exportTime (s) | sequence | observationDomainId
 * set:         id (2) | length (2, includes these 4 bytes) | records, then padding
 *   id 2     templates:          { templateId, fieldCount, fieldCount × specifier }…
 *   id 3     options templates:  { templateId, fieldCount, scopeFieldCount, specifiers }…
 *   id ≥ 256 data set:           records laid out by template `id`
 * specifier:   E|elementId (2) | length (2, 65535 = variable) | [enterprise (4) when E]
 * variable:    length (1), or 255 then length (2), then the value
 * withdrawal:  a template record with fieldCount 0; template id 2 (set 2) or 3
 *              (set 3) withdraws every template of that kind
 * ```
 * The sequence number counts data records per observation domain, so the
 * next message's is this one's plus the data records in it.
 */
import { trackSequence, type DecodeEnv } from './decode-env.js';
import { handleDataSet, type SetHeader } from './data-sets.js';
import type { FlowBatch } from '../../common/flow-batch.js';
import { refreshTemplate, storeTemplate } from './netflow-v9.js';
import type { DomainState, Template, TemplateField } from './template-cache.js';

/** Bytes in the IPFIX message header. */
export const IPFIX_HEADER_LENGTH = 16;

const SET_TEMPLATE = 2;
const SET_OPTIONS_TEMPLATE = 3;

/** Decodes one IPFIX message into `out`; false when it is malformed (the caller takes back any rows). */
export function decodeIpfix(buf: Buffer, env: DecodeEnv, out: FlowBatch): boolean {
  if (buf.length < IPFIX_HEADER_LENGTH) return false;
  const length = buf.readUInt16BE(2);
  if (length < IPFIX_HEADER_LENGTH || length > buf.length) return false;
  const domain = env.templates.domain(env.exporter.address, 10, buf.readUInt32BE(12), env.receivedMs);
  // The header is whole: its sequence is checked now, and the expectation
  // resyncs (record count unknown) until the message decodes completely, so
  // a malformed message never makes the next one count a false gap.
  trackSequence(domain, buf.readUInt32BE(8), -1, env);
  // The sets must tile the message exactly (RFC 7011 §3.3.1).
  for (let p = IPFIX_HEADER_LENGTH; p < length;) {
    if (length - p < 4) return false;
    const len = buf.readUInt16BE(p + 2);
    if (len < 4 || len > length - p) return false;
    p += len;
  }
  const header: SetHeader = {
    exportMs: buf.readUInt32BE(4) * 1000,
    sysUptimeMs: 0,
    exporter: env.exporter.bytes16,
    receivedMs: env.receivedMs,
  };
  let records = 0;
  for (let p = IPFIX_HEADER_LENGTH; p < length;) {
    const id = buf.readUInt16BE(p);
    const setEnd = p + buf.readUInt16BE(p + 2);
    const bodyStart = p + 4;
    if (id === SET_TEMPLATE || id === SET_OPTIONS_TEMPLATE) {
      if (!readTemplateSet(buf, bodyStart, setEnd, id === SET_OPTIONS_TEMPLATE, domain, env, out)) return false;
    } else if (id >= 256) {
      const t = env.templates.get(domain, id, env.receivedMs);
      const n = handleDataSet(t, domain, id, buf, bodyStart, setEnd, header, env, out);
      if (n === -1) return false;
      // A held set's record count is unknown, so the sequence cannot be followed past it.
      records = n === -2 || records < 0 ? -1 : records + n;
    } else {
      // Set ids 0, 1 (v9's) and 4–255 are not IPFIX data: skipped by their length, and counted.
      env.counters.add(env.exporterCounters, 'setsReserved');
    }
    p = setEnd;
  }
  trackSequence(domain, buf.readUInt32BE(8), records, env);
  return true;
}

function readTemplateSet(
  buf: Buffer,
  p: number,
  end: number,
  options: boolean,
  domain: DomainState,
  env: DecodeEnv,
  out: FlowBatch,
): boolean {
  // Shortest template record: id + field count (a withdrawal); anything
  // shorter at the end is padding.
  while (end - p >= 4) {
    const id = buf.readUInt16BE(p);
    const count = buf.readUInt16BE(p + 2);
    p += 4;
    if (count === 0) {
      if (id === 0) return true; // zero padding
      withdraw(domain, id, options, env);
      continue;
    }
    if (id < 256) return false;
    let scopeCount = 0;
    if (options) {
      if (end - p < 2) return false;
      scopeCount = buf.readUInt16BE(p);
      p += 2;
      if (scopeCount > count) return false;
    }
    // A template repeated with the layout already stored is refreshed without building its fields again.
    const known = domain.templates.get(id);
    const after = known === undefined ? -1 : sameFieldsEnd(known, options, scopeCount, buf, p, end, count);
    if (after >= 0) {
      refreshTemplate(known!, domain, env, out);
      p = after;
      continue;
    }
    if (count > env.templates.limits.maxFieldsPerTemplate) {
      // Refused without building its fields: walked only to find where it ends.
      for (let k = 0; k < count; k++) {
        if (end - p < 4) return false;
        const enterprise = buf.readUInt16BE(p) & 0x8000;
        p += enterprise ? 8 : 4;
      }
      if (p > end) return false;
      env.templates.refuse(domain, id);
      continue;
    }
    const fields: TemplateField[] = [];
    for (let k = 0; k < count; k++) {
      if (end - p < 4) return false;
      const raw = buf.readUInt16BE(p);
      const length = buf.readUInt16BE(p + 2);
      p += 4;
      let enterprise = 0;
      if (raw & 0x8000) {
        if (end - p < 4) return false;
        enterprise = buf.readUInt32BE(p);
        p += 4;
      }
      fields.push({ id: raw & 0x7fff, length, enterprise });
    }
    storeTemplate(domain, id, options, scopeCount, fields, env, out);
  }
  return true;
}

/**
 * Where the `count` field specifiers at `buf[p]` end when they are exactly
 * the layout of stored template `t` (same kind and scope count); -1 when
 * they differ or overrun `end` (then they are parsed, and checked, as new).
 */
function sameFieldsEnd(
  t: Template,
  options: boolean,
  scopeCount: number,
  buf: Buffer,
  p: number,
  end: number,
  count: number,
): number {
  if (t.options !== options || t.scopeCount !== scopeCount || t.fields.length !== count) return -1;
  for (let k = 0; k < count; k++) {
    if (end - p < 4) return -1;
    const f = t.fields[k]!;
    const raw = buf.readUInt16BE(p);
    if (f.id !== (raw & 0x7fff) || f.length !== buf.readUInt16BE(p + 2)) return -1;
    p += 4;
    if (raw & 0x8000) {
      if (end - p < 4 || f.enterprise !== buf.readUInt32BE(p)) return -1;
      p += 4;
    } else if (f.enterprise !== 0) return -1;
  }
  return p;
}

function withdraw(domain: DomainState, id: number, options: boolean, env: DecodeEnv): void {
  let n: number;
  if (id === (options ? SET_OPTIONS_TEMPLATE : SET_TEMPLATE)) n = env.templates.withdrawAll(domain, options);
  else n = env.templates.withdraw(domain, id) ? 1 : 0;
  if (n > 0) env.counters.add(env.exporterCounters, 'templatesWithdrawn', n);
}
