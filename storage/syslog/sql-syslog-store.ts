/**
 * What the three SystemEvents stores share: filter SQL, row mapping, batched
 * inserts, and the query plan that keeps page 1 fast on tables of millions of
 * rows that have no index but the primary key (rsyslog's stock schema).
 *
 * Plan. Results are ordered by (ReceivedAt desc, ID desc).
 *  - When an index leads with ReceivedAt (`netsvc db index syslog`), one
 *    plain `ORDER BY … LIMIT … OFFSET …` does it, the database walking an
 *    index in page order. Not for a message substring alone: there the index
 *    walk costs a random row read per row looked at.
 *  - Otherwise the primary key is walked newest-first in ID ranges that grow
 *    while matches are sparse: each range is filtered and sorted by the
 *    database (ID and ReceivedAt only), until the page is settled, then the
 *    page's full rows are read by ID. rsyslog inserts rows in the order it
 *    receives them, so ID order follows ReceivedAt; rows up to
 *    `reorderWindow` IDs out of that order still sort right.
 *  - A time range is first turned into an ID range by sampling ReceivedAt at
 *    evenly spaced IDs under the same assumption (widened by
 *    `reorderWindow`); the exact ReceivedAt condition is still applied to
 *    every row.
 *  - The walk keeps every row up to the end of the page in memory, so it only
 *    serves pages that end within `maxWalkRows` rows; a deeper page is the
 *    plain `ORDER BY … LIMIT … OFFSET …` again, the database sorting (slow
 *    without indexes, but in the database's bounded sort memory, not ours).
 */
import type { SyslogEvent, SyslogEventSink } from '../../common/syslog-event.js';
import { SqlInputError, SqlUnavailableError, type Dialect, type SqlClient } from '../sql/sql-client.js';
import {
  SyslogInputError,
  SyslogStoreError,
  type IndexReport,
  type PageRequest,
  type SyslogFilter,
  type SyslogIndexer,
  type SyslogRecord,
  type SyslogStore,
} from './syslog-store.js';
import type { StoreHealth } from '../store-health.js';
import { schemaStatements } from './schema-files.js';
import { pidOf, programOf } from './syslog-tag.js';
import {
  compareRows,
  INSERT_CHUNK,
  normaliseTime,
  type KeyRow,
  type SqlWhere,
  type SyslogStoreOptions,
  type SystemEventsRow,
  type TableInfo,
} from './system-events-sql.js';

export {
  escapeLike,
  INDEX_NAMES,
  type SqlWhere,
  type SyslogStoreOptions,
  type SystemEventsRow,
  type TableInfo,
} from './system-events-sql.js';

/** Shared implementation; subclasses supply dialect SQL and index DDL, the client the introspection. */
export abstract class SqlSyslogStore implements SyslogStore, SyslogEventSink, SyslogIndexer {
  abstract readonly dialect: Dialect;
  protected readonly maxChunkRows: number;
  protected readonly reorderWindow: number;
  protected readonly maxWalkRows: number;
  private readonly introspectTtlMs: number;
  private readonly now: () => number;
  private info: { value: TableInfo; at: number } | undefined;

  constructor(
    protected readonly client: SqlClient,
    options: SyslogStoreOptions = {},
  ) {
    this.maxChunkRows = Math.max(1, options.maxChunkRows ?? 1_000_000);
    this.reorderWindow = Math.max(0, options.reorderWindow ?? 2_000);
    this.maxWalkRows = Math.max(1, options.maxWalkRows ?? 50_000);
    this.introspectTtlMs = options.introspectTtlMs ?? 60_000;
    this.now = options.now ?? Date.now;
  }

  /** `column = value`, compared byte for byte (case- and trailing-space-sensitive). */
  protected abstract exactSql(column: string): string;
  /** How many parameters `exactSql` binds (the value is repeated where the dialect needs it). */
  protected abstract exactParams(value: string): unknown[];
  /** `column` starts with `value`, case-sensitive; returns SQL and its parameters. */
  protected abstract prefixSql(column: string, value: string): SqlWhere;
  /** `column` contains `value`, case-insensitive; returns SQL and its parameters. */
  protected abstract containsSql(column: string, value: string): SqlWhere;
  /** ORDER BY clause for newest first with NULL ReceivedAt last. */
  protected abstract readonly orderBy: string;
  /** Creates the `INDEX_NAMES` indexes that are missing; reports which were created. */
  abstract createIndexes(): Promise<IndexReport>;
  /** Drops the `INDEX_NAMES` indexes that exist. */
  abstract dropIndexes(): Promise<string[]>;

  async close(): Promise<void> {
    await this.client.close();
  }

  async hasSystemEvents(): Promise<boolean> {
    try {
      await this.introspect();
      return true;
    } catch (err) {
      // No database to ask is not a missing table: say why it cannot be asked.
      if (err instanceof SqlUnavailableError) throw err;
      return false;
    }
  }

  async health(): Promise<StoreHealth> {
    try {
      return (await this.hasSystemEvents()) ? { state: 'ok' } : { state: 'schema_missing', detail: 'no SystemEvents table' };
    } catch (err) {
      return { state: 'unreachable', detail: (err as Error).message };
    }
  }

  async createPeerTables(): Promise<boolean> {
    if (await this.hasSystemEvents()) return false;
    for (const stmt of schemaStatements(this.client.dialect)) await this.client.execute(stmt);
    this.forgetTableInfo();
    return true;
  }

  /** Reads what the table looks like now, through the client's introspection; rejects when SystemEvents is missing. */
  protected async introspect(): Promise<TableInfo> {
    const columns = await this.client.columnNames('SystemEvents');
    if (columns.length === 0) throw new Error(`no SystemEvents table in this ${this.dialect} database`);
    const indexes = await this.client.indexes('SystemEvents');
    return {
      hasProcessId: columns.some((c) => c.toLowerCase() === 'processid'),
      // Scanned forward or backward, such an index yields ReceivedAt in DESC NULLS LAST order: DESC NULLS LAST
      // or ASC NULLS FIRST (on MariaDB and SQLite, where NULL is the lowest value, any index leading with it).
      hasTimeIndex: indexes.some((i) => i.valid && i.firstColumn === 'receivedat' && i.descending !== i.nullsFirst),
    };
  }

  /** The indexes SystemEvents has, by name: whether each is usable (only PostgreSQL has unusable ones). */
  protected async existingIndexes(): Promise<Map<string, boolean>> {
    return new Map((await this.client.indexes('SystemEvents')).map((i) => [i.name, i.valid]));
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

  private where(filter: SyslogFilter): SqlWhere {
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

  private toRecord(row: SystemEventsRow): SyslogRecord {
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
      throw await this.classified(err);
    }
  }

  /**
   * A failure of `find` as the API needs it: a refused filter value
   * (SyslogInputError), or SyslogStoreError `unavailable` / `storage_full`
   * (the client's SqlUnavailableError), `schema_missing` (SystemEvents is not
   * there, found by probing the schema, not by reading driver messages) or
   * `failed` (the database answered and has the table: a fault, not an outage).
   */
  private async classified(err: unknown): Promise<Error> {
    if (err instanceof SyslogStoreError || err instanceof SyslogInputError) return err;
    if (err instanceof SqlInputError)
      return new SyslogInputError(`the ${this.dialect} database refused a filter value: ${err.message}`, { cause: err });
    const message = (err as Error)?.message ?? String(err);
    if (err instanceof SqlUnavailableError) {
      return err.reason === 'disk_full'
        ? new SyslogStoreError('storage_full', `the ${this.dialect} syslog database has no space left: ${message}`, {
            cause: err,
          })
        : new SyslogStoreError('unavailable', `the ${this.dialect} syslog database cannot be reached: ${message}`, {
            cause: err,
          });
    }
    let present: boolean;
    try {
      present = await this.hasSystemEvents();
    } catch {
      return new SyslogStoreError('unavailable', `the ${this.dialect} syslog database cannot be reached: ${message}`, {
        cause: err,
      });
    }
    if (!present)
      return new SyslogStoreError('schema_missing', `the ${this.dialect} syslog database has no SystemEvents table: ${message}`, {
        cause: err,
      });
    return new SyslogStoreError('failed', `syslog query failed on ${this.dialect}: ${message}`, { cause: err });
  }

  private async findRows(filter: SyslogFilter, page: PageRequest): Promise<SystemEventsRow[]> {
    const offset = (page.page - 1) * page.perPage;
    const limit = page.perPage + 1;
    const need = offset + limit;
    const info = await this.tableInfo();
    const where = this.where(filter);
    const cols = this.columns(info);

    // With the db-index indexes the database walks an index in page order. Not for a message
    // substring alone, though: that index walk costs one random row read per row it looks at,
    // where the primary-key walk below reads rows in order (measured: 5x faster on MariaDB).
    const substringOnly =
      !!filter.message && filter.host === undefined && filter.priority === undefined && filter.tag === undefined;
    if (info.hasTimeIndex && !substringOnly) return this.exact(cols, where, limit, offset);
    // The walk holds every row up to the page's end in memory, and `page` has no upper bound
    // (api.md): a deep page is left to the database's sort, whose memory the database bounds.
    if (need > this.maxWalkRows) return this.exact(cols, where, limit, offset);

    const bounds = await this.idBounds();
    if (!bounds) return [];
    const { lo, hi } = await this.idRangeForTime(bounds.lo, bounds.hi, filter.startTime, filter.endTime);
    if (hi < lo) return [];
    // The walk reads ID and ReceivedAt only; the page's full rows are read last, by ID.
    const keys = (await this.walk(where, lo, hi, need)).slice(offset, need);
    if (keys.length === 0) return [];
    const full = await this.client.query<SystemEventsRow>(
      `SELECT ${cols} FROM SystemEvents WHERE ID IN (${keys.map(() => '?').join(', ')})`,
      keys.map((r) => r.id),
    );
    return full.sort(compareRows);
  }

  /**
   * One step of the walk: rows of an ID range (parameters: first ID, last ID, the condition's,
   * LIMIT), newest first. It must read the range through the primary key: given a time index,
   * planners like to walk that instead for ORDER BY … LIMIT, across the whole table.
   */
  protected walkSql(cols: string, whereSql: string): string {
    return `SELECT ${cols} FROM SystemEvents WHERE ID BETWEEN ? AND ? AND ${whereSql} ORDER BY ${this.orderBy} LIMIT ?`;
  }

  /** One page in (ReceivedAt desc, ID desc) order with LIMIT/OFFSET; the database picks the plan. */
  protected exact(cols: string, where: SqlWhere, limit: number, offset: number): Promise<SystemEventsRow[]> {
    return this.client.query<SystemEventsRow>(
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

  /**
   * The ID range that holds the rows of [startTime, endTime], assuming ReceivedAt grows with ID,
   * widened by `reorderWindow`. Both ends are narrowed together from samples of evenly spaced
   * IDs read in one statement per round (64 per end), so 10 M rows take two or three round trips;
   * narrowing stops once an end is known to within the window it is widened by anyway.
   */
  private async idRangeForTime(
    lo: number,
    hi: number,
    startTime?: string,
    endTime?: string,
  ): Promise<{ lo: number; hi: number }> {
    // For each bound, the first ID whose ReceivedAt passes the test lies in [a, b]; b = hi + 1: none does.
    const targets: Array<{ test: (t: string) => boolean; a: number; b: number }> = [];
    if (startTime !== undefined) targets.push({ test: (t) => t >= startTime, a: lo, b: hi + 1 });
    if (endTime !== undefined) targets.push({ test: (t) => t > endTime, a: lo, b: hi + 1 });
    const precision = Math.max(64, this.reorderWindow);
    for (let round = 0; round < 8; round++) {
      const open = targets.filter((t) => t.b - t.a > precision);
      if (open.length === 0) break;
      const ids = new Set<number>();
      for (const t of open) {
        const step = (t.b - t.a) / 64;
        for (let k = 1; k < 64; k++) ids.add(Math.floor(t.a + k * step));
      }
      const list = [...ids];
      const samples = await this.client.query<{ id: number | string; receivedat: string | null }>(
        `SELECT ID AS id, ReceivedAt AS receivedat FROM SystemEvents WHERE ID IN (${list.map(() => '?').join(', ')})`,
        list,
      );
      const known = samples
        .filter((r) => r.receivedat !== null)
        .map((r) => ({ id: Number(r.id), t: String(r.receivedat) }))
        .sort((x, y) => x.id - y.id);
      for (const t of open) {
        const inside = known.filter((s) => s.id > t.a && s.id < t.b);
        if (inside.length === 0) {
          // Deleted ranges: nothing sampled here, find this end by probing instead.
          const first = await this.firstId(t.a, Math.min(hi, t.b - 1), t.test);
          t.a = first;
          t.b = first;
          continue;
        }
        const firstPass = inside.findIndex((s) => t.test(s.t));
        if (firstPass === -1) t.a = inside[inside.length - 1]!.id;
        else {
          t.b = inside[firstPass]!.id;
          if (firstPass > 0) t.a = inside[firstPass - 1]!.id;
        }
      }
    }
    let from = lo;
    let to = hi;
    let i = 0;
    if (startTime !== undefined) from = Math.max(lo, targets[i++]!.a - this.reorderWindow);
    if (endTime !== undefined) to = Math.min(hi, targets[i]!.b - 1 + this.reorderWindow);
    return { lo: from, hi: to };
  }

  /** Smallest ID in [lo, hi] whose ReceivedAt passes `test`, assuming ReceivedAt grows with ID; hi + 1 if none. */
  private async firstId(lo: number, hi: number, test: (receivedAt: string) => boolean): Promise<number> {
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
      if (test(String(probe.receivedat))) {
        best = id;
        b = mid - 1;
      } else {
        a = id + 1;
      }
    }
    return best;
  }

  /**
   * Walks [lo, hi] newest-first in growing ID ranges. It may stop at `bottom` once `need` rows with
   * ReceivedAt and ID >= bottom + reorderWindow are in hand: every row below `bottom` is then older
   * than each of them (ID order follows ReceivedAt up to the window), so none can enter the page.
   * Rows without ReceivedAt sort last; they count for nothing and only show when the walk reads all.
   */
  private async walk(where: SqlWhere, lo: number, hi: number, need: number): Promise<KeyRow[]> {
    const sql = this.walkSql('ID AS id, ReceivedAt AS receivedat', where.sql);
    let rows: KeyRow[] = [];
    let top = hi;
    let chunk = Math.min(this.maxChunkRows, need * 2 + this.reorderWindow);
    while (top >= lo) {
      const bottom = Math.max(lo, top - chunk + 1);
      const got = await this.client.query<KeyRow>(sql, [bottom, top, ...where.params, need]);
      // Rows past the first `need` can never enter the page: keep at most `need` between steps.
      rows = rows.concat(got);
      if (rows.length > need) rows = rows.sort(compareRows).slice(0, need);
      top = bottom - 1;
      const safe = bottom + this.reorderWindow;
      let settled = 0;
      for (const r of rows) if (r.receivedat !== null && Number(r.id) >= safe) settled += 1;
      if (settled >= need) break;
      chunk = Math.min(this.maxChunkRows, chunk * 4);
    }
    return rows.sort(compareRows).slice(0, need);
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
