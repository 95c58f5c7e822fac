/**
 * One writer of capture files per data directory: `netsvc serve` and
 * `netsvc import` take `<dataDir>/flows/serve.lock` (holding their pid)
 * while their capture writer runs. Without it, an import's writer would
 * "recover" and seal serve's open `nfcapd.current.*` file and serve would go
 * on writing to a deleted file.
 */
import { closeSync, mkdirSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';

/** The capture files of the data directory are being written by another live process. */
export class DataDirLockedError extends Error {
  override readonly name = 'DataDirLockedError';
  constructor(
    message: string,
    readonly pid: number,
  ) {
    super(message);
  }
}

/** A held lock; `release` removes the file (once). */
export interface DataDirLock {
  readonly path: string;
  release(): void;
}

/** Path of the lock file of a data directory. */
export function dataDirLockPath(dataDir: string): string {
  return join(dataDir, 'flows', 'serve.lock');
}

/** Whether a process with this pid exists (EPERM: it exists, owned by someone else). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function holder(path: string): { pid: number; role: string } | undefined {
  try {
    const [pid, role] = readFileSync(path, 'utf8').trim().split(/\s+/);
    const n = Number(pid);
    return Number.isInteger(n) && n > 0 ? { pid: n, role: role ?? 'netsvc' } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Takes the lock for `role` ('serve' or 'import'), created with O_EXCL; a lock
 * left by a process that is no longer alive is taken over. Throws
 * DataDirLockedError when a live process holds it.
 */
export function acquireDataDirLock(dataDir: string, role: 'serve' | 'import', hint: string): DataDirLock {
  const path = dataDirLockPath(dataDir);
  mkdirSync(join(dataDir, 'flows'), { recursive: true });
  for (let attempt = 0; ; attempt++) {
    try {
      const fd = openSync(path, 'wx', 0o644);
      try {
        writeSync(fd, `${process.pid} ${role}\n`);
      } finally {
        closeSync(fd);
      }
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || attempt >= 3) throw err;
      const h = holder(path);
      if (h && alive(h.pid)) {
        throw new DataDirLockedError(`data directory ${dataDir} is being written by netsvc ${h.role} (pid ${h.pid}, ${path}); ${hint}`, h.pid);
      }
      // Stale (dead pid) or half-written by a process that died at once: take it over.
      try {
        unlinkSync(path);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
      }
    }
  }
  let released = false;
  return {
    path,
    release() {
      if (released) return;
      released = true;
      // Only our own lock: never remove one another process took over.
      if (holder(path)?.pid === process.pid) {
        try {
          unlinkSync(path);
        } catch {
          // already gone
        }
      }
    },
  };
}
