/**
 * The logviewer's view of rsyslog's `SystemEvents` table (ommysql/ompgsql
 * schema, or its SQLite equivalent fed by the embedded receiver). One
 * interface, one implementation per database; the API sees only this file.
 */
import type { StoreHealth } from '../store-health.js';

// Their own module so that the CLI knows them without the stores; re-exported for the stores' users.
export { SyslogInputError, SyslogStoreError, type SyslogStoreErrorCode } from './syslog-store-error.js';

/** One row as the API returns it (api.md 2.3); datetimes `YYYY-MM-DD HH:MM:SS` as stored. */
export interface SyslogRecord {
  ID: number;
  DeviceReportedTime: string | null;
  ReceivedAt: string | null;
  FromHost: string;
  SysLogTag: string;
  /** The ProcessID column where the table has one, else the pid inside SysLogTag, else "". */
  processid: string;
  Message: string;
  /** Severity 0–7, as rsyslog's `%syslogpriority%` fills it. */
  Priority: number | null;
}

/** Filters of search and latest; every field optional, all of them ANDed. */
export interface SyslogFilter {
  /** Exact, case-sensitive match on FromHost. */
  host?: string;
  /** Case-insensitive substring of Message; `%`, `_` and `\` are literal. */
  message?: string;
  /** Program match: `sshd`, `sshd:` and `sshd[1]:` all match `sshd:`, `sshd[812]:`, `sshd`, `sshd[812]`. */
  tag?: string;
  /** Severity 0–7. */
  priority?: number;
  /** Inclusive lower bound on ReceivedAt, `YYYY-MM-DD HH:MM:SS` wall-clock as stored. */
  startTime?: string;
  /** Inclusive upper bound on ReceivedAt, same form. */
  endTime?: string;
}

/** Which page; `page` starts at 1. */
export interface PageRequest {
  page: number;
  perPage: number;
}

/** Names and column lists of the indexes `netsvc db index syslog` manages. */
export interface IndexReport {
  created: string[];
  existing: string[];
}

/** Read side: newest-first pages of SystemEvents. */
export interface SyslogStore {
  /**
   * Rows matching `filter`, newest first (ReceivedAt desc, ID desc), for the
   * requested page, plus one more row when a next page exists (so callers tell
   * the last page without COUNT(*)).
   */
  find(filter: SyslogFilter, page: PageRequest): Promise<SyslogRecord[]>;
  close(): Promise<void>;
}

/** Schema and index management behind `netsvc db migrate` and `netsvc db index syslog`. */
export interface SyslogIndexer {
  /**
   * Creates rsyslog's tables (SystemEvents, SystemEventsProperties) from the schema file netsvc
   * ships for the database's dialect (storage/syslog/schema), when SystemEvents is missing;
   * resolves true when it created them.
   */
  createPeerTables(): Promise<boolean>;
  /** Whether SystemEvents exists; rejects (SqlUnavailableError) when the database cannot be reached. */
  hasSystemEvents(): Promise<boolean>;
  /** Whether the database answers and has SystemEvents. */
  health(): Promise<StoreHealth>;
  /** Creates the helpful indexes that are missing; leaves existing ones alone. */
  createIndexes(): Promise<IndexReport>;
  /** Drops the indexes `createIndexes` made (benchmarks compare with and without). */
  dropIndexes(): Promise<string[]>;
}

/** Page size cap of api.md 4.2. */
export const MAX_PER_PAGE = 2000;
/** Default page size of api.md 4.2. */
export const DEFAULT_PER_PAGE = 100;
