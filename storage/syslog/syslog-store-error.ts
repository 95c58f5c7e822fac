/** The syslog stores' typed errors, apart from the store interface so that the CLI knows them without loading the stores. */

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
