/**
 * Child process for the SIGKILL test: writes flows through a real CaptureWriter
 * with a short flush interval and reports on stdout, after each flush, how many
 * rows have reached the file. The parent kills it with SIGKILL at a random moment.
 */
import { CaptureWriter } from '../../../storage/capture/writer.js';
import { randomFlows } from './flows.js';

const [dataDir, hourStart] = [process.argv[2]!, Number(process.argv[3])];
const w = new CaptureWriter({ dataDir, timezone: 'UTC', flushIntervalMs: 50, blockRows: 65536, now: () => hourStart + 60_000 });
await w.start();
let seed = 1;
let received = hourStart;
setInterval(() => {
  const b = randomFlows(500, { received, stepMs: 1, seed: seed++ });
  received += 500;
  w.write('netflow', b);
  w.flush();
  process.stdout.write(`${w.counters.rowsWritten}\n`);
}, 5);
