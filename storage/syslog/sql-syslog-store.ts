/**
 * What the three SystemEvents stores share: filter SQL, row mapping, batched
 * inserts, and the query plan that keeps page 1 fast on tables of millions of
 * rows that have no index but the primary key (rsyslog's stock schema).
 *
 * Plan. Results are ordered by (ReceivedAt desc, ID desc).
 *  - When an index leads with ReceivedAt (`netsvc db index syslog`), or the
 *    rows in play are few, one plain `ORDER BY … LIMIT … OFFSET …` does it.
 *  - Otherwise the primary key is walked newest-first in bounded ID ranges:
 *    each range is filtered and sorted by the database (a small sort), until
 *    the page is full; then one more range of `reorderWindow` IDs is read,
 *    so rows inserted slightly out of ReceivedAt order still sort right.
 *    rsyslog inserts rows in the order it receives them, so ID order follows
 *    ReceivedAt; a time range is turned into an ID range by binary search on
 *    the primary key under the same assumption (widened by `reorderWindow`),
 *    and the exact ReceivedAt condition is still applied to every row.
 */
import type { Dialect, SqlClient } from '../sql/sql-client.js';
import {
  SyslogStoreError,
  type IndexReport,
  type PageRequest,
  type SyslogEvent,
  type SyslogEventSink,
  type SyslogFilter,
  type SyslogIndexer,
  type SyslogRecord,
  type SyslogStore,
} from './syslog-store.js';
import { pidOf, programOf } from './syslog-tag.js';

/** Tuning of the query plan; the defaults suit rsyslog tables of 10 M rows. */
export interface SyslogStoreOptions {
  /** An ID range of at most this many IDs is read with one plain ORDER BY (default 50 000). */
  exactBelowRows?: number;
  /** Upper bound of one walk step in IDs (default 1 000 000). */
  maxChunkRows?: number;
  /** How far out of ReceivedAt order (in IDs) a row may be and still sort right (default 2 000). */
  reorderWindow?: number;
  /** How long what was learnt about the table (indexes, columns) is trusted, ms (default 60 000). */
  introspectTtlMs?: number;
  now?: () => number;
}

/** What the store learns about the table once in a while. */
export interface TableInfo {
  /** LogAnalyzer's schema adds ProcessID; rsyslog's has none. */
  hasProcessId: boolean;
  /** An index that yields rows in (ReceivedAt desc, ID desc) order exists. */
  hasTimeIndex: boolean;
}

/** One helpful index: name and its column list in the dialect's DDL. */
export interface IndexSpec {
  name: string;
  columns: string;
}

/** Indexes `netsvc db index syslog` creates; the DDL of each dialect renders the columns. */
export const INDEX_NAMES = {
  received: 'netsvc_syslog_received',
  host: 'netsvc_syslog_host',
  priority: 'netsvc_syslog_priority',
  tag: 'netsvc_syslog_tag',
} as const;

interface Row {
  id: number | string;
  devicereportedtime: string | null;
  receivedat: string | null;
  fromhost: string | null;
  syslogtag: string | null;
  message: string | null;
  priority: number | string | null;
  processid?: string | number | null;
}

interface Where {
  sql: string;
  params: unknown[];
}

const INSERT_CHUNK = 200;

/** Escapes `!`, `%` and `_` for `LIKE … ESCAPE '!'`; `!` rather than `\` so backslashes stay plain on every database. */
export function escapeLike(value: string): string {
  return value.replace(/[!%_]/g, '!$&');
}

function normaliseTime(value: string | null): string | null {
  if (value === null || value === undefined) return null;
  const s = String(value);
  // PostgreSQL prints fractions; rsyslog stores whole seconds, and so do the others.
  return s.length > 19 && s[10] === ' ' ? s.slice(0, 19) : s;
}

/** Newest first: ReceivedAt desc with NULLs last, then ID desc. */
function compareRows(a: Row, b: Row): number {
  const ta = a.receivedat;
  const tb = b.receivedat;
  if (ta !== tb) {
    if (ta === null) return 1;
    if (tb === null) return -1;
    return ta < tb ? 1 : -1;
  }
  return Number(b.id) - Number(a.id);
}

/** Shared implementation; subclasses supply dialect SQL and introspection. */
export abstract class SqlSyslogStore implements SyslogStore, SyslogEventSink, SyslogIndexer {
  abstract readonly dialect: Dialect;
  protected readonly exactBelowRows: number;
  protected readonly maxChunkRows: number;
  protected readonly reorderWindow: number;
  private readonly introspectTtlMs: number;
  private readonly now: () => number;
  private info: { value: TableInfo; at: number } | undefined;

  constructor(
    protected readonly client: SqlClient,
    options: SyslogStoreOptions = {},
  ) {
    this.exactBelowRows = options.exactBelowRows ?? 50_000;
    this.maxChunkRows = Math.max(1, options.maxChunkRows ?? 1_000_000);
    this.reorderWindow = Math.max(0, options.reorderWindow ?? 2_000);
    this.introspectTtlMs = options.introspectTtlMs ?? 60_000;
    this.now = options.now ?? Date.now;
  }

  /** `column = value`, compared byte for byte (case- and trailing-space-sensitive). */
  protected abstract exactSql(column: string): string;
  /** How many parameters `exactSql` binds (the value is repeated where the dialect needs it). */
  protected abstract exactParams(value: string): unknown[];
  /** `column` starts with `value`, case-sensitive; returns SQL and its parameters. */
  protected abstract prefixSql(column: string, value: string): Where;
  /** `column` contains `value`, case-insensitive; returns SQL and its parameters. */
  protected abstract containsSql(column: string, value: string): Where;
  /** ORDER BY clause for newest first with NULL ReceivedAt last. */
  protected abstract readonly orderBy: string;
  /** Reads what the table looks like now. */
  protected abstract introspect(): Promise<TableInfo>;
  /** Creates the missing indexes of `specs`; returns which were created. */
  abstract createIndexes(): Promise<IndexReport>;
  abstract dropIndexes(): Promise<string[]>;

  async close(): Promise<void> {
    await this.client.close();
  }

  /** Table facts, re-read after `introspectTtlMs` so a `db index` run is picked up while serving. */
  protected async tableInfo(): Promise<TableInfo> {
    const t = this.now();
    if (!this.info || t - this.info.at > this.introspectTtlMs) {
      this.info = { value: await this.introspect(), at: t };
    }
    return this.info.value;
  }

  /** Forgets what was learnt about the table (after creating or dropping indexes). */
  forgetTableInfo(): void {
    this.info = undefined;
  }

  private columns(info: TableInfo): string {
    const base =
      'ID AS id, DeviceReportedTime AS devicereportedtime, ReceivedAt AS receivedat, FromHost AS fromhost, ' +
      'SysLogTag AS syslogtag, Message AS message, Priority AS priority';
    return info.hasProcessId ? `${base}, ProcessID AS processid` : base;
  }

  private where(filter: SyslogFilter): Where {
    const parts: string[] = [];
    const params: unknown[] = [];
    if (filter.host !== undefined) {
      parts.push(this.exactSql('FromHost'));
      params.push(...this.exactParams(filter.host));
    }
    if (filter.priority !== undefined) {
      parts.push('Priority = ?');
      params.push(filter.priority);
    }
    if (filter.tag !== undefined) {
      // Program match: `prog`, `prog:` and `prog[pid]`, `prog[pid]:` are the forms rsyslog stores.
      const program = programOf(filter.tag);
      const prefix = this.prefixSql('SysLogTag', `${program}[`);
      parts.push(`(${this.exactSql('SysLogTag')} OR ${this.exactSql('SysLogTag')} OR ${prefix.sql})`);
      params.push(...this.exactParams(program), ...this.exactParams(`${program}:`), ...prefix.params);
    }
    if (filter.message !== undefined && filter.message !== '') {
      const contains = this.containsSql('Message', filter.message);
      parts.push(contains.sql);
      params.push(...contains.params);
    }
    if (filter.startTime !== undefined) {
      parts.push('ReceivedAt >= ?');
      params.push(filter.startTime);
    }
    if (filter.endTime !== undefined) {
      parts.push('ReceivedAt <= ?');
      params.push(filter.endTime);
    }
    return { sql: parts.length ? parts.join(' AND ') : '1 = 1', params };
  }

  private toRecord(row: Row): SyslogRecord {
    const tag = row.syslogtag ?? '';
    const stored = row.processid === undefined || row.processid === null ? '' : String(row.processid).trim();
    return {
      ID: Number(row.id),
      DeviceReportedTime: normaliseTime(row.devicereportedtime),
      ReceivedAt: normaliseTime(row.receivedat),
      FromHost: row.fromhost ?? '',
      SysLogTag: tag,
      processid: stored !== '' ? stored : pidOf(tag),
      Message: row.message ?? '',
      Priority: row.priority === null ? null : Number(row.priority),
    };
  }

  async find(filter: SyslogFilter, page: PageRequest): Promise<SyslogRecord[]> {
    try {
      const rows = await this.findRows(filter, page);
      return rows.map((r) => this.toRecord(r));
    } catch (err) {
      if (err instanceof SyslogStoreError) throw err;
      throw new SyslogStoreError(`syslog query failed on ${this.dialect}: ${(err as Error).message}`, { cause: err });
    }
  }

  private async findRows(filter: SyslogFilter, page: PageRequest): Promise<Row[]> {
    const offset = (page.page - 1) * page.perPage;
    const limit = page.perPage + 1;
    const need = offset + limit;
    const info = await this.tableInfo();
    const where = this.where(filter);
    const cols = this.columns(info);

    if (info.hasTimeIndex) return this.exact(cols, where, limit, offset);

    const bounds = await this.idBounds();
    if (!bounds) return [];
    let { lo, hi } = bounds;
    if (filter.endTime !== undefined) {
      const after = await this.firstId(lo, hi, (t) => t > filter.endTime!);
      hi = Math.min(hi, after - 1 + this.reorderWindow);
    }
    if (filter.startTime !== undefined) {
      const first = await this.firstId(lo, hi, (t) => t >= filter.startTime!);
      lo = Math.max(lo, first - this.reorderWindow);
    }
    if (hi < lo) return [];
    const ranged: Where = { sql: `ID BETWEEN ? AND ? AND ${where.sql}`, params: [lo, hi, ...where.params] };
    if (hi - lo + 1 <= this.exactBelowRows) return this.exact(cols, ranged, limit, offset);
    return (await this.walk(cols, where, lo, hi, need)).slice(offset, need);
  }

  private exact(cols: string, where: Where, limit: number, offset: number): Promise<Row[]> {
    return this.client.query<Row>(
      `SELECT ${cols} FROM SystemEvents WHERE ${where.sql} ORDER BY ${this.orderBy} LIMIT ? OFFSET ?`,
      [...where.params, limit, offset],
    );
  }

  private async idBounds(): Promise<{ lo: number; hi: number } | undefined> {
    // Two sub-selects, so every database answers each from the primary key alone.
    const [row] = await this.client.query<{ lo: number | string | null; hi: number | string | null }>(
      'SELECT (SELECT MIN(ID) FROM SystemEvents) AS lo, (SELECT MAX(ID) FROM SystemEvents) AS hi',
    );
    if (!row || row.lo === null || row.hi === null) return undefined;
    return { lo: Number(row.lo), hi: Number(row.hi) };
  }

  /** Smallest ID in [lo, hi] whose ReceivedAt satisfies `pred`, assuming ReceivedAt grows with ID; hi + 1 if none. */
  private async firstId(lo: number, hi: number, pred: (receivedAt: string) => boolean): Promise<number> {
    let a = lo;
    let b = hi;
    let best = hi + 1;
    while (a <= b) {
      const mid = Math.floor((a + b) / 2);
      const [probe] = await this.client.query<{ id: number | string; receivedat: string }>(
        'SELECT ID AS id, ReceivedAt AS receivedat FROM SystemEvents WHERE ID BETWEEN ? AND ? AND ReceivedAt IS NOT NULL ORDER BY ID LIMIT 1',
        [mid, b],
      );
      if (!probe) {
        b = mid - 1;
        continue;
      }
      const id = Number(probe.id);
      if (pred(String(probe.receivedat))) {
        best = id;
        b = mid - 1;
      } else {
        a = id + 1;
      }
    }
    return best;
  }

  /** Walks [lo, hi] newest-first in growing ID ranges until `need` rows are sorted right. */
  private async walk(cols: string, where: Where, lo: number, hi: number, need: number): Promise<Row[]> {
    // Rows without ReceivedAt sort after all others wherever their ID is, so they are
    // left out of the walk and only fetched once the walk has read the whole range.
    const sql = `SELECT ${cols} FROM SystemEvents WHERE ID BETWEEN ? AND ? AND ReceivedAt IS NOT NULL AND ${where.sql} ORDER BY ${this.orderBy} LIMIT ?`;
    let rows: Row[] = [];
    let top = hi;
    let chunk = Math.min(this.maxChunkRows, Math.max(need * 2, 256));
    let satisfied = false;
    while (top >= lo) {
      if (satisfied && this.reorderWindow === 0) break;
      const bottom = satisfied ? Math.max(lo, top - this.reorderWindow + 1) : Math.max(lo, top - chunk + 1);
      const got = await this.client.query<Row>(sql, [bottom, top, ...where.params, need]);
      rows = rows.concat(got);
      if (rows.length > need * 2) rows = rows.sort(compareRows).slice(0, need);
      top = bottom - 1;
      if (satisfied) break;
      if (rows.length >= need) satisfied = true;
      else chunk = Math.min(this.maxChunkRows, chunk * 4);
    }
    rows = rows.sort(compareRows).slice(0, need);
    if (rows.length < need) {
      const undated = await this.client.query<Row>(
        `SELECT ${cols} FROM SystemEvents WHERE ID BETWEEN ? AND ? AND ReceivedAt IS NULL AND ${where.sql} ORDER BY ID DESC LIMIT ?`,
        [lo, hi, ...where.params, need - rows.length],
      );
      rows = rows.concat(undated);
    }
    return rows;
  }

  async insertEvents(events: readonly SyslogEvent[]): Promise<void> {
    if (events.length === 0) return;
    await this.client.transaction(async (tx) => {
      for (let i = 0; i < events.length; i += INSERT_CHUNK) {
        const slice = events.slice(i, i + INSERT_CHUNK);
        const params: unknown[] = [];
        for (const e of slice) {
          params.push(e.message, e.facility, e.fromHost, e.priority, e.deviceReportedTime, e.receivedAt, 1, e.sysLogTag);
        }
        // The columns and InfoUnitID = 1 of rsyslog's stock StdDBFmt/StdPgSQLFmt templates.
        await tx.execute(
          'INSERT INTO SystemEvents (Message, Facility, FromHost, Priority, DeviceReportedTime, ReceivedAt, InfoUnitID, SysLogTag) VALUES ' +
            slice.map(() => '(?, ?, ?, ?, ?, ?, ?, ?)').join(', '),
          params,
        );
      }
    });
  }
}
