/**
 * CSV export of a logviewer search, built in the browser from the public API (no server endpoint):
 * every page of the current search, newest first, up to EXPORT_CAP rows.
 */
import type { Api } from '../../api.js';
import { apiQuery, severityName, type Filters, type SyslogRecord } from './query.js';

/** At most this many rows per file: 5 requests of the API's largest page (2000). */
export const EXPORT_CAP = 10_000;
const PAGE = 2000;

export const CSV_HEADER = [
  'ID',
  'ReceivedAt',
  'DeviceReportedTime',
  'FromHost',
  'Priority',
  'Severity',
  'SysLogTag',
  'processid',
  'Message',
] as const;

/**
 * One RFC 4180 field. Guard against formula injection (CSV injection): a spreadsheet runs a cell that
 * starts with `=`, `+`, `-` or `@` (and, in some, a tab or carriage return) as a formula, and syslog
 * text is whatever any device on the network chose to send. Such cells get a leading `'`, which
 * spreadsheets read as "text" and hide; the file is then not byte-for-byte the stored text for those
 * cells, which is the price of opening a log export safely (docs/logviewer.md, "Console").
 */
export function csvField(value: string | number | null): string {
  let s = value === null ? '' : String(value);
  if (/^[=+\-@\t\r]/.test(s)) s = `'${s}`;
  // Quoted also when it holds `;` or a tab: spreadsheets set to those separators would split the
  // field there and could read what follows as a new cell, formula and all.
  return /[",;\t\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** The CSV text of `rows`: a header line, CRLF line ends (RFC 4180). */
export function toCsv(rows: readonly SyslogRecord[]): string {
  const lines = [CSV_HEADER.join(',')];
  for (const r of rows) {
    lines.push(
      [
        r.ID,
        r.ReceivedAt,
        r.DeviceReportedTime,
        r.FromHost,
        r.Priority,
        r.Priority === null ? '' : severityName(r.Priority),
        r.SysLogTag,
        r.processid,
        r.Message,
      ]
        .map(csvField)
        .join(','),
    );
  }
  return lines.join('\r\n') + '\r\n';
}

export interface Exported {
  rows: SyslogRecord[];
  /** True when the search had more rows than EXPORT_CAP. */
  capped: boolean;
}

/** Every row of the search (up to the cap), page by page; `progress` hears the running count. */
export async function fetchAll(
  api: Api,
  filters: Filters,
  withTime: boolean,
  progress: (n: number) => void,
  signal?: AbortSignal,
): Promise<Exported> {
  const rows: SyslogRecord[] = [];
  // Offset pages of a newest-first search shift by one for each record stored meanwhile: keep each ID once.
  const taken = new Set<number>();
  for (let page = 1; ; page++) {
    const env = await api.get<SyslogRecord[]>(
      'logviewer',
      '/search',
      { ...apiQuery(filters, withTime), page, perPage: PAGE },
      signal,
    );
    for (const r of env.result) {
      if (taken.has(r.ID)) continue;
      taken.add(r.ID);
      rows.push(r);
    }
    progress(rows.length);
    if (env.isLastPage !== false) return { rows: rows.slice(0, EXPORT_CAP), capped: rows.length > EXPORT_CAP };
    if (rows.length >= EXPORT_CAP) return { rows: rows.slice(0, EXPORT_CAP), capped: true };
  }
}

/** Hands `text` to the browser as a file download (a Blob URL, revoked once the click is done). */
export function download(text: string, name: string): void {
  // A byte order mark, so that Excel reads the file as UTF-8 rather than the system code page.
  const url = URL.createObjectURL(new Blob(['\ufeff', text], { type: 'text/csv;charset=utf-8' }));
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  a.style.display = 'none';
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/** `syslog-20250705-104107.csv`, in the browser's clock. */
export function exportName(now = new Date()): string {
  const p = (n: number) => String(n).padStart(2, '0');
  return `syslog-${now.getFullYear()}${p(now.getMonth() + 1)}${p(now.getDate())}-${p(now.getHours())}${p(now.getMinutes())}${p(now.getSeconds())}.csv`;
}
