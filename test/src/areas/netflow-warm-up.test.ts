import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/log.js';
import { startService } from '../../../src/main.js';
import { loopbackConfig } from '../../helpers/service.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('serve warms up the flow queries', () => {
  it('a few seconds after it listens, and logs it once', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'netsvc-warm-serve-'));
    dirs.push(dir);
    const lines: Array<Record<string, unknown>> = [];
    const sink = new Writable({
      write(chunk, _enc, cb) {
        lines.push(JSON.parse(String(chunk)) as Record<string, unknown>);
        cb();
      },
    });
    const service = await startService(loopbackConfig(dir, { analytics: { warmUp: true } }), {
      logger: createLogger('info', sink),
      now: Date.now,
    });
    try {
      const warmed = () => lines.filter((l) => l.msg === 'flow query code warmed up');
      const deadline = Date.now() + 20_000;
      while (warmed().length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      expect(warmed()).toHaveLength(1);
      expect(warmed()[0]).toMatchObject({ queries: 40 });
      expect(lines.filter((l) => String(l.msg).includes('warm-up failed'))).toEqual([]);
    } finally {
      await service.close();
    }
  });
});
