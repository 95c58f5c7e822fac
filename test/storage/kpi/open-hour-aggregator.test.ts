import { renameSync, rmSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { CaptureWriter } from '../../../storage/capture/writer.js';
import { listCaptureFiles } from '../../../storage/capture/reader.js';
import { HourAggregate } from '../../../storage/kpi/hour-aggregate.js';
import { OpenHourAggregator, PIN_MS, WATCH_MS } from '../../../storage/kpi/open-hour-aggregator.js';
import { FakeClock, randomFlows, tempDataDir } from '../capture/flows.js';

const H = Date.UTC(2026, 2, 25, 9);

describe('OpenHourAggregator', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  async function openHour(clock: FakeClock) {
    const dir = tempDataDir();
    dirs.push(dir);
    const writer = new CaptureWriter({
      dataDir: dir,
      timezone: 'UTC',
      timer: false,
      now: clock.now,
      blockRows: 1000,
      aggregates: false,
    });
    await writer.start();
    const path = () => listCaptureFiles(dir, 'netflow', 'UTC')[0]!.path;
    return { dir, writer, path };
  }

  /** What a scan of the same rows gives (the aggregate the KPI cache and file scans build). */
  function expected(...batches: ReturnType<typeof randomFlows>[]) {
    const a = new HourAggregate();
    for (const b of batches) a.add(b);
    return { flows: a.flows, bytes: a.bytes, packets: a.packets, rstFlows: a.rstFlows, protocols: a.protocols() };
  }

  it('counts exactly what the open file holds, and what each later flush adds', async () => {
    const clock = new FakeClock(H + 60_000);
    const { writer, path } = await openHour(clock);
    const first = randomFlows(2500, { received: H + 1000, seed: 1 });
    writer.write('netflow', first);
    writer.flush();
    const agg = new OpenHourAggregator({ now: clock.now });
    const s1 = agg.snapshot(path())!;
    expect({ flows: s1.flows, bytes: s1.bytes, packets: s1.packets, rstFlows: s1.rstFlows, protocols: s1.protocols }).toEqual(
      expected(first),
    );
    // Rows still buffered by the writer are not in the file yet, so not in the figures.
    const second = randomFlows(700, { received: H + 2000, seed: 2 });
    writer.write('netflow', second);
    expect(agg.snapshot(path())!.flows).toBe(2500);
    writer.flush();
    const s2 = agg.snapshot(path())!;
    expect({ flows: s2.flows, bytes: s2.bytes, packets: s2.packets, rstFlows: s2.rstFlows, protocols: s2.protocols }).toEqual(
      expected(first, second),
    );
    expect(s2.version).toBeGreaterThan(s1.version);
    expect(s2.level0.src!.rows.length).toBeGreaterThan(0);
    await writer.close();
  });

  it('answers a deeper level of the state a snapshot named, and "stale" once the background pass has moved on', async () => {
    const clock = new FakeClock(H + 60_000);
    const { writer, path } = await openHour(clock);
    writer.write('netflow', randomFlows(3000, { received: H + 1000, seed: 3 }));
    writer.flush();
    const agg = new OpenHourAggregator({ now: clock.now });
    agg.track([path()]);
    const snap = agg.snapshot(path())!;
    expect(agg.level(path(), 'src', 1, snap.version)).not.toBe('stale');
    writer.write('netflow', randomFlows(1000, { received: H + 2000, seed: 4 }));
    writer.flush();
    // Pinned after the snapshot: the background pass leaves the hour as the query saw it.
    expect(agg.backgroundStep(50)).toBe(true);
    expect(agg.level(path(), 'src', 1, snap.version)).not.toBe('stale');
    clock.advance(PIN_MS + 1);
    expect(agg.backgroundStep(50)).toBe(true);
    expect(agg.level(path(), 'src', 1, snap.version)).toBe('stale');
    expect(agg.snapshot(path())!.flows).toBe(4000);
    // An hour nobody asked for since WATCH_MS is left to the pass over unwatched hours (time-capped by the caller).
    clock.advance(WATCH_MS + 1);
    writer.write('netflow', randomFlows(1000, { received: H + 3000, seed: 5 }));
    writer.flush();
    const before = agg.counters.rowsAdded;
    expect(agg.backgroundStep(50, true)).toBe(true);
    expect(agg.counters.rowsAdded).toBe(before);
    expect(agg.backgroundStep(50, false)).toBe(true);
    expect(agg.counters.rowsAdded).toBe(before + 1000);
    expect(agg.snapshot(path())!.flows).toBe(5000);
    await writer.close();
  });

  it('starts over when another file takes the same name (an hour reopened after its seal), and forgets untracked hours', async () => {
    const clock = new FakeClock(H + 60_000);
    const a = await openHour(clock);
    a.writer.write('netflow', randomFlows(2000, { received: H + 1000, seed: 5 }));
    a.writer.flush();
    const agg = new OpenHourAggregator({ now: clock.now });
    const path = a.path();
    expect(agg.snapshot(path)!.flows).toBe(2000);
    await a.writer.close();
    const b = await openHour(clock);
    const other = randomFlows(300, { received: H + 1000, seed: 6 });
    b.writer.write('netflow', other);
    b.writer.flush();
    await b.writer.close();
    renameSync(b.path(), path);
    expect(agg.snapshot(path)!.flows).toBe(300);
    agg.track([]);
    expect(agg.level(path, 'src', 1, 1)).toBe('stale');
    rmSync(path);
    expect(agg.snapshot(path)).toBeUndefined();
  });
});
