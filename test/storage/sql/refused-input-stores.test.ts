/**
 * The stores under the safety net: a value PostgreSQL refuses, handed to a
 * store directly (past the API's checks), comes out as the store's
 * bad-input error (RADIUS `invalid`, SyslogInputError), not as an outage and
 * not as a raw driver error, and nothing of a refused write is kept.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RadiusStoreError } from '../../../storage/radius/radius-store.js';
import { openSyslogStore } from '../../../storage/syslog/open-syslog-store.js';
import { SyslogInputError, type SyslogStore } from '../../../storage/syslog/syslog-store.js';
import { availableDialects } from '../../helpers/databases.js';
import { createRadiusDatabase, type RadiusTestDatabase } from '../../helpers/radius.js';
import { createSystemEventsDatabase, seed, type SystemEventsDatabase } from '../syslog/system-events.js';

const dialects = await availableDialects();
const PAGE = { page: 1, perPage: 10 };
const NUL = 'a\u0000b';

const refusal = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (e: unknown) => e,
  );

describe.runIf(dialects.includes('postgres'))('stores on PostgreSQL refusing a value', () => {
  let radius: RadiusTestDatabase;
  let events: SystemEventsDatabase;
  let syslog: SyslogStore;

  beforeAll(async () => {
    radius = await createRadiusDatabase('postgres', { timeZone: 'UTC' });
    events = await createSystemEventsDatabase('postgres', 'netsvc_refused_input');
    // A row, so the store reaches the filter (an empty table is answered before any condition is sent).
    await seed(events.client, [
      {
        receivedAt: '2025-07-04 10:00:00',
        deviceReportedTime: '2025-07-04 10:00:00',
        host: 'r',
        tag: 't:',
        priority: 6,
        facility: 4,
        message: 'm',
      },
    ]);
    syslog = openSyslogStore(events.db.url, '/');
  });

  afterAll(async () => {
    await syslog?.close();
    await events?.close();
    await radius?.close();
  });

  it('a RADIUS report filter with a NUL byte is `invalid`', async () => {
    const err = await refusal(radius.store.historicalSessions({ username: NUL }, PAGE));
    expect(err).toBeInstanceOf(RadiusStoreError);
    expect(err).toMatchObject({ code: 'invalid', message: expect.stringContaining('character') });
  });

  it('a user write with a NUL byte is `invalid` and writes nothing', async () => {
    const err = await refusal(radius.store.createUser({ username: 'nul-user', usertype: 'pin', company: NUL }, { name: 'test' }));
    expect(err).toMatchObject({ code: 'invalid' });
    expect(await radius.raw.query("SELECT username FROM radcheck WHERE username = 'nul-user'")).toEqual([]);
    expect(await radius.raw.query("SELECT username FROM netsvc_userinfo WHERE username = 'nul-user'")).toEqual([]);
  });

  it('a syslog filter with a NUL byte is SyslogInputError', async () => {
    expect(await refusal(syslog.find({ host: NUL }, PAGE))).toBeInstanceOf(SyslogInputError);
    expect(await refusal(syslog.find({ startTime: '0000-01-01 00:00:00' }, PAGE))).toBeInstanceOf(SyslogInputError);
  });
});

describe.runIf(dialects.includes('mysql'))('stores on MariaDB tables in latin1 refusing a character', () => {
  // rsyslog's createDB.sql and FreeRADIUS's schema.sql name no character set: on a server whose default is
  // latin1, a filter with a character latin1 lacks cannot even be compared (1267, illegal mix of collations).
  const EMOJI = 'x\u{1F600}';
  let radius: RadiusTestDatabase;
  let events: SystemEventsDatabase;
  let syslog: SyslogStore;

  beforeAll(async () => {
    radius = await createRadiusDatabase('mysql', { timeZone: 'UTC' });
    await radius.raw.execute('ALTER TABLE radacct CONVERT TO CHARACTER SET latin1');
    events = await createSystemEventsDatabase('mysql', 'netsvc_refused_latin1');
    await events.client.execute('ALTER TABLE SystemEvents CONVERT TO CHARACTER SET latin1');
    await seed(events.client, [
      {
        receivedAt: '2025-07-04 10:00:00',
        deviceReportedTime: '2025-07-04 10:00:00',
        host: 'r',
        tag: 't:',
        priority: 6,
        facility: 4,
        message: 'm',
      },
    ]);
    syslog = openSyslogStore(events.db.url, '/');
  });

  afterAll(async () => {
    await syslog?.close();
    await events?.close();
    await radius?.close();
  });

  it('a syslog filter is SyslogInputError, whichever text filter holds it', async () => {
    for (const f of [{ host: EMOJI }, { message: EMOJI }, { tag: EMOJI }]) {
      expect(await refusal(syslog.find(f, PAGE)), JSON.stringify(f)).toBeInstanceOf(SyslogInputError);
    }
  });

  it('a RADIUS report filter is `invalid`', async () => {
    expect(await refusal(radius.store.historicalSessions({ username: EMOJI }, PAGE))).toMatchObject({ code: 'invalid' });
  });
});
