/**
 * The types and row helpers of the SystemEvents stores (sql-syslog-store.ts
 * and its dialect subclasses): options, what is learnt about the table, the
 * index names, the row as selected, LIKE escaping and the newest-first order.
 */
/** Tuning of the query plan; the defaults suit rsyslog tables of 10 M rows. */
export interface SyslogStoreOptions {
  /** Upper bound of one walk step in IDs (default 1 000 000). */
  maxChunkRows?: number;
  /** How far out of ReceivedAt order (in IDs) a row may be and still sort right (default 2 000). */
  reorderWindow?: number;
  /**
   * Deepest page end (offset + perPage + 1 rows) the primary-key walk serves (default 50 000);
   * deeper pages are sorted by the database. The walk holds at most twice this many (ID, ReceivedAt) pairs.
   */
  maxWalkRows?: number;
  /** How long what was learnt about the table (indexes, columns) is trusted, ms (default 60 000). */
  introspectTtlMs?: number;
  now?: () => number;
}

/** What the store learns about the table once in a while. */
export interface TableInfo {
  /** LogAnalyzer's schema adds ProcessID; rsyslog's has none. */
  hasProcessId: boolean;
  /** An index that yields rows in (ReceivedAt desc, ID desc) order exists. */
  hasTimeIndex: boolean;
}

/** Indexes `netsvc db index syslog` creates; the DDL of each dialect renders the columns. */
export const INDEX_NAMES = {
  received: 'netsvc_syslog_received',
  host: 'netsvc_syslog_host',
  priority: 'netsvc_syslog_priority',
  tag: 'netsvc_syslog_tag',
} as const;

/** A SystemEvents row as the stores select it (lower-case aliases, so PostgreSQL's folding does not matter). */
export interface SystemEventsRow {
  id: number | string;
  devicereportedtime: string | null;
  receivedat: string | null;
  fromhost: string | null;
  syslogtag: string | null;
  message: string | null;
  priority: number | string | null;
  processid?: string | number | null;
}

/** A WHERE condition and its parameters. */
export interface SqlWhere {
  sql: string;
  params: unknown[];
}

/** Rows per INSERT statement of `insertEvents`. */
export const INSERT_CHUNK = 200;

/** Escapes `!`, `%` and `_` for `LIKE … ESCAPE '!'`; `!` rather than `\` so backslashes stay plain on every database. */
export function escapeLike(value: string): string {
  return value.replace(/[!%_]/g, '!$&');
}

/** A datetime as read, cut to whole seconds (`YYYY-MM-DD HH:MM:SS`). */
export function normaliseTime(value: string | null): string | null {
  if (value === null || value === undefined) return null;
  const s = String(value);
  // PostgreSQL prints fractions; rsyslog stores whole seconds, and so do the others.
  return s.length > 19 && s[10] === ' ' ? s.slice(0, 19) : s;
}

/** What the walk reads of a row: just enough to order it. */
export type KeyRow = Pick<SystemEventsRow, 'id' | 'receivedat'>;

/** Newest first: ReceivedAt desc with NULLs last, then ID desc. */
export function compareRows(a: KeyRow, b: KeyRow): number {
  const ta = a.receivedat;
  const tb = b.receivedat;
  if (ta !== tb) {
    if (ta === null) return 1;
    if (tb === null) return -1;
    return ta < tb ? 1 : -1;
  }
  return Number(b.id) - Number(a.id);
}
