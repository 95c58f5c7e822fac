/**
 * The logviewer's view of rsyslog's `SystemEvents` table (ommysql/ompgsql
 * schema, or its SQLite equivalent fed by the embedded receiver). One
 * interface, one implementation per database; the API sees only this file.
 */
import type { StoreHealth } from '../store-health.js';

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

/** What kind of failure a SyslogStoreError is; the API maps it to a status, as it does RadiusStoreError's. */
export type SyslogStoreErrorCode =
  /** The database cannot be reached (server down or restarting, refused login) or did not answer in time. */
  | 'unavailable'
  /** The database has no SystemEvents table (rsyslog's schema was never loaded). */
  | 'schema_missing'
  /** The database has no space left for the write; nothing of it was stored. */
  | 'storage_full'
  /** Anything else: the database answered and has the table, but the statement failed (a fault, not an outage). */
  | 'failed';

/** Why a syslog store operation failed; `code` says whether the database is unusable right now or the statement is at fault. */
export class SyslogStoreError extends Error {
  override readonly name = 'SyslogStoreError';
  constructor(
    readonly code: SyslogStoreErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/**
 * The database refused a value of the filter (a character it cannot compare,
 * a date past its column): the client's input, not an outage. The filters
 * the API checks never get here; this is the net under them.
 */
export class SyslogInputError extends Error {
  override readonly name = 'SyslogInputError';
}

/** Page size cap of api.md 4.2. */
export const MAX_PER_PAGE = 2000;
/** Default page size of api.md 4.2. */
export const DEFAULT_PER_PAGE = 100;
