/**
 * What the capture writer (writer.ts) shares with its parts (open-hour.ts,
 * hour-file.ts, seal.ts): its counters, and the context those parts work in.
 */
import type { Log } from '../../common/log.js';
import type { CaptureFs } from './capture-fs.js';
import type { ByteCodec, CodecSet } from './codec.js';

/** Counters of the writer ("everything that moves gets a counter"). */
export interface WriterCounters {
  rowsReceived: number;
  rowsWritten: number;
  blocksWritten: number;
  bytesWritten: number;
  writeErrors: number;
  rowsLost: number;
  hoursOpened: number;
  hoursSealed: number;
  hoursReopened: number;
  sealErrors: number;
  recoveredFiles: number;
  recoveredDroppedBlocks: number;
  recoveredDroppedBytes: number;
  damagedFilesMovedAside: number;
}

/** Counters of a writer that has done nothing yet. */
export function newWriterCounters(): WriterCounters {
  return {
    rowsReceived: 0,
    rowsWritten: 0,
    blocksWritten: 0,
    bytesWritten: 0,
    writeErrors: 0,
    rowsLost: 0,
    hoursOpened: 0,
    hoursSealed: 0,
    hoursReopened: 0,
    sealErrors: 0,
    recoveredFiles: 0,
    recoveredDroppedBlocks: 0,
    recoveredDroppedBytes: 0,
    damagedFilesMovedAside: 0,
  };
}

/** The writer's settings and services, as its file-level parts see them. */
export interface WriterContext {
  readonly dataDir: string;
  readonly timezone: string;
  readonly cfs: CaptureFs;
  /** The codec new blocks are written with. */
  readonly codec: ByteCodec;
  /** Codecs by id, for reading blocks back. */
  readonly codecs: CodecSet;
  readonly counters: WriterCounters;
  readonly blockRows: number;
  readonly log: Log | undefined;
  now(): number;
  /** Runs `fn` (a log call) unless a message of this kind was logged a moment ago. */
  rateLimited(kind: string, fn: () => void): void;
  /** Starts reading recovered blocks back in the background (the writer's slices). */
  scheduleRecovery(): void;
}
