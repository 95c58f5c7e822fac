/** Creating SQLite files with permissions that fit what they hold. */
import { closeSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * Makes sure the directory exists and, when the database file does not,
 * creates it empty with `mode` (SQLite gives its -wal and -shm files the same
 * permissions). An existing file keeps the permissions its owner chose.
 */
export function prepareSqliteFile(path: string, mode: number): void {
  if (path === ':memory:') return;
  mkdirSync(dirname(path), { recursive: true });
  try {
    closeSync(openSync(path, 'wx', mode));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
}
