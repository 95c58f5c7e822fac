/**
 * Reading a flow socket many datagrams per system call, through the native
 * addon in collector/native/batch-recv.c (built by `npm install` on Linux).
 *
 * A Node dgram socket costs ≈ 3 µs of CPU per datagram outside JS (on this
 * project's 2-core machine, a third of a core at 100 000 datagrams/s); read
 * with recvmmsg in batches the whole socket thread costs ≈ 1.2 µs per
 * datagram. When the addon is missing (not Linux, no compiler at install)
 * or Node's socket internals are not what we expect, the socket thread
 * reads through dgram as before: slower, same results.
 */
import type { Socket } from 'node:dgram';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { packageRoot } from '../listen/thread-id.js';

/** The addon's functions (see batch-recv.c). */
export interface BatchRecvAddon {
  recvBatch(fd: number, stage: Uint8Array, slotBytes: number, meta: Int32Array, max: number): number;
  waitReadable(fds: Int32Array, count: number, timeoutMs: number): number;
  addressText(meta: Int32Array, i: number): string;
}

/** Datagrams per read. */
export const MAX_BATCH = 64;
/** Bytes per datagram in the staging buffer (the addon's least): more than any UDP payload (65 507 over IPv4, 65 527 over IPv6), so none is cut short. */
export const SLOT_BYTES = 65_536;
const META_WORDS = 8;

let loaded: BatchRecvAddon | null | undefined;
let loadError = '';

/** The addon's path: build/Release under the package root (the nearest directory up with a package.json). */
export function batchRecvAddonPath(): string {
  return join(packageRoot(dirname(fileURLToPath(import.meta.url))), 'build', 'Release', 'batch_recv.node');
}

/** The addon, or undefined when it is not built or does not load here (loaded once per thread; `batchRecvLoadError` says why). */
export function loadBatchRecv(): BatchRecvAddon | undefined {
  if (loaded === undefined) {
    loaded = null;
    if (process.platform !== 'linux') loadError = `recvmmsg batches are Linux only (this is ${process.platform})`;
    else {
      try {
        const addon = createRequire(import.meta.url)(batchRecvAddonPath()) as Partial<BatchRecvAddon>;
        if (
          typeof addon.recvBatch === 'function' &&
          typeof addon.waitReadable === 'function' &&
          typeof addon.addressText === 'function'
        ) {
          loaded = addon as BatchRecvAddon;
        } else loadError = `${batchRecvAddonPath()} lacks recvBatch, waitReadable or addressText`;
      } catch (err) {
        // Not built (no compiler at install): dgram it is.
        loadError = (err as Error).message;
      }
    }
  }
  return loaded ?? undefined;
}

/** Why loadBatchRecv gave undefined ('' when it loaded or was not tried). */
export function batchRecvLoadError(): string {
  return loadError;
}

interface UdpHandle {
  fd?: unknown;
  recvStop?: unknown;
}

/**
 * Takes a bound dgram socket's descriptor over: Node stops reading it (its
 * 'message' event no longer fires) and the caller reads it with recvBatch
 * until it closes the socket. Undefined, with the socket left as it was,
 * when Node's internals do not show the handle (another Node version).
 */
export function takeSocketFd(socket: Socket): number | undefined {
  const state = Object.getOwnPropertySymbols(socket).find((s) => s.description === 'state symbol');
  const handle = state ? (socket as unknown as Record<symbol, { handle?: UdpHandle } | undefined>)[state]?.handle : undefined;
  if (!handle || typeof handle.fd !== 'number' || handle.fd < 0 || typeof handle.recvStop !== 'function') return undefined;
  const err = (handle.recvStop as () => number).call(handle);
  return err === 0 || err === undefined ? handle.fd : undefined;
}

/**
 * Exporter address texts by address bytes: a direct-mapped cache (bounded,
 * so spoofed sources cost a miss each and no memory), the text made by
 * inet_ntop as Node's remote info makes it.
 */
class ExporterNames {
  private static readonly SLOTS = 1024;
  private readonly words = new Int32Array(ExporterNames.SLOTS * 6);
  private readonly names: (string | undefined)[] = new Array<string | undefined>(ExporterNames.SLOTS).fill(undefined);

  constructor(private readonly addon: BatchRecvAddon) {}

  of(meta: Int32Array, i: number): string {
    const m = i * META_WORDS;
    const family = meta[m + 1]!;
    const a = meta[m + 3]!;
    const b = meta[m + 4]!;
    const c = meta[m + 5]!;
    const d = meta[m + 6]!;
    const scope = meta[m + 7]!; // IPv6 scope id: the same link-local address on two interfaces is two exporters
    const slot =
      Math.imul(
        a ^
          Math.imul(b, 0x85ebca6b) ^
          Math.imul(c, 0xc2b2ae35) ^
          Math.imul(d, 0x27d4eb2f) ^
          Math.imul(scope, 0x165667b1) ^
          family,
        0x9e3779b1,
      ) >>> 22;
    const w = this.words;
    const k = slot * 6;
    const cached = this.names[slot];
    if (
      cached !== undefined &&
      w[k] === family &&
      w[k + 1] === a &&
      w[k + 2] === b &&
      w[k + 3] === c &&
      w[k + 4] === d &&
      w[k + 5] === scope
    )
      return cached;
    const name = this.addon.addressText(meta, i);
    w[k] = family;
    w[k + 1] = a;
    w[k + 2] = b;
    w[k + 3] = c;
    w[k + 4] = d;
    w[k + 5] = scope;
    this.names[slot] = name;
    return name;
  }
}

/** Where a batch read hands each datagram: a view of the staging buffer, valid only during the call. */
export type DatagramHandler = (payload: Buffer, exporter: string, timeMs: number) => void;

/**
 * Reads sockets taken over with takeSocketFd in batches into one staging
 * buffer (MAX_BATCH × SLOT_BYTES, 4 MiB, shared by every socket of the
 * thread: each batch is handed on before the next read).
 */
export class BatchReader {
  private readonly stage = Buffer.alloc(MAX_BATCH * SLOT_BYTES);
  private readonly meta = new Int32Array(MAX_BATCH * META_WORDS);
  private readonly names: ExporterNames;

  constructor(private readonly addon: BatchRecvAddon) {
    this.names = new ExporterNames(addon);
  }

  /**
   * Reads what is waiting on `fd` (up to MAX_BATCH datagrams, all stamped
   * `timeMs`), handing each to `handle`; never waits. Returns how many it
   * read, or −errno.
   */
  read(fd: number, handle: DatagramHandler, timeMs: number): number {
    const n = this.addon.recvBatch(fd, this.stage, SLOT_BYTES, this.meta, MAX_BATCH);
    const meta = this.meta;
    for (let i = 0; i < n; i++) {
      const start = i * SLOT_BYTES;
      handle(this.stage.subarray(start, start + meta[i * META_WORDS]!), this.names.of(meta, i), timeMs);
    }
    return n;
  }

  /** Waits up to `timeoutMs` until one of `fds[0, count)` can be read; how many can, or −errno. */
  wait(fds: Int32Array, count: number, timeoutMs: number): number {
    return this.addon.waitReadable(fds, count, timeoutMs);
  }
}
