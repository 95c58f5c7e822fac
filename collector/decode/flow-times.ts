/** Flow times from the wire checked against the plausible window after a set is decoded. */

/**
 * Replaces flow times of rows [from, to) outside the plausible window (`minTimeMs` to
 * `receivedMs` + `maxFutureMs`; garbage, an unset clock, 0xFF…, NaN) by the export time, or by
 * the received time when the export time is outside it too; returns how many it replaced. The
 * rows stay, sorted and shown where they arrived. A pass of its own after a set's records
 * rather than code in each compiled decoder: that grew them past what V8 inlines into (measured).
 */
export function clampTimes(
  start: Float64Array,
  end: Float64Array,
  from: number,
  to: number,
  exportMs: number,
  receivedMs: number,
  limits: { readonly minTimeMs: number; readonly maxFutureMs: number },
): number {
  const tMin = limits.minTimeMs;
  const tMax = receivedMs + limits.maxFutureMs;
  const tClamp = exportMs >= tMin && exportMs <= tMax ? exportMs : receivedMs;
  let clamped = 0;
  for (let i = from; i < to; i++) {
    if (!(start[i]! >= tMin && start[i]! <= tMax)) {
      start[i] = tClamp;
      clamped++;
    }
    if (!(end[i]! >= tMin && end[i]! <= tMax)) {
      end[i] = tClamp;
      clamped++;
    }
  }
  return clamped;
}
