/**
 * KpiCache in SQLite (`<dataDir>/kpi.sqlite`, better-sqlite3, WAL).
 *
 * kpi_hour   one row per (source, hour): totals and the file they came from
 * kpi_proto  one row per (source, hour, protocol)
 * kpi_level  one row per (source, hour, dimension, level): the level's rows
 *            as one blob, keys (16 or 2 bytes each) then bytes/packets/flows
 *            (float64 little-endian, three per row); level 0 (≤ 256 rows, read
 *            by every query) is stored raw, deeper levels deflated.
 * kpi_minute one row per (source, hour, minute dimension): the counters per
 *            received minute (minute-counters.ts) as one deflated blob,
 *            column by column: minutes (int32), key words (uint32, `width`
 *            per row), then bytes/packets/flows (float64, three per row),
 *            all little-endian, rows in (minute, key) order.
 *
 * A schema version other than SCHEMA_VERSION empties every table: the hours
 * are then missing, and KpiBuilder.sync (at start, or `netsvc kpi rebuild`)
 * builds them again from their files.
 */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import type Database from 'better-sqlite3';
import { openSqlite } from '../sql/sqlite-driver.js';
import type { RankedRows } from './key-table.js';
import type { Level } from './levels.js';
import { KEY_WIDTH, type CachedHour, type Dimension, type HourEntry, type KpiCache, type ProtocolRow } from './kpi-cache.js';
import { MINUTE_DIMS, MINUTE_KEY_WORDS, type MinuteDim, type MinuteRows } from './minute-counters.js';

/** 2: kpi_minute added. */
export const SCHEMA_VERSION = '2';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS kpi_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS kpi_hour (
  source TEXT NOT NULL,
  hour_start INTEGER NOT NULL,
  file TEXT NOT NULL,
  file_size INTEGER NOT NULL,
  flows INTEGER NOT NULL,
  bytes INTEGER NOT NULL,
  packets INTEGER NOT NULL,
  rst_flows INTEGER NOT NULL,
  built_at INTEGER NOT NULL,
  PRIMARY KEY (source, hour_start)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS kpi_proto (
  source TEXT NOT NULL,
  hour_start INTEGER NOT NULL,
  proto INTEGER NOT NULL,
  flows INTEGER NOT NULL,
  bytes INTEGER NOT NULL,
  packets INTEGER NOT NULL,
  PRIMARY KEY (source, hour_start, proto)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS kpi_level (
  source TEXT NOT NULL,
  hour_start INTEGER NOT NULL,
  dim TEXT NOT NULL,
  level INTEGER NOT NULL,
  rows INTEGER NOT NULL,
  next INTEGER NOT NULL,
  codec INTEGER NOT NULL,
  data BLOB NOT NULL,
  PRIMARY KEY (source, hour_start, dim, level)
);
CREATE TABLE IF NOT EXISTS kpi_minute (
  source TEXT NOT NULL,
  hour_start INTEGER NOT NULL,
  dim TEXT NOT NULL,
  rows INTEGER NOT NULL,
  data BLOB NOT NULL,
  PRIMARY KEY (source, hour_start, dim)
);
`;

const LITTLE_ENDIAN = new Uint8Array(new Float64Array([1]).buffer)[7] === 0x3f;
const RAW = 0;
const DEFLATE = 1;

interface HourRow {
  source: string;
  hour_start: number;
  file: string;
  file_size: number;
  flows: number;
  bytes: number;
  packets: number;
  rst_flows: number;
}

interface LevelRow {
  rows: number;
  next: number;
  codec: number;
  data: Buffer;
}

function encodeRows(rows: RankedRows): Buffer {
  const out = Buffer.alloc(rows.length * rows.keyWidth + rows.length * 24);
  out.set(rows.keys.subarray(0, rows.length * rows.keyWidth), 0);
  let o = rows.length * rows.keyWidth;
  for (let i = 0; i < rows.length * 3; i++, o += 8) out.writeDoubleLE(rows.vals[i]!, o);
  return out;
}

function decodeRows(data: Buffer, n: number, keyWidth: number): RankedRows {
  if (data.length !== n * keyWidth + n * 24)
    throw new Error(`kpi level blob has ${data.length} bytes, expected ${n * (keyWidth + 24)}`);
  const keys = new Uint8Array(n * keyWidth);
  keys.set(data.subarray(0, n * keyWidth));
  const vals = new Float64Array(n * 3);
  const from = data.subarray(n * keyWidth);
  if (LITTLE_ENDIAN)
    new Uint8Array(vals.buffer).set(from); // one copy into aligned memory
  else for (let i = 0; i < n * 3; i++) vals[i] = from.readDoubleLE(i * 8);
  return { keyWidth, length: n, keys, vals };
}

/** Little-endian bytes of a typed array. */
function leBytes(a: Int32Array | Uint32Array | Float64Array): Buffer {
  if (LITTLE_ENDIAN) return Buffer.from(a.buffer, a.byteOffset, a.byteLength);
  const out = Buffer.alloc(a.byteLength);
  a.forEach((v, i) => {
    if (a instanceof Float64Array) out.writeDoubleLE(v, i * 8);
    else if (a instanceof Int32Array) out.writeInt32LE(v, i * 4);
    else out.writeUInt32LE(v, i * 4);
  });
  return out;
}

function encodeMinutes(rows: MinuteRows): Buffer {
  return deflateRawSync(Buffer.concat([leBytes(rows.minutes), leBytes(rows.keys), leBytes(rows.vals)]));
}

function decodeMinutes(blob: Buffer, n: number, width: number): MinuteRows {
  const data = inflateRawSync(blob);
  if (data.length !== n * (4 + 4 * width + 24))
    throw new Error(`kpi minute blob has ${data.length} bytes, expected ${n * (4 + 4 * width + 24)}`);
  const minutes = new Int32Array(n);
  const keys = new Uint32Array(n * width);
  const vals = new Float64Array(n * 3);
  const k = n * 4;
  const v = k + n * width * 4;
  if (LITTLE_ENDIAN) {
    // Copies into aligned memory.
    new Uint8Array(minutes.buffer).set(data.subarray(0, k));
    new Uint8Array(keys.buffer).set(data.subarray(k, v));
    new Uint8Array(vals.buffer).set(data.subarray(v));
  } else {
    for (let i = 0; i < n; i++) minutes[i] = data.readInt32LE(i * 4);
    for (let i = 0; i < n * width; i++) keys[i] = data.readUInt32LE(k + i * 4);
    for (let i = 0; i < n * 3; i++) vals[i] = data.readDoubleLE(v + i * 8);
  }
  return { width, length: n, minutes, keys, vals };
}

const toHour = (r: HourRow): CachedHour => ({
  source: r.source,
  hourStart: r.hour_start,
  file: r.file,
  fileSize: r.file_size,
  flows: r.flows,
  bytes: r.bytes,
  packets: r.packets,
  rstFlows: r.rst_flows,
});

/** The KPI cache in one SQLite file. */
export class SqliteKpiCache implements KpiCache {
  private readonly db: Database.Database;
  private readonly q;

  constructor(
    path: string,
    private readonly now: () => number = Date.now,
  ) {
    if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
    this.db = openSqlite(path);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = NORMAL');
    this.db.exec(SCHEMA);
    const version = this.db.prepare<[], { value: string }>(`SELECT value FROM kpi_meta WHERE key = 'schema'`).get();
    if (version && version.value !== SCHEMA_VERSION) {
      // A cache is derived data: an old layout is dropped and rebuilt from the files.
      this.db.exec('DELETE FROM kpi_minute; DELETE FROM kpi_level; DELETE FROM kpi_proto; DELETE FROM kpi_hour;');
    }
    this.db.prepare(`INSERT OR REPLACE INTO kpi_meta (key, value) VALUES ('schema', ?)`).run(SCHEMA_VERSION);
    this.q = {
      hours: this.db.prepare<[string, number, number], HourRow>(
        `SELECT source, hour_start, file, file_size, flows, bytes, packets, rst_flows FROM kpi_hour
         WHERE source = ? AND hour_start >= ? AND hour_start < ? ORDER BY hour_start`,
      ),
      protocols: this.db.prepare<[string, number], ProtocolRow>(
        `SELECT proto, flows, bytes, packets FROM kpi_proto WHERE source = ? AND hour_start = ? ORDER BY proto`,
      ),
      level: this.db.prepare<[string, number, string, number], LevelRow>(
        `SELECT rows, next, codec, data FROM kpi_level WHERE source = ? AND hour_start = ? AND dim = ? AND level = ?`,
      ),
      keyCount: this.db.prepare<[string, number, string], { n: number | null }>(
        `SELECT sum(rows) AS n FROM kpi_level WHERE source = ? AND hour_start = ? AND dim = ?`,
      ),
      minutes: this.db.prepare<[string, number, string], { rows: number; data: Buffer }>(
        `SELECT rows, data FROM kpi_minute WHERE source = ? AND hour_start = ? AND dim = ?`,
      ),
      putMinutes: this.db.prepare(`INSERT INTO kpi_minute (source, hour_start, dim, rows, data) VALUES (?, ?, ?, ?, ?)`),
      dropMinutes: this.db.prepare(`DELETE FROM kpi_minute WHERE source = ? AND hour_start = ?`),
      putHour: this.db.prepare(
        `INSERT OR REPLACE INTO kpi_hour (source, hour_start, file, file_size, flows, bytes, packets, rst_flows, built_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ),
      putProto: this.db.prepare(
        `INSERT INTO kpi_proto (source, hour_start, proto, flows, bytes, packets) VALUES (?, ?, ?, ?, ?, ?)`,
      ),
      putLevel: this.db.prepare(
        `INSERT INTO kpi_level (source, hour_start, dim, level, rows, next, codec, data) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      ),
      dropHour: this.db.prepare(`DELETE FROM kpi_hour WHERE source = ? AND hour_start = ?`),
      dropProto: this.db.prepare(`DELETE FROM kpi_proto WHERE source = ? AND hour_start = ?`),
      dropLevels: this.db.prepare(`DELETE FROM kpi_level WHERE source = ? AND hour_start = ?`),
    };
  }

  hours(source: string, from: number, to: number): CachedHour[] {
    const lo = Math.max(from, Number.MIN_SAFE_INTEGER);
    const hi = Math.min(to, Number.MAX_SAFE_INTEGER);
    return this.q.hours.all(source, lo, hi).map(toHour);
  }

  protocols(source: string, hourStart: number): ProtocolRow[] {
    return this.q.protocols.all(source, hourStart);
  }

  level(source: string, hourStart: number, dim: Dimension, level: number): Level | undefined {
    const row = this.q.level.get(source, hourStart, dim, level);
    if (!row) return undefined;
    const data = row.codec === DEFLATE ? inflateRawSync(row.data) : row.data;
    return { rows: decodeRows(data, row.rows, KEY_WIDTH[dim]), next: row.next };
  }

  keyCount(source: string, hourStart: number, dim: Dimension): number {
    return this.q.keyCount.get(source, hourStart, dim)?.n ?? 0;
  }

  minutes(source: string, hourStart: number, dim: MinuteDim): MinuteRows | undefined {
    const row = this.q.minutes.get(source, hourStart, dim);
    return row ? decodeMinutes(row.data, row.rows, MINUTE_KEY_WORDS[dim]) : undefined;
  }

  private readonly putTx = (entry: HourEntry): void => {
    const { source, hourStart } = entry;
    this.dropNow(source, hourStart);
    this.q.putHour.run(
      source,
      hourStart,
      entry.file,
      entry.fileSize,
      entry.flows,
      entry.bytes,
      entry.packets,
      entry.rstFlows,
      this.now(),
    );
    for (const p of entry.protocols) this.q.putProto.run(source, hourStart, p.proto, p.flows, p.bytes, p.packets);
    for (const dim of Object.keys(KEY_WIDTH) as Dimension[]) {
      entry.levels[dim].forEach((lvl, k) => {
        const raw = encodeRows(lvl.rows);
        const codec = k === 0 ? RAW : DEFLATE;
        this.q.putLevel.run(
          source,
          hourStart,
          dim,
          k,
          lvl.rows.length,
          lvl.next,
          codec,
          codec === RAW ? raw : deflateRawSync(raw, { level: 1 }),
        );
      });
    }
    if (entry.minutes) {
      for (const dim of MINUTE_DIMS) {
        const rows = entry.minutes[dim];
        this.q.putMinutes.run(source, hourStart, dim, rows.length, encodeMinutes(rows));
      }
    }
  };

  put(entry: HourEntry): void {
    this.db.transaction(this.putTx)(entry);
  }

  private dropNow(source: string, hourStart: number): void {
    this.q.dropMinutes.run(source, hourStart);
    this.q.dropLevels.run(source, hourStart);
    this.q.dropProto.run(source, hourStart);
    this.q.dropHour.run(source, hourStart);
  }

  drop(source: string, hourStart: number): void {
    this.db.transaction(() => this.dropNow(source, hourStart))();
  }

  close(): void {
    if (this.db.open) this.db.close();
  }
}
