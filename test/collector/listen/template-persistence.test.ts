import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { pack } from 'msgpackr';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createFlowDecoder, exporterRef } from '../../../collector/decode/decoder.js';
import { FlowBatch } from '../../../common/flow-batch.js';
import { TemplateFileError, TemplatePersistence } from '../../../collector/listen/template-persistence.js';
import { rows } from '../decode/rows.js';
import { v9Packet, v9Templates, vendor } from '../decode/wire.js';

const dir = mkdtempSync(join(tmpdir(), 'netsvc-templates-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const T0 = 1_700_000_000_000;
const netscaler = exporterRef('192.0.2.50');
const juniper = exporterRef('192.0.2.51');

describe('template persistence', () => {
  it('a restarted decoder decodes data with the templates and sampling saved before the restart', () => {
    let now = T0;
    const store = new TemplatePersistence({ dir: join(dir, 'a'), now: () => now, ttlMs: 3_600_000 });

    const before = createFlowDecoder({ templateTtlMs: 3_600_000 });
    const batch = new FlowBatch();
    before.decode(vendor('ipfix_test_netscaler_tpl.dat'), netscaler, now, batch);
    before.decode(vendor('netflow9_test_invalid01.dat'), juniper, now, batch); // templates + 1:100 sampling + 2 flows
    const reference = rows(batch).slice(-2);
    batch.clear();
    expect(store.save(before.templates)).toBeGreaterThan(7);

    // "Restart": a new decoder whose store comes from the file.
    now = T0 + 60_000;
    const after = createFlowDecoder({}, store.load());
    after.decode(vendor('ipfix_test_netscaler_data.dat'), netscaler, now, batch);
    const ns = rows(batch);
    expect(ns).toHaveLength(3);
    expect(ns[2]).toMatchObject({ src: '192.168.0.1', dst: '10.0.0.1', bytes: 1541, dstPort: 443 });
    expect(after.counters.exporter(netscaler.address).dataWithoutTemplate).toBe(1); // same as before the restart

    // The v9 datagram's data, without its templates: needs the saved ones and the saved sampler.
    batch.clear();
    const v9 = vendor('netflow9_test_invalid01.dat');
    const dataOnly = Buffer.concat([v9.subarray(0, 20), v9.subarray(0xb2)]); // header + the two flow data flowsets (no options data)
    after.decode(dataOnly, juniper, now, batch);
    expect(rows(batch).map((r) => [r.bytes, r.samplingInterval, r.src])).toEqual(
      reference.map((r) => [r.bytes, r.samplingInterval, r.src]),
    );
    expect(rows(batch)[0]!.samplingInterval).toBe(100);
  });

  it('does not load templates that expired while the service was down', () => {
    let now = T0;
    const store = new TemplatePersistence({ dir: join(dir, 'b'), now: () => now, ttlMs: 60_000 });
    const d = createFlowDecoder({ templateTtlMs: 60_000 });
    d.decode(vendor('ipfix_test_netscaler_tpl.dat'), netscaler, now, new FlowBatch());
    store.save(d.templates);
    now = T0 + 120_000;
    expect(store.load().size).toBe(0);
  });

  it('no file gives an empty store; a corrupt file costs only its exporter, with a typed error', () => {
    const missing = new TemplatePersistence({ dir: join(dir, 'none'), now: () => T0, ttlMs: 0 });
    expect(missing.load().size).toBe(0);
    const sub = join(dir, 'corrupt');
    const store = new TemplatePersistence({ dir: sub, now: () => T0, ttlMs: 0 });
    const d = createFlowDecoder();
    d.decode(vendor('ipfix_test_netscaler_tpl.dat'), netscaler, T0, new FlowBatch());
    d.decode(vendor('netflow9_test_invalid01.dat'), juniper, T0, new FlowBatch());
    store.save(d.templates);
    const juniperHeld = d.templates.findExporter(juniper.address)!.templates;
    writeFileSync(join(sub, '192.0.2.50.msgpack'), Buffer.from([0xc1, 0xff, 0x00]));
    writeFileSync(join(sub, '192.0.2.99.msgpack'), Buffer.from([0x93, 1, 2, 3])); // valid msgpack, wrong shape
    const loaded = store.load();
    expect(loaded.size).toBe(juniperHeld);
    expect(store.unreadable).toHaveLength(2);
    expect(store.unreadable.every((e) => e instanceof TemplateFileError)).toBe(true);
  });

  it('a save rewrites only the exporters whose templates changed, and removes the files of exporters gone', () => {
    const sub = join(dir, 'per-exporter');
    let now = T0;
    const store = new TemplatePersistence({ dir: sub, now: () => now, ttlMs: 60_000 });
    const d = createFlowDecoder({ templateTtlMs: 60_000 });
    const a = exporterRef('192.0.2.61');
    const b = exporterRef('2001:db8::62');
    const hdr = { uptimeMs: 1000, unixSecs: T0 / 1000 };
    const tpl = (id: number) =>
      v9Packet(
        hdr,
        v9Templates({
          id,
          fields: [
            [8, 4],
            [12, 4],
            [1, 4],
          ],
        }),
      );
    d.decode(tpl(256), a, now, new FlowBatch());
    d.decode(
      Buffer.concat([
        tpl(256),
        v9Templates({
          id: 257,
          fields: [
            [8, 4],
            [12, 4],
            [2, 4],
          ],
        }),
      ]),
      b,
      now,
      new FlowBatch(),
    );
    expect(store.save(d.templates)).toBe(3);
    expect(readdirSync(sub).sort()).toEqual(['192.0.2.61.msgpack', '2001_db8__62.msgpack']);
    // Re-announcements change nothing to write; a new template of one exporter writes that exporter only.
    now += 30_000;
    d.decode(tpl(256), a, now, new FlowBatch());
    d.decode(tpl(256), b, now, new FlowBatch());
    expect(store.save(d.templates)).toBe(0);
    d.decode(tpl(300), a, now, new FlowBatch());
    expect(store.save(d.templates)).toBe(2);
    // b goes quiet: its templates expire, its file goes; a's stays and loads.
    now += 70_000;
    d.decode(tpl(256), a, now, new FlowBatch());
    d.decode(tpl(300), a, now, new FlowBatch());
    d.expire(now);
    expect(d.templates.findExporter(b.address)).toBeUndefined();
    store.save(d.templates, true); // as at shutdown: with the times of the re-announcements
    expect(readdirSync(sub)).toEqual(['192.0.2.61.msgpack']);
    expect(new TemplatePersistence({ dir: sub, now: () => now, ttlMs: 60_000 }).load().size).toBe(2);
  });

  it('reads the single file of the earlier layout once, and replaces it by per-exporter files', () => {
    const legacyPath = join(dir, 'legacy.msgpack');
    const domain = {
      address: netscaler.address,
      version: 9,
      domainId: 0,
      defaultInterval: 0,
      systemInitMs: null,
      samplers: [[1, 64]],
    };
    const template = { id: 256, options: false, scopeCount: 0, fields: [8, 4, 0, 12, 4, 0, 1, 4, 0], lastSeenMs: T0 };
    writeFileSync(legacyPath, pack({ format: 1, savedAtMs: T0, domains: [{ ...domain, templates: [template] }] }));
    const store = new TemplatePersistence({ dir: join(dir, 'migrated'), legacyPath, now: () => T0, ttlMs: 0 });
    const loaded = store.load();
    expect(loaded.size).toBe(1);
    expect(loaded.findDomain(netscaler.address, 9, 0)!.samplers.get(1)).toBe(64);
    store.save(loaded);
    expect(existsSync(legacyPath)).toBe(false);
    expect(new TemplatePersistence({ dir: join(dir, 'migrated'), now: () => T0, ttlMs: 0 }).load().size).toBe(1);
  });
});
