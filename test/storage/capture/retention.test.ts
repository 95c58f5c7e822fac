import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { listCaptureFiles } from '../../../storage/capture/reader.js';
import { CaptureRetention, type ExpiredHour } from '../../../storage/capture/retention.js';
import { CaptureWriter } from '../../../storage/capture/writer.js';
import { FakeClock, randomFlows, tempDataDir } from './flows.js';

const H0 = Date.UTC(2026, 2, 25, 0);
const HOUR = 3_600_000;

/** Six sealed hours (00:00-05:00) and an open 06:00 hour for `netflow`, three sealed hours for `lentor`. */
async function sixHours(): Promise<{ dir: string; clock: FakeClock }> {
  const dir = tempDataDir();
  const clock = new FakeClock(H0);
  const w = new CaptureWriter({ dataDir: dir, timezone: 'UTC', now: clock.now, timer: false });
  await w.start();
  for (let h = 0; h <= 6; h++) {
    w.write('netflow', randomFlows(200, { received: H0 + h * HOUR + 1000, seed: h }));
    if (h < 3) w.write('lentor', randomFlows(50, { received: H0 + h * HOUR + 1000, seed: 10 + h }));
    // 06:40 at the end: hour 06 is still open
    clock.t = h < 6 ? H0 + (h + 1) * HOUR + 30_000 : H0 + 6 * HOUR + 40 * 60_000;
    await w.tick();
  }
  w.flush();
  await w.close();
  return { dir, clock };
}

describe('capture retention', () => {
  it('removes sealed hours older than maxAgeHours and tells listeners', async () => {
    const { dir, clock } = await sixHours();
    const r = new CaptureRetention({ dataDir: dir, timezone: 'UTC', maxAgeHours: 3, now: clock.now });
    const heard: ExpiredHour[] = [];
    r.onExpired((e) => void heard.push(e));
    const removed = r.runOnce();
    // cutoff 03:40: hours ending at or before it (00, 01, 02) go, for both sources
    expect(heard).toEqual(removed);
    expect(removed.map((e) => [e.source, new Date(e.hourStart).getUTCHours(), e.reason]).sort()).toEqual(
      [
        ['lentor', 0, 'age'],
        ['lentor', 1, 'age'],
        ['lentor', 2, 'age'],
        ['netflow', 0, 'age'],
        ['netflow', 1, 'age'],
        ['netflow', 2, 'age'],
      ].sort(),
    );
    for (const e of removed) expect(existsSync(e.path)).toBe(false);
    expect(listCaptureFiles(dir, 'netflow', 'UTC').map((f) => new Date(f.hourStart).getUTCHours())).toEqual([3, 4, 5, 6]);
  });

  it('removes the oldest sealed hours until a source fits in maxBytes, never the open hour', async () => {
    const { dir, clock } = await sixHours();
    const files = listCaptureFiles(dir, 'netflow', 'UTC');
    const sizes = files.map((f) => f.size);
    const budget = sizes.slice(3).reduce((s, x) => s + x, 0); // room for hours 03..06
    const r = new CaptureRetention({ dataDir: dir, timezone: 'UTC', maxBytes: budget, sources: ['netflow'], now: clock.now });
    const removed = r.runOnce();
    expect(removed.map((e) => [new Date(e.hourStart).getUTCHours(), e.reason])).toEqual([
      [0, 'size'],
      [1, 'size'],
      [2, 'size'],
    ]);
    // a budget smaller than the open hour still keeps the open hour
    const tiny = new CaptureRetention({ dataDir: dir, timezone: 'UTC', maxBytes: 1, sources: ['netflow'], now: clock.now });
    tiny.runOnce();
    expect(listCaptureFiles(dir, 'netflow', 'UTC').map((f) => f.kind)).toEqual(['current']);
    expect(listCaptureFiles(dir, 'lentor', 'UTC')).toHaveLength(3);
  });
});
