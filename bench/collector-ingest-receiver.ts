/**
 * The netsvc side of the ingest benchmark, run as its own process:
 * `node dist/bench/collector-ingest-receiver.js --sink capture|summary --data-dir DIR [--buffer BYTES] [--threaded [--dgram] [--worker-sink]] [--nice N]`.
 * With `--worker-sink` the capture writer runs in the decode thread, as `netsvc serve` runs it
 * (src/areas/capture-worker-sink.ts); the main thread then only counts. `--codec lz4|zstd|none` (worker sink only).
 *
 * Binds one flow source on an ephemeral 127.0.0.1 port (printed as
 * `READY <port>`), decodes what arrives through the service's listener and
 * hands it to the capture writer (end to end, as `netsvc serve` stores) or to
 * a summary sink (decode only); with `--threaded` sockets and decoders run
 * in the listener's worker thread and only the sink on the main thread (`--dgram`: its socket thread reads through Node dgram, not recvmmsg batches). On each `stats` line on stdin it waits until
 * the queue is drained and prints one JSON line of counters (with the process's CPU time so far); `quit` exits.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { createInterface } from 'node:readline';
import { SummarySink, type FlowSink } from '../common/flow-sink.js';
import { createThreadedFlowListeners } from '../collector/listen/threaded-listener.js';
import { createFlowListeners } from '../collector/listen/udp-listener.js';
import { lowerOtherThreads } from '../src/thread-priority.js';
import { CaptureWriter } from '../storage/capture/writer.js';

function arg(name: string, fallback?: string): string {
  const i = process.argv.indexOf(name);
  const v = i >= 0 ? process.argv[i + 1] : fallback;
  if (v === undefined) throw new Error(`missing ${name}`);
  return v;
}

function cpuUs(): number {
  const u = process.cpuUsage();
  return u.user + u.system;
}

async function main(): Promise<void> {
  const sinkKind = arg('--sink', 'summary');
  const buffer = Number(arg('--buffer', String(8 * 1024 * 1024)));
  const inWorker = sinkKind === 'capture' && process.argv.includes('--worker-sink');
  let writer: CaptureWriter | undefined;
  let sink: FlowSink | undefined;
  if (inWorker) {
    sink = undefined;
  } else if (sinkKind === 'capture') {
    // As serve starts it: the open hour's KPI aggregates are not the writer's (serve's KPI worker
    // reads them from the file, and only for hours a query looks at).
    writer = new CaptureWriter({ dataDir: arg('--data-dir'), timezone: 'UTC', warmUp: true, aggregates: false });
    await writer.start();
    sink = writer;
  } else {
    sink = new SummarySink();
  }
  const sources = { bench: { listen: '127.0.0.1:0', receiveBuffer: buffer } };
  const workerSink = inWorker
    ? {
        module: pathToFileURL(fileURLToPath(new URL('../src/areas/capture-worker-sink.js', import.meta.url))).href,
        options: { dataDir: arg('--data-dir'), timezone: 'UTC', warmUp: true, codec: arg('--codec', 'zstd') },
      }
    : undefined;
  const threaded =
    process.argv.includes('--threaded') || inWorker
      ? createThreadedFlowListeners(
          sources,
          { sink, workerSink },
          { statsEveryMs: 100, batchReceive: !process.argv.includes('--dgram') },
        )
      : undefined;
  const listeners = threaded ?? createFlowListeners(sources, { sink: sink! });
  await listeners.start();
  // As serve does (src/areas/netflow.ts): the socket thread keeps its priority, the others yield.
  const nice = Number(arg('--nice', '10'));
  const tid = threaded?.threadId();
  if (nice > 0 && tid !== undefined) lowerOtherThreads([tid], nice);
  // Longest event-loop stall: while the loop is stuck, the socket is not read.
  const delay = monitorEventLoopDelay({ resolution: 5 });
  delay.enable();
  process.stdout.write(`READY ${listeners.addresses().bench!.port}\n`);
  for await (const line of createInterface({ input: process.stdin })) {
    if (line === 'stats') {
      if (threaded) await threaded.flush();
      else await listeners.idle();
      writer?.flush();
      const s = listeners.sourceStats()[0]!;
      const sock = listeners.socketStats()[0]!;
      process.stdout.write(
        `${JSON.stringify({
          received: s.received,
          queueDrops: s.queueDrops,
          decoded: s.total.packets,
          flows: s.total.flows,
          malformed: s.total.malformed,
          queueHighWater: sock.queueHighWater,
          receiveBuffer: sock.receiveBufferGranted,
          rowsWritten:
            writer?.counters.rowsWritten ??
            (threaded?.sinkStats() as { counters?: { rowsWritten: number } } | undefined)?.counters?.rowsWritten ??
            null,
          maxStallMs: Math.round(delay.max / 1e6),
          // The whole process, every thread (socket and decode, writer, GC helpers), µs.
          cpuUs: cpuUs(),
        })}\n`,
      );
    } else if (line === 'quit') {
      break;
    }
  }
  await listeners.close();
  await writer?.close();
  // `quit` exits even while the driver keeps stdin open (an open stdin keeps the process alive).
  process.stdin.destroy();
}

await main();
