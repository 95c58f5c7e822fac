/** The radius stores' typed error, apart from the store interface so that the CLI knows it without loading the stores. */

/** What kind of refusal a RadiusStoreError is; the API maps it to a status. */
export type RadiusStoreErrorCode =
  | 'user_not_found'
  | 'username_taken'
  | 'profile_not_found'
  | 'profile_attached'
  /** The profile cannot be deleted: users are attached to it. */
  | 'profile_in_use'
  | 'invalid'
  /** The database lacks FreeRADIUS's or netsvc's tables (never migrated). */
  | 'schema_missing'
  /** The database cannot be reached (server down or restarting, unknown database, refused login) or did not answer in time. */
  | 'unavailable'
  /** The database has no space left for the write; nothing of it was stored. */
  | 'storage_full';

/** Why a store operation was refused; the API maps `code` to a status and `param` to the parameter it names. */
export class RadiusStoreError extends Error {
  override readonly name = 'RadiusStoreError';
  /** The input field an `invalid` refusal is about (`username`, `password`, `currency`, …), when there is one. */
  readonly param: string | undefined;
  constructor(
    readonly code: RadiusStoreErrorCode,
    message: string,
    options: { param?: string; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.param = options.param;
  }
}
