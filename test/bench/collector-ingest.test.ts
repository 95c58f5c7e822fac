import { describe, expect, it } from 'vitest';
import { parseIngestArgs, summarizeIngest, type IngestResult } from '../../bench/collector-ingest.js';

function run(
  rate: number,
  collector: IngestResult['collector'],
  round: number,
  lossPercent: number,
  queueDrops: number | null,
  cpu: number | null = null,
): IngestResult {
  return {
    rate,
    round,
    collector,
    datagramsSent: 0,
    sentPerSecond: rate,
    flowsSent: 1000,
    flowsReceived: 1000 * (1 - lossPercent / 100),
    lossPercent,
    kernelDrops: round * 10,
    queueDrops,
    maxStallMs: queueDrops === null ? null : round * 100,
    cpuUsPerDatagram: cpu,
  };
}

describe('ingest benchmark rounds', () => {
  it('reads --repeat, and one round when it is absent or not a number', () => {
    expect(parseIngestArgs(['--repeat', '3']).repeat).toBe(3);
    expect(parseIngestArgs([]).repeat).toBe(1);
    expect(parseIngestArgs(['--repeat', 'many']).repeat).toBe(1);
  });

  it('gives per rate and collector the median loss, every round in order, median drops and CPU per datagram, and the longest stall', () => {
    const rows = summarizeIngest([
      run(60_000, 'netsvc-capture-worker', 1, 11.04, 12, 25.1),
      run(60_000, 'nfcapd', 1, 0, null, 5.2),
      run(60_000, 'netsvc-capture-worker', 2, 4.65, 0, 23.9),
      run(60_000, 'nfcapd', 2, 0.5, null, null),
      run(60_000, 'netsvc-capture-worker', 3, 2.7, 4, 30.2),
    ]);
    expect(rows).toEqual([
      {
        rate: 60_000,
        collector: 'netsvc-capture-worker',
        rounds: 3,
        flowsSent: 1000,
        medianLossPercent: 4.65,
        lossPercents: [11.04, 4.65, 2.7],
        medianKernelDrops: 20,
        medianQueueDrops: 4,
        maxStallMs: 300,
        medianCpuUsPerDatagram: 25.1,
      },
      {
        rate: 60_000,
        collector: 'nfcapd',
        rounds: 2,
        flowsSent: 1000,
        medianLossPercent: 0.25,
        lossPercents: [0, 0.5],
        medianKernelDrops: 15,
        medianQueueDrops: null,
        maxStallMs: null,
        medianCpuUsPerDatagram: 5.2,
      },
    ]);
  });
});
