/** Defaults of the capture writer and retention, written once: the config schema (capture-config.ts) and the writer use them. */
export const CAPTURE_DEFAULTS = Object.freeze({
  /** The open hour is flushed as a block at least this often, so recent flows are queryable. */
  flushIntervalMs: 5000,
  /** A block is flushed early once it holds this many rows. */
  blockRows: 65_536,
  /** Column compression (zstd: measured best size at live speed). */
  codec: 'zstd' as const,
  /** zstd level. */
  level: 3,
  /** fsync after every flush as well as at seal. */
  fsyncOnFlush: false,
  /** How often retention runs, in seconds. */
  retentionCheckIntervalSec: 300,
});
