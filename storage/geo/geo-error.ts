/** Why an address table cannot be used: its file is missing or unreadable, damaged, or of another kind. */
export type GeoDataErrorCode = 'missing' | 'corrupt' | 'unsupported';

/** An address table (a shipped CSV or a user's MaxMind database) cannot be loaded; the message names its path. */
export class GeoDataError extends Error {
  override readonly name = 'GeoDataError';
  constructor(
    readonly code: GeoDataErrorCode,
    readonly path: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(`${path}: ${message}`, options);
  }
}
