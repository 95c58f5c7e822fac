/**
 * Names and hours of capture files: where a source's files live, what each
 * name says (sealed, open, being sealed) and the hour it covers in the
 * configured time zone. The bytes inside the files are format.ts's.
 */
import { DateTime } from 'luxon';
import { INTERVAL_SEC } from './format.js';

const SEALED_RE = /^nfcapd\.(\d{12})$/;
const CURRENT_RE = /^nfcapd\.current\.(\d{12})$/;
const SEALING_RE = /^nfcapd\.sealing\.(\d{12})$/;

/** Start of the hour (in `zone`) holding instant `ms`, as ms since epoch. */
export function hourStartOf(ms: number, zone: string): number {
  return DateTime.fromMillis(ms, { zone }).startOf('hour').toMillis();
}

/** End (exclusive) of the hour starting at `hourStart`; 3600 s later, whatever DST does. */
export function hourEndOf(hourStart: number): number {
  return hourStart + INTERVAL_SEC * 1000;
}

/** `YYYYMMDDHHmm` of an instant in `zone`, as nfcapd names its files. */
export function stamp(ms: number, zone: string): string {
  return DateTime.fromMillis(ms, { zone }).toFormat('yyyyLLddHHmm');
}

/** File name of a sealed hour. */
export function sealedName(hourStart: number, zone: string): string {
  return `nfcapd.${stamp(hourStart, zone)}`;
}

/** File name of an open hour. */
export function currentName(hourStart: number, zone: string): string {
  return `nfcapd.current.${stamp(hourStart, zone)}`;
}

/** File name of the compacted copy written while sealing. */
export function sealingName(hourStart: number, zone: string): string {
  return `nfcapd.sealing.${stamp(hourStart, zone)}`;
}

/** What a file name in a source directory is. */
export type CaptureFileKind = 'sealed' | 'current' | 'sealing';

/** Parses a capture file name; the stamp is read in `zone` (the header has the exact hour). */
export function parseCaptureName(name: string, zone: string): { kind: CaptureFileKind; hourStart: number } | undefined {
  const m = SEALED_RE.exec(name) ?? CURRENT_RE.exec(name) ?? SEALING_RE.exec(name);
  if (!m) return undefined;
  const kind: CaptureFileKind = name.startsWith('nfcapd.current.')
    ? 'current'
    : name.startsWith('nfcapd.sealing.')
      ? 'sealing'
      : 'sealed';
  const dt = DateTime.fromFormat(m[1]!, 'yyyyLLddHHmm', { zone });
  if (!dt.isValid) return undefined;
  return { kind, hourStart: dt.toMillis() };
}

/** Directory of a source's files. */
export function sourceDir(dataDir: string, source: string): string {
  return `${dataDir}/flows/${source}`;
}
