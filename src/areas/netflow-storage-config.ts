/** Where the flow path keeps its files, from the configuration: shared by serve, import and kpi. */
import { join } from 'node:path';
import type { CaptureWriterOptions } from '../../storage/capture/writer.js';
import type { Config } from '../config.js';

/** Path of the KPI cache. */
export function kpiCachePath(config: Config): string {
  return join(config.dataDir, 'kpi.sqlite');
}

/** The CaptureWriter options the configuration sets (files, zone, `capture.*`); the caller adds clock, timer and log. */
export function captureWriterOptions(
  config: Config,
): Pick<CaptureWriterOptions, 'dataDir' | 'timezone' | 'flushIntervalMs' | 'blockRows' | 'codec' | 'level' | 'fsyncOnFlush'> {
  const c = config.capture;
  return {
    dataDir: config.dataDir,
    timezone: config.timezone,
    flushIntervalMs: c.flushIntervalMs,
    blockRows: c.blockRows,
    codec: c.codec,
    level: c.level,
    fsyncOnFlush: c.fsyncOnFlush,
  };
}
