/** What every flow listener implementation offers (in-thread: listeners.ts; worker thread: threaded-listener.ts), and its counters. */
import type { ExporterCounters } from '../decode/collector-counters.js';
import type { SocketReader } from './socket-thread-handle.js';

/** Counters of one flow source. */
export interface SourceStats {
  source: string;
  /** Address and port the source's socket is bound to (after start). */
  listen: string;
  /** Datagrams taken from the socket for this source. */
  received: number;
  /** Datagrams dropped because the queue was full. */
  queueDrops: number;
  /** Batches the sink failed to take, and their rows. */
  sinkErrors: number;
  sinkLostFlows: number;
  /** Datagrams the decoder threw on (a bug): dropped, ingest goes on. */
  decoderErrors: number;
  /** Failures of the ingest's own steps (flush, template expiry or save) that were counted and survived. */
  ingestErrors: number;
  /** Decoder counters: the sum and per exporter address. */
  total: ExporterCounters;
  exporters: Record<string, ExporterCounters>;
}

/** Counters of one socket. */
export interface SocketStats {
  listen: string;
  sources: string[];
  /** Receive buffer asked for, and the one the kernel set (at most net.core.rmem_max on Linux). */
  receiveBufferRequested: number;
  receiveBufferGranted: number;
  /** Datagrams the kernel dropped on this socket because its receive buffer was full (Linux; undefined elsewhere). */
  kernelDrops: number | undefined;
  /** Datagrams from an exporter that no source on this socket claims. */
  unclaimed: number;
  /** Datagrams waiting to be decoded now. */
  queueDepth: number;
  queueHighWater: number;
  /** How the socket is read: recvmmsg batches on the socket thread, or Node dgram events ('dgram' also before it is bound); 'none' while a dead socket thread waits for its restart. */
  reader: SocketReader | 'none';
  /** Times the socket thread died and was started again (its sockets unread in between). */
  readerRestarts: number;
}

/** The running (or ready) listeners of all flow sources. */
export interface FlowListeners {
  /** Binds every socket; rejects (with nothing left bound) when one cannot be bound. */
  start(): Promise<void>;
  /** Stops receiving, decodes what is queued, flushes the last batches. */
  close(): Promise<void>;
  /** Bound address of each source, e.g. `{ netflow: { address: '127.0.0.1', port: 40123 } }`. */
  addresses(): Record<string, { address: string; port: number }>;
  /** Counters of every source. */
  sourceStats(): SourceStats[];
  /** Counters of every socket. */
  socketStats(): SocketStats[];
  /** Resolves when every queue is empty and no sink write is pending (tests, import). */
  idle(): Promise<void>;
  /** Id of the thread that reads the sockets (Linux, once started), else undefined. */
  threadId(): number | undefined;
  /**
   * Calls `fn` (once, also if it happened before the call) when receiving
   * stops for good while running: a socket thread that died and could not
   * be started again.
   */
  onFailure(fn: (err: Error) => void): void;
}
