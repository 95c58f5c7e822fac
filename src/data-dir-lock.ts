/**
 * One writer of capture files per data directory: `netsvc serve` and
 * `netsvc import` take `<dataDir>/flows/serve.lock` (holding their pid)
 * while their capture writer runs. Without it, an import's writer would
 * "recover" and seal serve's open `nfcapd.current.*` file and serve would go
 * on writing to a deleted file.
 */
import { linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
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
 * Takes the lock for `role` ('serve' or 'import'), created exclusively; a lock
 * left by a process that is no longer alive is taken over. Throws
 * DataDirLockedError when a live process holds it.
 */
export function acquireDataDirLock(dataDir: string, role: 'serve' | 'import', hint: string): DataDirLock {
  const path = dataDirLockPath(dataDir);
  mkdirSync(join(dataDir, 'flows'), { recursive: true });
  // The pid is written to a private file first and linked into place (link fails with EEXIST like
  // O_EXCL), so nobody ever reads a lock file before its pid is in it.
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, `${process.pid} ${role}\n`, { mode: 0o644 });
  try {
    for (let attempt = 0; ; attempt++) {
      try {
        linkSync(tmp, path);
        break;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || attempt >= 3) throw err;
        const h = holder(path);
        if (h && alive(h.pid)) {
          throw new DataDirLockedError(
            `data directory ${dataDir} is being written by netsvc ${h.role} (pid ${h.pid}, ${path}); ${hint}`,
            h.pid,
          );
        }
        // Stale: its process is gone (or the file is unreadable junk). Take it over.
        try {
          unlinkSync(path);
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
        }
      }
    }
  } finally {
    unlinkSync(tmp);
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
