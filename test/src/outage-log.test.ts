import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log.js';
import { OutageLog } from '../../src/outage-log.js';

function capture() {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      lines.push(JSON.parse(String(chunk)) as Record<string, unknown>);
      cb();
    },
  });
  return { lines, logger: createLogger('info', sink) };
}

describe('OutageLog', () => {
  it('logs one line per database and interval during an outage, with the count it did not log and no stack', async () => {
    const { lines, logger } = capture();
    let now = 0;
    const outages = new OutageLog(logger, () => now, 10_000);
    const cause = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    const err = new Error('the RADIUS database cannot be reached', { cause });
    for (let i = 0; i < 500; i++) {
      now += 10; // 500 failed requests over 5 s
      outages.report('acme', { entity: 'acme' }, err, 'RADIUS database unusable');
    }
    outages.report('globex', { entity: 'globex' }, err, 'RADIUS database unusable');
    now += 10_000;
    outages.report('acme', { entity: 'acme' }, err, 'RADIUS database unusable');
    await new Promise((r) => setImmediate(r));

    expect(lines.map((l) => [l.entity, l.failuresNotLogged])).toEqual([
      ['acme', 0],
      ['globex', 0],
      ['acme', 499],
    ]);
    expect(lines[0]!.reason).toBe('Error: the RADIUS database cannot be reached <- Error: connect ECONNREFUSED 127.0.0.1:5432');
    expect(JSON.stringify(lines)).not.toContain('    at ');
  });
});
