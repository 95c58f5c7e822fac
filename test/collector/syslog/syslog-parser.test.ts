import { describe, expect, it } from 'vitest';
import { parseSyslog, SyslogFrameDecoder } from '../../../collector/syslog/syslog-parser.js';

const ctx = { receivedAt: '2026-01-02 10:00:00', sender: '192.0.2.7' };

function row(raw: string, c = ctx) {
  const p = parseSyslog(Buffer.from(raw), c);
  return {
    host: p.fromHost,
    tag: p.sysLogTag,
    facility: p.facility,
    priority: p.priority,
    time: p.deviceReportedTime,
    message: p.message,
    problems: p.problems,
  };
}

describe('parseSyslog, RFC 5424', () => {
  it('reads what logger sends by default, tag without colon', () => {
    expect(row('<132>1 2026-01-02T09:59:58.123456+00:00 vm mytag - - [timeQuality tzKnown="1" isSynced="0"] hello')).toEqual({
      host: 'vm',
      tag: 'mytag',
      facility: 16,
      priority: 4,
      time: '2026-01-02 09:59:58',
      message: 'hello',
      problems: [],
    });
  });

  it('folds PROCID into the tag and keeps the sender wall clock, dropping the offset', () => {
    const r = row('<134>1 2026-01-02T03:04:05.678+02:00 routerA myapp 999 ID47 - raw 5424 message');
    expect([r.host, r.tag, r.facility, r.priority, r.time, r.message]).toEqual([
      'routerA',
      'myapp[999]',
      16,
      6,
      '2026-01-02 03:04:05',
      'raw 5424 message',
    ]);
  });

  it('drops MSGID and structured data with escaped quotes and brackets, and a UTF-8 BOM', () => {
    const r = row('<38>1 2026-01-02T03:04:05Z h app - MSG01 [zoo@123 tiger="hun\\"gry\\]"][b@1 x="y"] \uFEFFwith sd');
    expect([r.tag, r.message, r.problems]).toEqual(['app', 'with sd', []]);
  });

  it('uses the receive time and the sender address for nil timestamp and host', () => {
    const r = row('<191>1 - - - - - - no time no host');
    expect([r.host, r.tag, r.time, r.facility, r.priority, r.message]).toEqual([
      '192.0.2.7',
      '',
      ctx.receivedAt,
      23,
      7,
      'no time no host',
    ]);
  });

  it('keeps a message with a broken timestamp and says so', () => {
    const r = row('<14>1 2026-13-45T99:00:00Z h app - - - text');
    expect([r.time, r.message, r.problems]).toEqual([ctx.receivedAt, 'text', ['bad-timestamp']]);
  });
});

describe('parseSyslog, RFC 3164', () => {
  it('keeps the colon in the tag and the space before the message', () => {
    const r = row('<132>Jan  2 09:59:58 vm mytag: hello 3164');
    expect([r.host, r.tag, r.time, r.message, r.facility, r.priority]).toEqual([
      'vm',
      'mytag:',
      '2026-01-02 09:59:58',
      ' hello 3164',
      16,
      4,
    ]);
  });

  it('reads a device message with a pid', () => {
    const r = row('<38>Jan  2 03:04:05 routerB sshd[1234]: Accepted password for bob');
    expect([r.host, r.tag, r.facility, r.priority, r.message]).toEqual([
      'routerB',
      'sshd[1234]:',
      4,
      6,
      ' Accepted password for bob',
    ]);
  });

  it('puts a December message received in January into last year', () => {
    expect(row('<13>Dec 31 23:59:59 h t: x').time).toBe('2025-12-31 23:59:59');
  });

  it('accepts an RFC 3339 stamp in place of the BSD one', () => {
    const r = row('<13>2026-01-02T03:04:05.1+05:30 host7 prog[5]: m');
    expect([r.host, r.tag, r.time, r.message]).toEqual(['host7', 'prog[5]:', '2026-01-02 03:04:05', ' m']);
  });

  it('takes the tag right after the timestamp when HOSTNAME is left out', () => {
    const r = row('<13>Jan  2 03:04:05 hostapd: wlan0: STA associated');
    expect([r.host, r.tag, r.message]).toEqual(['192.0.2.7', 'hostapd:', ' wlan0: STA associated']);
  });

  it('stores a header-less message whole, from the sender, with what tag it can find', () => {
    expect(row('<14>bare message without header')).toMatchObject({
      host: '192.0.2.7',
      tag: '',
      message: 'bare message without header',
      problems: ['no-header'],
    });
    expect(row('<14>kernel: oops')).toMatchObject({ host: '192.0.2.7', tag: 'kernel:', message: ' oops' });
  });

  it('assumes user.notice without a PRI, and for a PRI out of range', () => {
    expect(row('just text')).toMatchObject({ facility: 1, priority: 5, message: 'just text', problems: ['no-pri', 'no-header'] });
    expect(row('<999>Jan  2 03:04:05 h t: x')).toMatchObject({ facility: 1, priority: 5, host: 'h', problems: ['bad-pri'] });
    expect(row('<abc>text')).toMatchObject({ facility: 1, priority: 5, message: 'text' });
  });

  it('truncates host and tag to the 60 characters of the column instead of losing the message', () => {
    const host = 'h'.repeat(61);
    const tag = `${'t'.repeat(70)}:`;
    const r = row(`<134>1 2026-01-02T03:04:05Z ${host} app - - - overlong host`);
    expect([r.host, r.message, r.problems]).toEqual(['h'.repeat(60), 'overlong host', ['host-truncated']]);
    const t = row(`<13>Jan  2 03:04:05 h ${tag} m`);
    expect([t.tag, t.problems]).toEqual(['t'.repeat(60), ['tag-truncated']]);
    const wide = row(`<134>1 2026-01-02T03:04:05Z ${'é'.repeat(61)} app - - - x`);
    expect(Array.from(wide.host)).toHaveLength(60);
  });

  it('escapes control characters and keeps quotes, backslashes and UTF-8', () => {
    expect(row('<13>Jan  2 03:04:05 h t: a\tb\x01 it\'s "q" \\ héllo ✓\n').message).toBe(' a#011b#001 it\'s "q" \\ héllo ✓');
  });
});

describe('SyslogFrameDecoder', () => {
  const texts = (frames: { data: Buffer }[]) => frames.map((f) => f.data.toString());

  it('splits octet-counted frames, also when they arrive byte by byte', () => {
    const stream = Buffer.from('5 hello11 hello\nworld3 abc');
    const d = new SyslogFrameDecoder(1000);
    expect(texts(d.push(stream))).toEqual(['hello', 'hello\nworld', 'abc']);
    const slow = new SyslogFrameDecoder(1000);
    const out: string[] = [];
    for (const b of stream) out.push(...texts(slow.push(Buffer.from([b]))));
    expect(out).toEqual(['hello', 'hello\nworld', 'abc']);
  });

  it('splits LF-delimited frames, dropping CR and empty lines, and flushes the last one at close', () => {
    const d = new SyslogFrameDecoder(1000);
    expect(texts(d.push(Buffer.from('<13>a\r\n\n<13>b\n<13>c')))).toEqual(['<13>a\r', '<13>b']);
    expect(texts(d.end())).toEqual(['<13>c']);
  });

  it('cuts frames over the limit and resynchronises after them', () => {
    const d = new SyslogFrameDecoder(4);
    const frames = d.push(Buffer.from('10 0123456789<13>toolong\n<13>\n'));
    expect(frames.map((f) => [f.data.toString(), f.truncated])).toEqual([
      ['0123', true],
      ['<13>', true],
      ['<13>', false],
    ]);
  });

  it('frames a long mixed stream the same whether it comes whole, byte by byte or in uneven chunks', () => {
    const parts: string[] = [];
    for (let i = 0; i < 60; i++) {
      const body = `<13>msg ${i} ${'x'.repeat((i * 37) % 300)}`;
      parts.push(i % 3 === 0 ? `${body.length} ${body}` : `${body}\n`);
    }
    parts.push(`${'y'.repeat(700)}\n`, `900 ${'z'.repeat(900)}`, '<13>last\n');
    const stream = Buffer.from(parts.join(''));
    const run = (sizes: (i: number) => number): Array<[string, boolean]> => {
      const d = new SyslogFrameDecoder(512);
      const out: Array<[string, boolean]> = [];
      for (let at = 0, i = 0; at < stream.length; i++) {
        const n = Math.max(1, sizes(i));
        out.push(...d.push(stream.subarray(at, at + n)).map((f): [string, boolean] => [f.data.toString(), f.truncated]));
        at += n;
      }
      out.push(...d.end().map((f): [string, boolean] => [f.data.toString(), f.truncated]));
      return out;
    };
    const whole = run(() => stream.length);
    expect(whole).toHaveLength(63);
    expect(whole.slice(-3)).toEqual([
      ['y'.repeat(512), true],
      ['z'.repeat(512), true],
      ['<13>last', false],
    ]);
    expect(run(() => 1)).toEqual(whole);
    expect(run((i) => (i * 7919) % 1500)).toEqual(whole);
  });

  it('keeps what came of a counted frame the peer cut short, flagged as truncated', () => {
    const d = new SyslogFrameDecoder(100);
    expect(d.push(Buffer.from('20 <13>short'))).toEqual([]);
    expect(d.end().map((f) => [f.data.toString(), f.truncated])).toEqual([['<13>short', true]]);
  });
});
