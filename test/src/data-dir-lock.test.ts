import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { acquireDataDirLock, DataDirLockedError, dataDirLockPath } from '../../src/data-dir-lock.js';

const dir = mkdtempSync(join(tmpdir(), 'netsvc-lock-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('data directory lock', () => {
  it('is held by one process at a time and removed on release', () => {
    const d = join(dir, 'a');
    const lock = acquireDataDirLock(d, 'serve', 'stop it');
    expect(readFileSync(dataDirLockPath(d), 'utf8')).toBe(`${process.pid} serve\n`);
    let caught: unknown;
    try {
      acquireDataDirLock(d, 'import', 'use another --data-dir');
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(DataDirLockedError);
    expect((caught as DataDirLockedError).message).toContain(`netsvc serve (pid ${process.pid}`);
    expect((caught as DataDirLockedError).message).toContain('use another --data-dir');
    lock.release();
    expect(readdirSync(join(d, 'flows'))).toEqual([]); // no lock, no temporary file left
    acquireDataDirLock(d, 'import', '').release();
  });

  it('takes over a lock of a dead pid, or an empty one left by a crash', () => {
    const dead = Number(
      spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' }).stdout,
    );
    for (const content of [`${dead} serve\n`, '']) {
      const d = join(dir, `b${content.length}`);
      mkdirSync(join(d, 'flows'), { recursive: true });
      writeFileSync(dataDirLockPath(d), content);
      const lock = acquireDataDirLock(d, 'serve', '');
      expect(readFileSync(dataDirLockPath(d), 'utf8')).toBe(`${process.pid} serve\n`);
      lock.release();
      expect(existsSync(dataDirLockPath(d))).toBe(false);
    }
  });

  it('does not remove a lock another process took over', () => {
    const d = join(dir, 'c');
    const lock = acquireDataDirLock(d, 'serve', '');
    writeFileSync(dataDirLockPath(d), `${process.ppid} serve\n`);
    lock.release();
    expect(existsSync(dataDirLockPath(d))).toBe(true);
  });
});
