/** The typed errors of the SQL clients, apart from the clients so that the CLI knows them without loading a driver's code. */

/**
 * Why a database could not run a statement, as far as netsvc needs to know:
 * it cannot be reached (down, restarting, connection lost), it did not
 * answer in time (hung, overloaded, pool exhausted), or it has no room left.
 */
export type SqlUnavailableReason = 'unreachable' | 'timeout' | 'disk_full';

/**
 * The database cannot serve the statement now; the caller may try again later
 * (the API answers 503). Each client turns its driver's errors of these kinds
 * into this one type, so no store or route needs to know driver codes.
 */
export class SqlUnavailableError extends Error {
  override readonly name = 'SqlUnavailableError';
  constructor(
    readonly reason: SqlUnavailableReason,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/**
 * What was wrong with a value the database refused: a character it cannot
 * store or compare (PostgreSQL's NUL, a 4-byte character in a 3-byte
 * column), a number or date past what its column holds, or a text it cannot
 * read as the column's type.
 */
export type SqlInputReason = 'encoding' | 'out_of_range' | 'malformed';

/**
 * The database refused a value of the statement: the caller's input, not an
 * outage and not a bug of the statement (the API answers 400). Each client
 * turns its driver's codes of these kinds into this one type, as it does
 * for SqlUnavailableError.
 */
export class SqlInputError extends Error {
  override readonly name = 'SqlInputError';
  constructor(
    readonly reason: SqlInputReason,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** A database URL that cannot be used. */
export class DatabaseUrlError extends Error {
  override readonly name = 'DatabaseUrlError';
}
