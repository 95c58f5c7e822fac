/** What a database behind a store is like now, for start-up checks, /health and `netsvc status`. */
export interface StoreHealth {
  /** ok; unreachable (down, refused login, unknown database, timed out); schema_missing (its tables are not there). */
  state: 'ok' | 'unreachable' | 'schema_missing';
  /** For the operator: the driver's reason or the missing tables (never shown to API clients). */
  detail?: string;
}
