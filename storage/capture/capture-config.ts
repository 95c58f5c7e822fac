/**
 * The capture files' section of the configuration (`capture`): its schema,
 * owned here beside the writer and retention that read it; src/config.ts
 * composes it. The defaults are capture-defaults.ts's, which the writer also
 * falls back to without loading zod.
 */
import { z } from 'zod';
import { CAPTURE_DEFAULTS } from './capture-defaults.js';

const captureRetentionSchema = z
  .object({
    /** Hours older than this (by file hour) are deleted; absent = no age limit. */
    maxAgeHours: z.number().int().positive().optional(),
    /** Total bytes of capture files per source; oldest hours go first; absent = no size limit. */
    maxBytes: z.number().int().positive().optional(),
    /** How often the expiry runs, in seconds. */
    checkIntervalSec: z.number().int().positive().default(CAPTURE_DEFAULTS.retentionCheckIntervalSec),
  })
  .strict();

/** The `capture` section of the configuration. */
export const captureSchema = z
  .object({
    /** The open hour is flushed as a block at least this often, so recent flows are queryable. */
    flushIntervalMs: z.number().int().positive().default(CAPTURE_DEFAULTS.flushIntervalMs),
    /** A block is flushed early once it holds this many rows. */
    blockRows: z.number().int().min(256).max(1_048_576).default(CAPTURE_DEFAULTS.blockRows),
    /** Column compression: zstd (default, measured best size at live speed), lz4 (faster, larger) or none. */
    codec: z.enum(['zstd', 'lz4', 'none']).default(CAPTURE_DEFAULTS.codec),
    /** Codec level (zstd 1-19; ignored by lz4 and none). */
    level: z.number().int().min(1).max(19).default(CAPTURE_DEFAULTS.level),
    /** fsync after every flush as well as at seal (survives power loss, costs disk I/O). */
    fsyncOnFlush: z.boolean().default(CAPTURE_DEFAULTS.fsyncOnFlush),
    retention: captureRetentionSchema.prefault({}),
  })
  .strict();
