import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createFlowDecoder, exporterRef } from '../../collector/decoder.js';
import { FlowBatch } from '../../collector/flow-batch.js';
import { TemplateFileError, TemplatePersistence } from '../../collector/template-persistence.js';
import { rows } from './rows.js';
import { vendor } from './wire.js';

const dir = mkdtempSync(join(tmpdir(), 'netsvc-templates-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const T0 = 1_700_000_000_000;
const netscaler = exporterRef('192.0.2.50');
const juniper = exporterRef('192.0.2.51');

describe('template persistence', () => {
  it('a restarted decoder decodes data with the templates and sampling saved before the restart', () => {
    const path = join(dir, 'a', 'templates.msgpack');
    let now = T0;
    const store = new TemplatePersistence({ path, now: () => now, ttlMs: 3_600_000 });

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
    const path = join(dir, 'b.msgpack');
    let now = T0;
    const store = new TemplatePersistence({ path, now: () => now, ttlMs: 60_000 });
    const d = createFlowDecoder({ templateTtlMs: 60_000 });
    d.decode(vendor('ipfix_test_netscaler_tpl.dat'), netscaler, now, new FlowBatch());
    store.save(d.templates);
    now = T0 + 120_000;
    expect(store.load().size).toBe(0);
  });

  it('an absent file gives an empty store; a corrupt one a typed error', () => {
    const missing = new TemplatePersistence({ path: join(dir, 'none.msgpack'), now: () => T0, ttlMs: 0 });
    expect(missing.load().size).toBe(0);
    const path = join(dir, 'corrupt.msgpack');
    writeFileSync(path, Buffer.from([0xc1, 0xff, 0x00]));
    expect(() => new TemplatePersistence({ path, now: () => T0, ttlMs: 0 }).load()).toThrow(TemplateFileError);
    writeFileSync(path, Buffer.from([0x93, 1, 2, 3])); // valid msgpack, wrong shape
    expect(() => new TemplatePersistence({ path, now: () => T0, ttlMs: 0 }).load()).toThrow(TemplateFileError);
  });
});
