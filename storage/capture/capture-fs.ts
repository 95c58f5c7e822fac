/**
 * The file-system calls the capture writer and reader make, as an interface,
 * so tests can inject failures (ENOSPC, EIO, read-only) without a full disk.
 */
import * as fs from 'node:fs';

/** Subset of node:fs (synchronous) used by capture files. */
export interface CaptureFs {
  openSync(path: string, flags: string): number;
  closeSync(fd: number): void;
  readSync(fd: number, buffer: Uint8Array, offset: number, length: number, position: number): number;
  writeSync(fd: number, buffer: Uint8Array, offset: number, length: number, position: number): number;
  fsyncSync(fd: number): void;
  ftruncateSync(fd: number, len: number): void;
  fstatSync(fd: number): { size: number };
  renameSync(from: string, to: string): void;
  unlinkSync(path: string): void;
  mkdirSync(path: string, options: { recursive: true }): unknown;
  readdirSync(path: string): string[];
  statSync(path: string): { size: number; mtimeMs: number };
  existsSync(path: string): boolean;
}

/** The real file system. */
export const nodeFs: CaptureFs = {
  openSync: (p, f) => fs.openSync(p, f),
  closeSync: (fd) => fs.closeSync(fd),
  readSync: (fd, b, o, l, p) => fs.readSync(fd, b, o, l, p),
  writeSync: (fd, b, o, l, p) => fs.writeSync(fd, b, o, l, p),
  fsyncSync: (fd) => fs.fsyncSync(fd),
  ftruncateSync: (fd, l) => fs.ftruncateSync(fd, l),
  fstatSync: (fd) => fs.fstatSync(fd),
  renameSync: (a, b) => fs.renameSync(a, b),
  unlinkSync: (p) => fs.unlinkSync(p),
  mkdirSync: (p, o) => fs.mkdirSync(p, o),
  readdirSync: (p) => fs.readdirSync(p),
  statSync: (p) => fs.statSync(p),
  existsSync: (p) => fs.existsSync(p),
};

/** fsync of a directory, so a rename in it survives a power cut; best effort. */
export function fsyncDir(cfs: CaptureFs, dir: string): void {
  try {
    const fd = cfs.openSync(dir, 'r');
    try {
      cfs.fsyncSync(fd);
    } finally {
      cfs.closeSync(fd);
    }
  } catch {
    // Some file systems refuse fsync on directories; the rename itself is still atomic.
  }
}

/** Writes all of `buf` at `pos` (a positioned write may write less than asked). */
export function writeAll(cfs: CaptureFs, fd: number, buf: Uint8Array, pos: number): void {
  let done = 0;
  while (done < buf.length) {
    const n = cfs.writeSync(fd, buf, done, buf.length - done, pos + done);
    if (n <= 0) throw new Error('short write');
    done += n;
  }
}
