import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { listCaptureFiles, scanFlows } from '../../../storage/capture/reader.js';
import { CaptureWriter } from '../../../storage/capture/writer.js';
import { randomFlows, rowsOf, tempDataDir } from './flows.js';

const H9 = Date.UTC(2026, 2, 25, 9);
const root = join(import.meta.dirname, '../../..');

/** Runs the writer child until it has flushed at least `minRows`, then SIGKILLs it; returns rows it reported flushed. */
function runAndKill(dataDir: string, minRows: number, extraMs: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      join(root, 'node_modules/.bin/vite-node'),
      [join(import.meta.dirname, 'kill-writer-child.ts'), dataDir, String(H9)],
      {
        cwd: root,
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let flushed = 0;
    let killing = false;
    let buf = '';
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.stdout.on('data', (d: Buffer) => {
      buf += d.toString();
      const lines = buf.split('\n');
      buf = lines.pop()!;
      for (const l of lines) if (l) flushed = Number(l);
      if (!killing && flushed >= minRows) {
        killing = true;
        setTimeout(() => child.kill('SIGKILL'), extraMs);
      }
    });
    child.on('exit', (_code, signal) => {
      if (signal !== 'SIGKILL') reject(new Error(`child ended without SIGKILL: ${stderr}`));
      else resolve(flushed);
    });
    setTimeout(() => child.kill('SIGKILL'), 60_000).unref();
  });
}

describe('capture writer killed with SIGKILL', () => {
  it('keeps every flow flushed before the kill; a restart recovers the open hour', async () => {
    const dataDir = tempDataDir();
    const reported = await runAndKill(dataDir, 20_000, 37);
    const w = new CaptureWriter({ dataDir, timezone: 'UTC', now: () => H9 + 120_000, timer: false });
    await w.start();
    const [file] = listCaptureFiles(dataDir, 'netflow', 'UTC');
    expect(file!.kind).toBe('current');
    const rows = rowsOf(scanFlows([file!.path]));
    // the child reported `reported` rows flushed before it was killed; some more may have made it
    expect(rows.length).toBeGreaterThanOrEqual(reported);
    expect(rows.length % 500).toBe(0);
    // what is there is exactly the child's flows, in order (the child's batches are reproducible)
    const expected = rowsOf(
      Array.from({ length: rows.length / 500 }, (_, k) => randomFlows(500, { received: H9 + k * 500, stepMs: 1, seed: k + 1 })),
    );
    expect(rows).toEqual(expected);
    await w.close();
  }, 90_000);
});
