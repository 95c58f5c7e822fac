/** Database checks at start-up, on /health and in `netsvc status` (issue 19, point 4). */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DatabaseHealth } from '../../src/database-health.js';
import { createLogger } from '../../src/log.js';
import { startService, type ServiceHandle } from '../../src/main.js';
import { runCliCaptured } from '../helpers/cli.js';
import { availableDialects, createTestDatabase, type TestDatabase } from '../helpers/databases.js';
import { freePort } from '../helpers/net.js';
import { loopbackConfig } from '../helpers/service.js';

describe('DatabaseHealth', () => {
  it('reports a check that does not answer as unreachable after the time-out, and checks again only when the last is old', async () => {
    let clock = 0;
    let calls = 0;
    const health = new DatabaseHealth(
      [
        {
          entity: 'a',
          area: 'hotspot',
          database: 'mysql://db-a/radius',
          check: () => new Promise(() => undefined),
        },
        {
          entity: 'b',
          area: 'logviewer',
          database: 'postgres://db-b/syslog',
          check: async () => {
            calls++;
            return { state: 'ok' };
          },
        },
      ],
      { now: () => clock, timeoutMs: 50, maxAgeMs: 5000 },
    );
    expect(await health.states()).toEqual([
      {
        entity: 'a',
        area: 'hotspot',
        database: 'mysql://db-a/radius',
        kind: 'mysql',
        state: 'unreachable',
        detail: 'no answer within 50 ms',
      },
      { entity: 'b', area: 'logviewer', database: 'postgres://db-b/syslog', kind: 'postgres', state: 'ok' },
    ]);
    clock = 4999;
    await health.states();
    expect(calls).toBe(1);
    clock = 5000;
    await health.states();
    expect(calls).toBe(2);
  });
});

const servers = (await availableDialects()).filter((d) => d !== 'sqlite');

describe.skipIf(servers.length === 0)('netsvc serve with a database down and one without its tables', () => {
  let dir: string;
  let empty: TestDatabase;
  let service: ServiceHandle;
  const lines: Array<Record<string, unknown>> = [];
  let downUrl: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'netsvc-health-'));
    empty = await createTestDatabase(servers[0]!, 'netsvc_health');
    // Nothing listens there: connection refused.
    downUrl = `mysql://netsvc:s3cret@127.0.0.1:${await freePort()}/radius`;
    const sink = new Writable({
      write(chunk, _enc, cb) {
        lines.push(JSON.parse(String(chunk)) as Record<string, unknown>);
        cb();
      },
    });
    const config = loopbackConfig(dir, {
      entities: {
        default: { radius: 'sqlite:radius.sqlite', syslog: 'sqlite:syslog.sqlite' },
        branch: { radius: downUrl, syslog: empty.url },
      },
      'database.operationTimeoutMs': 2000,
    });
    service = await startService(config, { logger: createLogger('info', sink), now: Date.now });
  });

  afterAll(async () => {
    await service?.close();
    await empty?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('starts, and logs one warning per unusable database with its cause and what to do', async () => {
    let warnings: Array<Record<string, unknown>> = [];
    for (let i = 0; i < 100 && warnings.length < 2; i++) {
      await new Promise((r) => setTimeout(r, 50));
      warnings = lines.filter((l) => typeof l.msg === 'string' && l.msg.includes("database of entity 'branch'"));
    }
    expect(warnings.map((w) => [w.area, w.state, w.msg])).toEqual([
      [
        'hotspot',
        'unreachable',
        expect.stringMatching(
          /^hotspot database of entity 'branch' is unreachable: hotspot requests for it answer 503 until it is fixed; check the URL/,
        ),
      ],
      [
        'logviewer',
        'schema_missing',
        expect.stringMatching(
          /^logviewer database of entity 'branch' is missing tables: .*netsvc db migrate \(--create-peer-tables/,
        ),
      ],
    ]);
    expect(String(warnings[0]!.cause)).toMatch(/ECONNREFUSED|connect/i);
    expect(warnings[0]!.database).not.toContain('s3cret');
    expect(warnings[1]!.cause).toBe('no SystemEvents table');
  });

  it('shows each database and which server it is on /health, without URLs or causes, and in netsvc status', async () => {
    const res = await fetch(`${service.url}/health`);
    const body = (await res.json()) as {
      status: string;
      databases: Array<{ entity: string; area: string; kind: string; state: string }>;
    };
    expect(body.status).toBe('degraded');
    expect(body.databases).toEqual(
      expect.arrayContaining([
        { entity: 'default', area: 'hotspot', kind: 'sqlite', state: 'ok' },
        { entity: 'default', area: 'logviewer', kind: 'sqlite', state: 'ok' },
        { entity: 'branch', area: 'hotspot', kind: 'mysql', state: 'unreachable' },
        { entity: 'branch', area: 'logviewer', kind: servers[0], state: 'schema_missing' },
      ]),
    );
    expect(JSON.stringify(body)).not.toMatch(/mysql:|postgres:|ECONNREFUSED/);
    const status = await runCliCaptured(['status', '--url', `${service.url}/metrics`]);
    expect(status.code).toBe(0);
    expect(status.out).toContain(
      'database hotspot branch (mysql): unreachable (the cause is in serve\'s log: "database of entity")',
    );
    expect(status.out).toContain('database logviewer default (sqlite): ok');
  });
});
