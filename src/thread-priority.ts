/**
 * CPU priority between the service's own threads: the flow socket thread
 * keeps the normal priority and every other thread (the main thread with the
 * capture writer and the API, the KPI builder, V8's compiler and GC helpers,
 * libuv's pool) is given a higher nice value.
 *
 * Why: a flow socket holds only about 50 ms of traffic at 60 000 datagrams/s
 * in an 8 MiB receive buffer, and what overflows it is lost. Everything
 * else can wait without losing anything: the socket thread only copies each
 * datagram into a 64 MiB ring (datagram-ring.ts), so the decode thread, niced
 * with the rest, can fall behind for seconds without a loss. On a small machine right after a
 * start, V8's helper threads compile and collect on every core for a few
 * hundred milliseconds; at equal priority the socket thread then got about
 * half of the CPU it needed and the kernel dropped datagrams (measured on
 * 2026-11-25; the runs are in bench/README.md's git history).
 *
 * Linux only: there a nice value belongs to one thread (task), set with
 * setpriority() on its thread id. Threads started later inherit the nice
 * value of the thread that starts them, so threads the main thread starts
 * afterwards are lowered too (threads the socket thread would start keep
 * its priority; it starts none). Raising a priority back needs privileges,
 * so this is done once, after the socket thread is running.
 *
 * The cost: V8's helper threads also compile and collect for the socket
 * thread's own code, so under CPU pressure its optimisation waits too; and
 * the HTTP API and the capture writer answer later on a machine short of
 * CPU. Measured, the trade pays (bench/README.md).
 */
import { readdirSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';

/** What lowering other threads needs from the system (injected in tests). */
export interface ThreadSystem {
  /** Thread ids of this process. */
  threads(): number[];
  /** A thread's nice value; throws when the thread is gone. */
  getNice(tid: number): number;
  /** Sets a thread's nice value; throws when refused. */
  setNice(tid: number, nice: number): void;
}

/** This process's threads on Linux (/proc/self/task); none elsewhere. */
export const linuxThreads: ThreadSystem = {
  threads() {
    if (process.platform !== 'linux') return [];
    try {
      return readdirSync('/proc/self/task').map(Number).filter(Number.isInteger);
    } catch {
      return [];
    }
  },
  getNice(tid) {
    return getPriority(tid);
  },
  setNice(tid, nice) {
    setPriority(tid, nice);
  },
};

/** What was done: threads given the nice value, threads already at it or lower in priority, and those that refused. */
export interface PriorityOutcome {
  lowered: number;
  already: number;
  failed: number;
}

/** A nice value outside 1..19. */
export class NiceValueError extends RangeError {
  override readonly name = 'NiceValueError';
}

/**
 * Gives every thread of the process but `keep` at least the nice value
 * `nice` (1..19): a thread already at that value or higher (a service
 * started with `nice`) keeps its own. A thread that refuses, or has ended
 * meanwhile, is counted, never thrown.
 */
export function lowerOtherThreads(keep: readonly number[], nice: number, sys: ThreadSystem = linuxThreads): PriorityOutcome {
  if (!Number.isInteger(nice) || nice < 1 || nice > 19)
    throw new NiceValueError(`nice must be an integer from 1 to 19, got ${nice}`);
  const out: PriorityOutcome = { lowered: 0, already: 0, failed: 0 };
  for (const tid of sys.threads()) {
    if (keep.includes(tid)) continue;
    try {
      if (sys.getNice(tid) >= nice) {
        out.already++;
        continue;
      }
      sys.setNice(tid, nice);
      out.lowered++;
    } catch {
      out.failed++;
    }
  }
  return out;
}
