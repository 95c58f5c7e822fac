/**
 * The capture writer as the ingest worker's own sink, as serve runs it: rows
 * are written to the capture files by the decode thread and never reach the
 * main thread; flush() writes what is held; the main thread sees counters
 * and open files through the stats.
 */
import { createSocket } from 'node:dgram';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { createThreadedFlowListeners, type ThreadedFlowListeners } from '../../../collector/listen/threaded-listener.js';
import type { CaptureSinkStats, CaptureWorkerSinkOptions } from '../../../src/areas/capture-worker-sink.js';
import { listCaptureFiles, scanFlows } from '../../../storage/capture/reader.js';
import { flowFixture } from '../../helpers/flow-fixtures.js';

// The worker imports compiled modules; the tests run after `npm run build`.
const SINK_MODULE = pathToFileURL(fileURLToPath(new URL('../../../dist/src/areas/capture-worker-sink.js', import.meta.url))).href;

describe('capture writer in the ingest worker', () => {
  const open: ThreadedFlowListeners[] = [];
  const dirs: string[] = [];
  afterEach(async () => {
    for (const l of open.splice(0)) await l.close();
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it('writes every decoded flow to the capture file on the decode thread, and reports its counters and open file', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'netsvc-worker-sink-'));
    dirs.push(dataDir);
    const options: CaptureWorkerSinkOptions = { dataDir, timezone: 'UTC', flushIntervalMs: 600_000 };
    const messages: unknown[] = [];
    // No sink on this thread: a batch reaching it would be counted as a sink error.
    const l = createThreadedFlowListeners(
      { netflow: { listen: '127.0.0.1:0' } },
      { workerSink: { module: SINK_MODULE, options } },
      { statsEveryMs: 50 },
    );
    open.push(l);
    l.onSinkMessage((m) => messages.push(m));
    await l.start();
    const fixture = flowFixture('1/softflowd-v9');
    const sock = createSocket('udp4');
    for (const d of fixture.datagrams())
      await new Promise<void>((r) => sock.send(d.payload, l.addresses().netflow!.port, '127.0.0.1', () => r()));
    sock.close();
    while (l.sourceStats()[0]!.received < fixture.datagrams().length) await new Promise((r) => setTimeout(r, 10));

    const written = () => {
      const files = listCaptureFiles(dataDir, 'netflow', 'UTC');
      let rows = 0;
      let bytes = 0;
      for (const b of scanFlows(files, { columns: ['received', 'bytes'] })) {
        rows += b.length;
        for (let i = 0; i < b.length; i++) bytes += b.cols.bytes[i]!;
      }
      return { files, rows, bytes };
    };
    // Held for the next flush, ten minutes away, until flush() is asked for.
    await l.idle();
    expect(written().rows).toBe(0);
    await l.flush();
    const { files, rows, bytes } = written();
    expect(files.map((f) => f.kind)).toEqual(['current']);
    const ref = fixture.reference().totals;
    expect({ rows, bytes }).toEqual({ rows: ref.flows, bytes: ref.bytes });

    const stats = l.sinkStats() as CaptureSinkStats;
    expect(stats.counters.rowsWritten).toBe(ref.flows);
    expect(stats.openHours.map((h) => h.path)).toEqual([files[0]!.path]);
    expect(l.sourceStats()[0]!.sinkErrors).toBe(0);
    expect(messages).toEqual([]); // no hour sealed
  });

  it('refuses to start, naming the cause, when the sink cannot be built', async () => {
    const l = createThreadedFlowListeners(
      { netflow: { listen: '127.0.0.1:0' } },
      { workerSink: { module: `${SINK_MODULE}.missing.js`, options: {} } },
    );
    open.push(l);
    await expect(l.start()).rejects.toThrow(/flow sink did not start/);
  });
});
