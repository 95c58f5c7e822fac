/**
 * One suite, every database: SQLite, MariaDB and PostgreSQL, each over the
 * SystemEvents table its schema file creates, and each three ways: the
 * primary-key walk with its defaults (one step reads these tables whole),
 * the same walk in tiny steps with a small reorder window, and the plain
 * ORDER BY the `db index` indexes serve.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dialectSupport } from '../../../storage/sql/dialect-support.js';
import type { Dialect, SqlClient, SqlStatements } from '../../../storage/sql/sql-client.js';
import { MysqlSyslogStore } from '../../../storage/syslog/mysql-syslog-store.js';
import { openSyslogStore } from '../../../storage/syslog/open-syslog-store.js';
import { PostgresSyslogStore } from '../../../storage/syslog/postgres-syslog-store.js';
import type { SqlSyslogStore, SyslogStoreOptions } from '../../../storage/syslog/sql-syslog-store.js';
import { SqliteSyslogStore } from '../../../storage/syslog/sqlite-syslog-store.js';
import type { SyslogFilter } from '../../../storage/syslog/syslog-store.js';
import { availableDialects } from '../../helpers/databases.js';
import {
  clientFor,
  countRows,
  createSystemEventsDatabase,
  DIALECT_LABEL,
  modelMatches,
  modelPage,
  seed,
  type SeedRow,
  type StoredRow,
  type SystemEventsDatabase,
} from './system-events.js';

const dialects = await availableDialects();

const HOSTS = ['routerA', 'routerB', 'RouterA', 'routerA ', 'ap-1', "x' OR '1'='1", 'h%', 'h_1'];
const TAGS = [
  'hostapd:',
  'hostapd[812]:',
  'hostapd',
  'hostapd[99]',
  'hostapdx:',
  'sshd[1]:',
  'kernel:',
  '%:',
  'a_b',
  'tag*[1]:',
  'bad\\tag',
];
const MESSAGES = [
  ' load 100% done',
  'a_b here',
  'back\\slash',
  `it's "quoted"`,
  'Mixed CASE text',
  'plain',
  'drop; table SystemEvents',
  'bang!x',
  'héllo ✓',
];

function fmt(ms: number): string {
  return new Date(ms).toISOString().slice(0, 19).replace('T', ' ');
}

/** 80 rows, 30 min apart from 2025-07-04 20:00, with ties, a few swapped neighbours and one row without ReceivedAt. */
function dataset(): SeedRow[] {
  const base = Date.UTC(2025, 6, 4, 20, 0, 0);
  const times: Array<string | null> = [];
  for (let i = 0; i < 80; i++) times.push(fmt(base + i * 30 * 60_000));
  for (let i = 0; i < 80; i++) {
    if (i % 13 === 5) [times[i - 1], times[i]] = [times[i]!, times[i - 1]!]; // inserted out of order
    if (i % 17 === 3) times[i] = times[i - 1]!; // same second as the row before
  }
  times[40] = null;
  return times.map((receivedAt, i) => ({
    receivedAt,
    deviceReportedTime: fmt(base + i * 30 * 60_000 - 1000),
    host: HOSTS[i % HOSTS.length]!,
    tag: TAGS[(i * 3) % TAGS.length]!,
    priority: (i * 5) % 8,
    facility: (i * 7) % 24,
    message: `${MESSAGES[(i * 7) % MESSAGES.length]!} #${i}`,
  }));
}

const FILTERS: SyslogFilter[] = [
  {},
  ...HOSTS.map((host) => ({ host })),
  { host: 'nowhere' },
  { host: 'routera' },
  ...[0, 1, 2, 3, 4, 5, 6, 7].map((priority) => ({ priority })),
  ...[
    'hostapd',
    'hostapd:',
    'hostapd[812]:',
    'hostapd[1]',
    'sshd',
    'sshd[7]:',
    'kernel:',
    '%',
    '%:',
    'a_b',
    'a%b',
    'tag*',
    'tag*[5]:',
    'bad\\tag',
    'host',
    'HOSTAPD',
  ].map((tag) => ({ tag })),
  ...['100%', '%', '_', 'a_b', '\\', "'", '"', ';', '!', 'mixed case', 'MIXED', 'héllo', '#1', 'zzz', "' OR 1=1 --"].map(
    (message) => ({ message }),
  ),
  { startTime: '2025-07-05 00:00:00', endTime: '2025-07-06 00:00:00' },
  { startTime: '2025-07-05 10:00:00' },
  { endTime: '2025-07-05 10:00:00' },
  { startTime: '2025-07-05 10:15:00', endTime: '2025-07-05 10:45:00' },
  { startTime: '2030-01-01 00:00:00' },
  { endTime: '2020-01-01 00:00:00' },
  { host: 'routerA', priority: 0 },
  { host: 'routerB', tag: 'hostapd' },
  { tag: 'hostapd', message: '#', startTime: '2025-07-05 00:00:00', endTime: '2025-07-06 06:00:00' },
  { host: 'ap-1', priority: 4, tag: 'sshd', message: 'x', startTime: '2025-07-04 00:00:00', endTime: '2025-07-07 00:00:00' },
];

const MODES: Array<{ name: string; options: SyslogStoreOptions; indexed: boolean }> = [
  { name: 'primary-key walk, defaults', options: {}, indexed: false },
  { name: 'primary-key walk, tiny steps', options: { reorderWindow: 3, maxChunkRows: 16 }, indexed: false },
  { name: 'with db index', options: {}, indexed: true },
];

const cases = dialects.flatMap((d) => MODES.map((m) => [`${DIALECT_LABEL[d]}, ${m.name}`, d, m] as const));

describe.each(cases)('SyslogStore on %s', (_label, dialect, mode) => {
  let events: SystemEventsDatabase;
  let client: SqlClient;
  let store: SqlSyslogStore;
  let rows: StoredRow[];

  beforeAll(async () => {
    events = await createSystemEventsDatabase(dialect, 'netsvc_syslog');
    client = events.client;
    rows = await seed(client, dataset());
    store = openSyslogStore(events.db.url, '/', mode.options);
    if (mode.indexed) {
      const report = await store.createIndexes();
      expect(report.created).toHaveLength(4);
    }
  });

  afterAll(async () => {
    await store?.close();
    await events?.close();
  });

  it('returns every page of every filter exactly as the rules say, newest first', async () => {
    for (const filter of FILTERS) {
      const total = rows.filter((r) => modelMatches(r, filter)).length;
      for (let page = 1; page <= Math.ceil(total / 7) + 1; page++) {
        const got = (await store.find(filter, { page, perPage: 7 })).map((r) => r.ID);
        expect(got, `${JSON.stringify(filter)} page ${page}`).toEqual(modelPage(rows, filter, page, 7));
      }
      const all = (await store.find(filter, { page: 1, perPage: 2000 })).map((r) => r.ID);
      expect(all, JSON.stringify(filter)).toEqual(modelPage(rows, filter, 1, 2000));
    }
  });

  it('matches the program whatever form the tag takes, and nothing else', async () => {
    const expected = ['hostapd', 'hostapd:', 'hostapd[812]:', 'hostapd[99]'];
    for (const tag of ['hostapd', 'hostapd:', 'hostapd[812]:']) {
      const got = await store.find({ tag }, { page: 1, perPage: 2000 });
      expect(new Set(got.map((r) => r.SysLogTag))).toEqual(new Set(expected));
    }
    expect(await store.find({ tag: 'host' }, { page: 1, perPage: 10 })).toEqual([]);
    expect(await store.find({ tag: 'HOSTAPD' }, { page: 1, perPage: 10 })).toEqual([]);
  });

  it('matches host exactly: no other case, no trailing space', async () => {
    const got = await store.find({ host: 'routerA' }, { page: 1, perPage: 2000 });
    expect(got.length).toBe(10);
    expect(new Set(got.map((r) => r.FromHost))).toEqual(new Set(['routerA']));
  });

  it('takes %, _ and \\ in the message literally and ignores letter case', async () => {
    const pct = await store.find({ message: '100%' }, { page: 1, perPage: 2000 });
    expect(pct.length).toBeGreaterThan(0);
    expect(pct.every((r) => r.Message.includes('100%'))).toBe(true);
    const underscore = await store.find({ message: '_' }, { page: 1, perPage: 2000 });
    expect(underscore.every((r) => r.Message.includes('_'))).toBe(true);
    const backslash = await store.find({ message: '\\' }, { page: 1, perPage: 2000 });
    expect(backslash.length).toBeGreaterThan(0);
    expect(backslash.every((r) => r.Message.includes('\\'))).toBe(true);
    const mixed = await store.find({ message: 'mixed case' }, { page: 1, perPage: 2000 });
    expect(mixed.length).toBeGreaterThan(0);
    expect(mixed.every((r) => r.Message.startsWith('Mixed CASE'))).toBe(true);
  });

  it('treats both time bounds as inclusive on ReceivedAt', async () => {
    const got = await store.find(
      { startTime: '2025-07-05 00:00:00', endTime: '2025-07-06 00:00:00' },
      { page: 1, perPage: 2000 },
    );
    const times = got.map((r) => r.ReceivedAt);
    expect(times).toContain('2025-07-05 00:00:00');
    expect(times).toContain('2025-07-06 00:00:00');
    expect(times.every((t) => t !== null && t >= '2025-07-05 00:00:00' && t <= '2025-07-06 00:00:00')).toBe(true);
  });

  it('pages: empty result, exact multiple of perPage, partial last page', async () => {
    expect(await store.find({ host: 'nowhere' }, { page: 1, perPage: 5 })).toEqual([]);
    const routerB = rows.filter((r) => r.host === 'routerB');
    expect(routerB).toHaveLength(10);
    expect(await store.find({ host: 'routerB' }, { page: 1, perPage: 5 })).toHaveLength(6);
    expect(await store.find({ host: 'routerB' }, { page: 2, perPage: 5 })).toHaveLength(5);
    expect(await store.find({ host: 'routerB' }, { page: 3, perPage: 5 })).toEqual([]);
    expect(await store.find({ host: 'routerB' }, { page: 3, perPage: 4 })).toHaveLength(2);
  });

  it('returns the record fields of api.md 2.3 with the pid taken from the tag', async () => {
    const newest = rows
      .filter((r) => r.receivedAt !== null)
      .sort((a, b) => (a.receivedAt! < b.receivedAt! ? 1 : a.receivedAt! > b.receivedAt! ? -1 : b.id - a.id))[0]!;
    const [first] = await store.find({}, { page: 1, perPage: 1 });
    expect(first).toEqual({
      ID: newest.id,
      DeviceReportedTime: newest.deviceReportedTime,
      ReceivedAt: newest.receivedAt,
      FromHost: newest.host,
      SysLogTag: newest.tag,
      processid: /\[(\d+)\]:?$/.exec(newest.tag)?.[1] ?? '',
      Message: newest.message,
      Priority: newest.priority,
    });
    const sshd = await store.find({ tag: 'sshd' }, { page: 1, perPage: 1 });
    expect(sshd[0]?.processid).toBe('1');
    const kernel = await store.find({ tag: 'kernel' }, { page: 1, perPage: 1 });
    expect(kernel[0]?.processid).toBe('');
  });

  it('puts a row without ReceivedAt last', async () => {
    const all = await store.find({}, { page: 1, perPage: 2000 });
    expect(all.at(-1)?.ReceivedAt).toBeNull();
    expect(all).toHaveLength(rows.length);
  });

  it('changes nothing, whatever SQL the filters carry', async () => {
    const before = await countRows(client);
    for (const value of [
      "'; DELETE FROM SystemEvents; --",
      "x' OR '1'='1",
      '"; DROP TABLE SystemEvents; --',
      '\\',
      '%',
      '_',
      '*',
      '[',
      '?',
    ]) {
      for (const filter of [{ host: value }, { tag: value }, { message: value }] as SyslogFilter[]) {
        const got = (await store.find(filter, { page: 1, perPage: 2000 })).map((r) => r.ID);
        expect(got, JSON.stringify(filter)).toEqual(modelPage(rows, filter, 1, 2000));
      }
    }
    expect(await countRows(client)).toBe(before);
  });
});

describe.each(dialects)('SyslogStore with a ProcessID column (LogAnalyzer schema) on %s', (dialect) => {
  let events: SystemEventsDatabase;
  let client: SqlClient;
  let store: SqlSyslogStore;

  beforeAll(async () => {
    events = await createSystemEventsDatabase(dialect, 'netsvc_syslog', { processIdColumn: true });
    client = events.client;
    const base = { deviceReportedTime: '2025-07-05 10:00:00', host: 'h', priority: 6, facility: 1, message: 'm' };
    await seed(
      client,
      [
        { ...base, receivedAt: '2025-07-05 10:00:01', tag: 'sshd[812]:', processId: '4242' },
        { ...base, receivedAt: '2025-07-05 10:00:02', tag: 'sshd[812]:', processId: '' },
        { ...base, receivedAt: '2025-07-05 10:00:03', tag: 'cron:', processId: '' },
      ],
      { processIdColumn: true },
    );
    store = openSyslogStore(events.db.url, '/');
  });

  afterAll(async () => {
    await store?.close();
    await events?.close();
  });

  it('takes processid from the column, else from the tag, else ""', async () => {
    const got = await store.find({}, { page: 1, perPage: 10 });
    expect(got.map((r) => r.processid)).toEqual(['', '812', '4242']);
  });
});

describe.each(dialects)('SyslogStore indexes and inserts on %s', (dialect) => {
  let events: SystemEventsDatabase;
  let client: SqlClient;
  let store: SqlSyslogStore;

  beforeAll(async () => {
    events = await createSystemEventsDatabase(dialect, 'netsvc_syslog');
    client = events.client;
    store = openSyslogStore(events.db.url, '/');
  });

  afterAll(async () => {
    await store?.close();
    await events?.close();
  });

  it('creates the four indexes once, reports them as existing the second time, and drops them', async () => {
    const first = await store.createIndexes();
    expect(first.created.sort()).toEqual([
      'netsvc_syslog_host',
      'netsvc_syslog_priority',
      'netsvc_syslog_received',
      'netsvc_syslog_tag',
    ]);
    const second = await store.createIndexes();
    expect(second.created).toEqual([]);
    expect(second.existing).toHaveLength(4);
    expect((await store.dropIndexes()).sort()).toEqual(first.created);
    expect(await store.dropIndexes()).toEqual([]);
  });

  it('stores events in the columns rsyslog fills and reads them back', async () => {
    const long = 'x'.repeat(5000);
    await store.insertEvents([
      {
        deviceReportedTime: '2025-07-05 10:00:00',
        receivedAt: '2025-07-05 10:00:02',
        fromHost: 'ap-1',
        sysLogTag: 'hostapd[812]:',
        priority: 4,
        facility: 16,
        message: ` it's 100% "ok" \\ ${long}`,
      },
      {
        deviceReportedTime: '2025-07-05 10:00:01',
        receivedAt: '2025-07-05 10:00:02',
        fromHost: 'ap-2',
        sysLogTag: 'app',
        priority: 7,
        facility: 23,
        message: 'héllo ✓',
      },
    ]);
    const got = await store.find({}, { page: 1, perPage: 10 });
    expect(
      got.map((r) => [r.FromHost, r.SysLogTag, r.processid, r.Priority, r.DeviceReportedTime, r.ReceivedAt, r.Message]),
    ).toEqual([
      ['ap-2', 'app', '', 7, '2025-07-05 10:00:01', '2025-07-05 10:00:02', 'héllo ✓'],
      ['ap-1', 'hostapd[812]:', '812', 4, '2025-07-05 10:00:00', '2025-07-05 10:00:02', ` it's 100% "ok" \\ ${long}`],
    ]);
    const [row] = await client.query<{ facility: number; infounitid: number }>(
      'SELECT Facility AS facility, InfoUnitID AS infounitid FROM SystemEvents WHERE FromHost = ?',
      ['ap-1'],
    );
    expect([Number(row?.facility), Number(row?.infounitid)]).toEqual([16, 1]);
  });

  it('fails with a SyslogStoreError when the table is missing', async () => {
    await client.execute('DROP TABLE SystemEvents');
    store.forgetTableInfo();
    await expect(store.find({}, { page: 1, perPage: 10 })).rejects.toMatchObject({
      name: 'SyslogStoreError',
      code: 'schema_missing',
    });
  });
});

describe.each(dialects)('SyslogStore primary-key walk over deleted ID ranges on %s', (dialect) => {
  let events: SystemEventsDatabase;
  let client: SqlClient;
  let store: SqlSyslogStore;
  let rows: StoredRow[];

  beforeAll(async () => {
    events = await createSystemEventsDatabase(dialect, 'netsvc_syslog');
    client = events.client;
    const base = Date.UTC(2025, 6, 1);
    const seedRows: SeedRow[] = [];
    for (let i = 0; i < 3000; i++) {
      // One row a minute, each fifth pair swapped: out of ID order by one row.
      const minute = i % 5 === 1 ? i - 1 : i % 5 === 0 && i > 0 ? i + 1 : i;
      seedRows.push({
        receivedAt: fmt(base + minute * 60_000),
        deviceReportedTime: fmt(base + minute * 60_000),
        host: `h${i % 7}`,
        tag: `p${i % 3}[${i}]:`,
        priority: i % 8,
        facility: 1,
        message: `m${i}`,
      });
    }
    const loader = openSyslogStore(events.db.url, '/');
    await loader.insertEvents(
      seedRows.map((r) => ({
        deviceReportedTime: r.deviceReportedTime,
        receivedAt: r.receivedAt!,
        fromHost: r.host,
        sysLogTag: r.tag,
        priority: r.priority,
        facility: r.facility,
        message: r.message,
      })),
    );
    await loader.close();
    const ids = await client.query<{ id: number }>('SELECT ID AS id FROM SystemEvents ORDER BY ID');
    rows = seedRows.map((r, i) => ({ ...r, id: Number(ids[i]!.id) }));
    // Retention jobs and manual clean-ups leave holes in the ID sequence.
    const [from, to] = [rows[1000]!.id, rows[2200]!.id];
    await client.execute('DELETE FROM SystemEvents WHERE ID BETWEEN ? AND ?', [from, to]);
    rows = rows.filter((r) => r.id < from || r.id > to);
    store = openSyslogStore(events.db.url, '/', { reorderWindow: 5, maxChunkRows: 200 });
  });

  afterAll(async () => {
    await store?.close();
    await events?.close();
  });

  it('finds time ranges on both sides of and across the hole, page by page', async () => {
    const t = (minute: number): string => fmt(Date.UTC(2025, 6, 1) + minute * 60_000);
    const filters: SyslogFilter[] = [
      {},
      { startTime: t(990), endTime: t(2300) },
      { startTime: t(1500), endTime: t(2100) },
      { startTime: t(2201) },
      { endTime: t(999) },
      { startTime: t(10), endTime: t(2990), host: 'h3', priority: 3 },
      { tag: 'p1', startTime: t(2500) },
    ];
    for (const filter of filters) {
      for (const [page, perPage] of [
        [1, 50],
        [2, 50],
        [7, 100],
        [1, 2000],
      ] as const) {
        const got = (await store.find(filter, { page, perPage })).map((r) => r.ID);
        expect(got, `${JSON.stringify(filter)} page ${page}/${perPage}`).toEqual(modelPage(rows, filter, page, perPage));
      }
    }
  });
});

/** A client that records how many rows each query hands back: what a store can be holding at once. */
function countingClient(inner: SqlClient, counts: number[]): SqlClient {
  const statements: SqlStatements = {
    dialect: inner.dialect,
    async query<T>(sql: string, params?: readonly unknown[]): Promise<T[]> {
      const rows = await inner.query<T>(sql, params);
      counts.push(rows.length);
      return rows;
    },
    execute: (sql, params) => inner.execute(sql, params),
  };
  // The schema is read through the counting statements too.
  return {
    ...statements,
    ...dialectSupport(statements),
    transaction: (fn) => inner.transaction(fn),
    close: () => inner.close(),
  };
}

const STORES: Record<Dialect, new (client: SqlClient, options?: SyslogStoreOptions) => SqlSyslogStore> = {
  sqlite: SqliteSyslogStore,
  mysql: MysqlSyslogStore,
  postgres: PostgresSyslogStore,
};

describe.each(dialects)('SyslogStore deep pages on a table without indexes on %s', (dialect) => {
  // The walk serves pages ending within 400 rows here; the table holds 3 000.
  const maxWalkRows = 400;
  let events: SystemEventsDatabase;
  let store: SqlSyslogStore;
  let rows: StoredRow[];
  const counts: number[] = [];

  beforeAll(async () => {
    events = await createSystemEventsDatabase(dialect, 'netsvc_syslog');
    const base = Date.UTC(2025, 6, 1);
    const seedRows: SeedRow[] = [];
    for (let i = 0; i < 3000; i++) {
      // One row a minute, a few neighbours swapped and a few sharing a second.
      const minute = i % 11 === 1 ? i - 1 : i % 11 === 0 && i > 0 ? i + 1 : i % 13 === 7 ? i - 1 : i;
      seedRows.push({
        receivedAt: fmt(base + minute * 60_000),
        deviceReportedTime: fmt(base + minute * 60_000),
        host: `h${i % 7}`,
        tag: `p${i % 3}[${i}]:`,
        priority: i % 8,
        facility: 1,
        message: `m${i}`,
      });
    }
    const loader = openSyslogStore(events.db.url, '/');
    await loader.insertEvents(
      seedRows.map((r) => ({
        deviceReportedTime: r.deviceReportedTime,
        receivedAt: r.receivedAt!,
        fromHost: r.host,
        sysLogTag: r.tag,
        priority: r.priority,
        facility: r.facility,
        message: r.message,
      })),
    );
    await loader.close();
    const ids = await events.client.query<{ id: number }>('SELECT ID AS id FROM SystemEvents ORDER BY ID');
    rows = seedRows.map((r, i) => ({ ...r, id: Number(ids[i]!.id) }));
    const options = { maxWalkRows, reorderWindow: 5, maxChunkRows: 200, introspectTtlMs: 3_600_000 };
    store = new STORES[dialect](countingClient(clientFor(events.db.url), counts), options);
    await store.find({}, { page: 1, perPage: 1 }); // reads the table facts once, before the counting starts
  });

  afterAll(async () => {
    await store?.close();
    await events?.close();
  });

  it('returns exactly the rows of any page, however deep, never holding more than the bound', async () => {
    const t = (minute: number): string => fmt(Date.UTC(2025, 6, 1) + minute * 60_000);
    const cases: Array<[SyslogFilter, number, number]> = [
      [{}, 3, 100], // ends at row 301: walked
      [{}, 4, 100], // ends at row 401: one past the bound
      [{}, 20, 100],
      [{}, 30, 100], // the last page
      [{}, 31, 100], // past the end
      [{}, 2, 2000],
      [{}, 2999, 1],
      [{ host: 'h3' }, 4, 100],
      [{ priority: 5, tag: 'p2' }, 2, 100],
      [{ message: 'M1' }, 6, 100],
      [{ startTime: t(500), endTime: t(2500) }, 15, 100],
      [{ startTime: t(2000) }, 2, 500],
    ];
    for (const [filter, page, perPage] of cases) {
      counts.length = 0;
      const got = (await store.find(filter, { page, perPage })).map((r) => r.ID);
      const label = `${JSON.stringify(filter)} page ${page}/${perPage}`;
      expect(got, label).toEqual(modelPage(rows, filter, page, perPage));
      expect(Math.max(...counts), `${label}: rows of one query`).toBeLessThanOrEqual(Math.max(maxWalkRows, perPage + 1));
      if (page * perPage + 1 > maxWalkRows) {
        // The database sorts deep pages: what comes back is the page, nothing more.
        expect(
          counts.reduce((a, b) => a + b, 0),
          `${label}: rows read in all`,
        ).toBeLessThanOrEqual(perPage + 1);
      }
    }
  });
});
