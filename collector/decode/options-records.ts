/**
 * Options data records (sampling, system init time): rare, so read by a
 * plain interpreter rather than a compiled decoder (record-decoder.ts).
 */
import { IE, VARIABLE_LENGTH } from './ie-registry.js';
import { minRecordLength } from './template-roles.js';
import type { TemplateField } from './template-cache.js';

/** One options data record's fields that matter: unsigned values by element id (IANA only). */
export type OptionsValues = Map<number, number>;

const OPTION_IDS = new Set<number>([
  IE.samplingInterval,
  IE.samplingAlgorithm,
  IE.samplerId,
  IE.samplerMode,
  IE.samplerRandomInterval,
  IE.selectorId,
  IE.selectorAlgorithm,
  IE.samplingPacketInterval,
  IE.samplingPacketSpace,
  IE.samplingTimeInterval,
  IE.samplingTimeSpace,
  IE.samplingSize,
  IE.samplingPopulation,
  IE.samplingProbability,
  IE.systemInitTimeMilliseconds,
]);

/**
 * Walks the options data records of one set, calling `onRecord` with the
 * sampling-related values of each (the first `skipScope` fields are not
 * read); returns records read, or -1 when a record overruns the set.
 */
export function walkOptionsRecords(
  b: Buffer,
  p: number,
  end: number,
  fields: readonly TemplateField[],
  skipScope: number,
  onRecord: (values: OptionsValues) => void,
): number {
  const minLength = minRecordLength(fields);
  if (minLength === 0) return 0;
  let n = 0;
  while (end - p >= minLength) {
    const values: OptionsValues = new Map();
    for (let i = 0; i < fields.length; i++) {
      const f = fields[i]!;
      let l = f.length;
      if (l === VARIABLE_LENGTH) {
        if (p >= end) return -1;
        l = b[p++]!;
        if (l === 255) {
          if (p + 2 > end) return -1;
          l = (b[p]! << 8) | b[p + 1]!;
          p += 2;
        }
      }
      if (p + l > end) return -1;
      if (i >= skipScope && f.enterprise === 0 && l >= 1 && l <= 8 && OPTION_IDS.has(f.id)) {
        if (f.id === IE.samplingProbability) {
          // float64, or float32 in reduced-size encoding (RFC 7011 §6.2); other lengths are not a float.
          if (l === 8) values.set(f.id, b.readDoubleBE(p));
          else if (l === 4) values.set(f.id, b.readFloatBE(p));
        } else {
          let v = 0;
          for (let k = 0; k < l; k++) v = v * 256 + b[p + k]!;
          values.set(f.id, v);
        }
      }
      p += l;
    }
    n++;
    onRecord(values);
  }
  return n;
}
