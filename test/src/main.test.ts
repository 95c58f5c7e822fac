import { mkdirSync, mkdtempSync, rmSync, truncateSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/log.js';
import { openAdminStore } from '../../src/admin-store.js';
import { startService } from '../../src/main.js';
import { generateCredential, hashSecret } from '../../storage/admin/secret-hash.js';
import { listCaptureFiles } from '../../storage/capture/reader.js';
import { CaptureWriter } from '../../storage/capture/writer.js';
import { getJson, postJson } from '../helpers/http.js';
import { LOOPBACK_LISTENERS } from '../helpers/service.js';
import { FakeClock, randomFlows } from '../storage/capture/flows.js';

function config(dataDir: string, env: Record<string, string> = {}) {
  return loadConfig({ cwd: dataDir, dataDir, env: { ...LOOPBACK_LISTENERS, NETSVC_HTTP__PORT: '0', ...env } });
}

describe('token key', () => {
  it('keeps tokens valid across a restart of the service', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'netsvc-restart-'));
    const cfg = config(dir);
    const admin = openAdminStore(cfg);
    admin.addEntity('default', { netflow: true });
    admin.addUser('default', 'alice', { netflow: true });
    const cred = generateCredential();
    admin.replaceCredential('default', 'alice', cred.apiId, await hashSecret(cred.secret));
    admin.close();

    const runtime = { logger: createLogger('silent'), now: Date.now };
    const first = await startService(cfg, runtime);
    const token = (await postJson(`${first.url}/svc/api/netflow/auth`, { api_id: cred.apiId, secret: cred.secret })).body.result
      .access_token;
    await first.close();
    const second = await startService(cfg, runtime);
    try {
      const res = await getJson(`${second.url}/svc/api/netflow/latest`, token);
      expect(res.status).toBe(200);
      expect(res.body.status).toBe(true);
    } finally {
      await second.close();
    }
  });
});

describe('a start that fails late', () => {
  it('closes what it had started: the data directory and its sockets are free for the next start', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'netsvc-late-fail-'));
    const cfg = config(dir);
    // An unreadable token key fails the start after the flow path has bound and locked the data directory.
    mkdirSync(join(dir, 'jwt.key'), { recursive: true });
    const runtime = { logger: createLogger('silent'), now: Date.now };
    await expect(startService(cfg, runtime)).rejects.toThrow(/EISDIR/);
    rmSync(join(dir, 'jwt.key'), { recursive: true });
    // A lock or a thread left behind would refuse this one (the data directory is locked while in use).
    const again = await startService(cfg, runtime);
    await again.close();
  });
});

describe('GET /metrics of a running service', () => {
  it('has the capture storage series, and counts a damaged sealed hour the KPI cache could not build', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'netsvc-metrics-'));
    const H8 = Date.UTC(2026, 2, 25, 8);
    const clock = new FakeClock(H8 + 60_000);
    const writer = new CaptureWriter({ dataDir: dir, timezone: 'UTC', now: clock.now, timer: false });
    await writer.start();
    writer.write('netflow', randomFlows(300, { received: H8 + 1000 }));
    clock.t = H8 + 3_700_000;
    await writer.close();
    const sealed = listCaptureFiles(dir, 'netflow', 'UTC').find((f) => f.kind === 'sealed')!;
    truncateSync(sealed.path, Math.floor(sealed.size / 2));

    const service = await startService(config(dir, { NETSVC_TIMEZONE: 'UTC' }), {
      logger: createLogger('silent'),
      now: Date.now,
    });
    try {
      let text = '';
      for (let i = 0; i < 100 && !text.includes('netsvc_kpi_build_corrupt_files_total 1'); i++) {
        text = await (await fetch(`${service.url}/metrics`)).text();
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(text).toContain('netsvc_kpi_build_corrupt_files_total 1');
      for (const name of [
        'capture_write_errors',
        'capture_rows_lost',
        'capture_seal_errors',
        'capture_recovered_files',
        'query_corrupt_files',
        'query_corrupt_blocks',
        'retention_files_removed',
      ]) {
        expect(text).toMatch(new RegExp(`^netsvc_${name}_total \\d+$`, 'm'));
      }
    } finally {
      await service.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
