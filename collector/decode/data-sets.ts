/**
 * What NetFlow v9 and IPFIX share once a set's header has been read:
 * decoding a data set with its template (or holding it until the template
 * comes), reading options data, and releasing held data when a template
 * arrives.
 */
import type { DecodeEnv } from './decode-env.js';
import type { FlowBatch } from '../../common/flow-batch.js';
import { IE } from './ie-registry.js';
import { clampTimes } from './flow-times.js';
import { walkOptionsRecords, type OptionsValues } from './options-records.js';
import { compiledFor, type RecordContext, type UptimeBase } from './record-decoder.js';
import { domainInterval, learnSampling, selectorInterval } from './sampling.js';
import type { PendingSet } from './pending-buffer.js';
import type { DomainState, Template } from './template-cache.js';

/**
 * Where a data set came from: its datagram's header facts, exporter and
 * received time. A held set (PendingSet) carries the same fields. Passed as
 * one object: a received time (ms since epoch, not a small integer) passed
 * as an argument is boxed by V8 on every call, i.e. per data set.
 */
export interface SetHeader {
  readonly exportMs: number;
  /** v9 sysUptime (ms); 0 for IPFIX. */
  readonly sysUptimeMs: number;
  /** Exporter address, 16 bytes (IPv4-mapped for IPv4). */
  readonly exporter: Uint8Array;
  readonly receivedMs: number;
}

// One context reused for every set: the decoders are synchronous and never
// re-entered, so this saves an allocation per set.
const ctx: RecordContext = {
  exporter: new Uint8Array(16),
  receivedMs: 0,
  exportMs: 0,
  sysUptimeMs: 0,
  sysInitMs: Number.NaN,
  interval: 1,
  override: 0,
  samplers: new Map(),
  maxInterval: 0,
  refused: 0,
  reverseRows: 0,
  sectionsUnreadable: 0,
};

/**
 * Decodes the data records of one set with template `t`; returns records
 * read (flows and options records alike, for IPFIX sequence numbers) or -1
 * when a record overruns the set.
 */
export function decodeWithTemplate(
  t: Template,
  domain: DomainState,
  b: Buffer,
  p: number,
  end: number,
  header: SetHeader,
  env: DecodeEnv,
  out: FlowBatch,
): number {
  if (t.options) {
    // v9 scope field types (System, Interface…) are not IANA elements;
    // IPFIX scope fields are, and Cisco puts the sampler id there.
    const skipScope = domain.version === 9 ? t.scopeCount : 0;
    let refused = 0;
    const maxInterval = env.limits.maxSamplingInterval;
    const n = walkOptionsRecords(b, p, end, t.fields, skipScope, (v) => {
      if (applyOptions(domain, v, maxInterval) === 'refused') refused++;
    });
    if (n > 0) env.counters.add(env.exporterCounters, 'optionsRecords', n);
    if (refused > 0) env.counters.add(env.exporterCounters, 'samplingRefused', refused);
    return n;
  }
  const base: UptimeBase = domain.version === 9 ? 'header' : 'systemInit';
  const compiled = compiledFor(t, base);
  ctx.exporter = header.exporter;
  ctx.receivedMs = header.receivedMs;
  ctx.exportMs = header.exportMs;
  ctx.sysUptimeMs = header.sysUptimeMs;
  ctx.sysInitMs = domain.systemInitMs;
  // A record naming a sampler the options data did not announce takes the domain-wide interval
  // only; the domain's lone sampler stands in for records that name none.
  ctx.interval = compiled.namesSampler ? domain.defaultInterval || 1 : domainInterval(domain);
  ctx.override = env.overrideInterval;
  ctx.samplers = domain.samplers;
  ctx.maxInterval = env.limits.maxSamplingInterval;
  ctx.refused = 0;
  ctx.reverseRows = 0;
  ctx.sectionsUnreadable = 0;
  const before = out.length;
  const n = compiled.decode(b, p, end, out, ctx);
  if (n > 0) {
    // A record counts under one of these at most: not a flow (the whole set), kept without an
    // address (the whole set), dropped for an unreadable packet section; else it is a flow.
    if (compiled.kind === 'none') env.counters.add(env.exporterCounters, 'recordsNotFlows', n);
    else if (compiled.kind === 'addressless') env.counters.add(env.exporterCounters, 'recordsWithoutAddress', n);
    if (ctx.sectionsUnreadable > 0) env.counters.add(env.exporterCounters, 'sectionsUnreadable', ctx.sectionsUnreadable);
    // Reverse rows are rows, not records: tallied here and counted (reverseFlows) by the caller
    // once the datagram is known whole, since a malformed one takes its rows back (decoder.ts).
    env.reverseRows += ctx.reverseRows;
    // The plausible window is anchored on the received time (the decoders read no clock).
    const clamped = clampTimes(out.cols.start, out.cols.end, before, out.length, header.exportMs, header.receivedMs, env.limits);
    if (clamped > 0) env.counters.add(env.exporterCounters, 'timestampsClamped', clamped);
  }
  if (ctx.refused > 0) env.counters.add(env.exporterCounters, 'samplingRefused', ctx.refused);
  return n;
}

/**
 * Takes in what one options data record says about sampling and time. An interval above
 * `maxInterval` is refused: not learnt, so the domain's previous interval (1 if none) stays
 * in force; returns `refused` then, for the caller to count.
 */
export function applyOptions(domain: DomainState, v: OptionsValues, maxInterval: number): 'refused' | undefined {
  const init = v.get(IE.systemInitTimeMilliseconds);
  if (init !== undefined) domain.systemInitMs = init;
  let interval = v.get(IE.samplingInterval) ?? v.get(IE.samplerRandomInterval) ?? Number.NaN;
  if (!(interval >= 1)) {
    const nan = Number.NaN;
    interval = selectorInterval(
      v.get(IE.samplingPacketInterval) ?? nan,
      v.get(IE.samplingPacketSpace) ?? nan,
      v.get(IE.samplingSize) ?? nan,
      v.get(IE.samplingPopulation) ?? nan,
      v.get(IE.samplingProbability) ?? nan,
      v.get(IE.samplingTimeInterval) ?? nan,
      v.get(IE.samplingTimeSpace) ?? nan,
    );
  }
  if (!(interval >= 1)) return undefined;
  if (interval > maxInterval) return 'refused';
  const samplerId = v.get(IE.samplerId) ?? v.get(IE.selectorId) ?? Number.NaN;
  learnSampling(domain, { samplerId, interval });
  return undefined;
}

/**
 * Handles a data set whose template is `t` (undefined = not known yet, so
 * the set is held). Returns records read, -1 when malformed, or -2 when
 * held (record count unknown).
 */
export function handleDataSet(
  t: Template | undefined,
  domain: DomainState,
  templateId: number,
  b: Buffer,
  p: number,
  end: number,
  header: SetHeader,
  env: DecodeEnv,
  out: FlowBatch,
): number {
  if (t !== undefined) {
    return decodeWithTemplate(t, domain, b, p, end, header, env, out);
  }
  env.counters.add(env.exporterCounters, 'dataWithoutTemplate');
  const held: PendingSet = {
    domain,
    templateId,
    // A copy: the listener reuses its receive buffer. Bounded by the set length (< 64 KiB).
    body: Buffer.from(b.subarray(p, end)),
    exporter: env.exporter.bytes16,
    receivedMs: env.receivedMs,
    exportMs: header.exportMs,
    sysUptimeMs: header.sysUptimeMs,
  };
  env.counters.add(env.exporterCounters, 'pendingBuffered');
  for (const dropped of env.pending.hold(held)) {
    env.counters.add(env.counters.exporter(dropped.domain.address), 'pendingDropped');
  }
  return -2;
}

/** Decodes the held sets that were waiting for template `t` of `domain`. */
export function releasePending(t: Template, domain: DomainState, env: DecodeEnv, out: FlowBatch): void {
  for (const held of env.pending.take(domain, t.id)) {
    const ec = env.counters.exporter(domain.address);
    const before = out.length;
    const ownReverse = env.reverseRows;
    const n = decodeWithTemplate(t, domain, held.body, 0, held.body.length, held, env, out);
    // The held set's reverse rows are not the datagram's: whatever becomes of it, they are settled here.
    const reverse = env.reverseRows - ownReverse;
    env.reverseRows = ownReverse;
    if (n < 0) {
      if (out.length - before > reverse) env.counters.add(ec, 'recordsInMalformed', out.length - before - reverse);
      out.length = before;
      env.counters.add(ec, 'malformed');
    } else {
      if (reverse > 0) env.counters.add(ec, 'reverseFlows', reverse);
      env.counters.add(ec, 'pendingDecoded');
      // These rows belong to earlier datagrams: they stay even if this one turns out malformed.
      if (out.length > before) env.released.push(before, out.length);
    }
  }
}
