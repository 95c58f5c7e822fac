import { describe, expect, it } from 'vitest';
import { createFlowDecoder, exporterRef } from '../../../collector/decode/decoder.js';
import { FlowBatch } from '../../../common/flow-batch.js';
import { compileTemplate } from '../../../collector/decode/record-decoder.js';
import { sectionLayout } from '../../../collector/decode/section-fields.js';
import type { TemplateField } from '../../../collector/decode/template-cache.js';
import { ETH_VLAN_IPV4_TCP, EXPORT_S, packetSectionMessages } from './packet-section-fixtures.js';
import { rows, type Row } from './rows.js';
import { ipfixMessage, ipfixTemplateRecord, ipv4, set, uint, v9Packet, v9Templates, varField } from './wire.js';

const field = (id: number, length: number, enterprise = 0): TemplateField => ({ id, length, enterprise });

describe('section fields', () => {
  it('prefers ipHeaderPacketSection to dataLinkFrameSection, and reads neither payload nor label-stack sections', () => {
    expect(sectionLayout([field(315, 65535), field(313, 65535)])).toMatchObject({ index: 1, reader: 'readIpPacket' });
    expect(sectionLayout([field(10, 4), field(315, 128), field(410, 2)])).toMatchObject({
      index: 1,
      reader: 'readDataLinkFrame',
    });
    expect(sectionLayout([field(10, 4), field(315, 128), field(410, 2)])?.roles.get('sectionExported')).toBe(2);
    expect(sectionLayout([field(314, 65535), field(316, 65535)])).toBeUndefined();
    // An enterprise element with the same number is not a section.
    expect(sectionLayout([field(315, 65535, 9)])).toBeUndefined();
  });

  it('adds the section code only to templates with a section, so flow templates decode as before', () => {
    const code = (fields: TemplateField[]): string => compileTemplate(fields, 'systemInit').decode.toString();
    const flow = [field(8, 4), field(12, 4), field(1, 8), field(2, 8), field(312, 2)];
    expect(code(flow)).not.toMatch(/readIpPacket|readDataLinkFrame|S\./);
    // The section gives the key to a template without addresses of its own.
    expect(code([field(10, 4), field(312, 2), field(315, 65535)])).toContain('readDataLinkFrame(');
  });
});

describe('sampled-packet records', () => {
  it('fills addresses, ports, protocol, ToS, flags and bytes from the packet section of every record (Juniper, fixed-length, IP header sections)', () => {
    const d = createFlowDecoder();
    const b = new FlowBatch(2);
    const from = exporterRef('192.0.2.20');
    const received = 1_700_000_800_000;
    const outcomes = packetSectionMessages().map((m) => d.decode(m, from, received, b));
    expect(outcomes.map((o) => o.status)).toEqual(['ok', 'ok']);
    const t = EXPORT_S * 1000;
    const base = { received, start: t, end: t, bytesRest: 0, packetsRest: 0, srcAs: 0, dstAs: 0, exporter: '192.0.2.20' };
    const expected: Row[] = [
      // 1 in 1000 (domain options); no counters: one packet of the IP total length (52), not the frame size (74).
      {
        ...base,
        src: '192.0.2.1',
        dst: '198.51.100.2',
        nextHop: '0.0.0.0',
        ipVersion: 4,
        proto: 6,
        srcPort: 443,
        dstPort: 51_000,
        tcpFlags: 0x18,
        tos: 0xb8,
        bytes: 52_000,
        packets: 1000,
        samplingInterval: 1000,
        inputIf: 517,
        outputIf: 0,
      },
      {
        ...base,
        src: '192.0.2.3',
        dst: '198.51.100.4',
        nextHop: '0.0.0.0',
        ipVersion: 4,
        proto: 6,
        srcPort: 0,
        dstPort: 0,
        tcpFlags: 0,
        tos: 0,
        bytes: 1_500_000,
        packets: 1000,
        samplingInterval: 1000,
        inputIf: 518,
        outputIf: 0,
      },
      // The record's own interval (100) beats the domain's.
      {
        ...base,
        src: '2001:db8:1::1',
        dst: '2001:db8:2::2',
        nextHop: '::',
        ipVersion: 6,
        proto: 17,
        srcPort: 52_999,
        dstPort: 53,
        tcpFlags: 0,
        tos: 0x28,
        bytes: 5_600,
        packets: 100,
        samplingInterval: 100,
        inputIf: 20,
        outputIf: 21,
      },
      {
        ...base,
        src: '10.1.1.1',
        dst: '10.2.2.2',
        nextHop: '0.0.0.0',
        ipVersion: 4,
        proto: 17,
        srcPort: 2222,
        dstPort: 1111,
        tcpFlags: 0,
        tos: 0x10,
        bytes: 108_000,
        packets: 1000,
        samplingInterval: 1000,
        inputIf: 30,
        outputIf: 0,
      },
    ];
    expect(rows(b)).toEqual(expected);
    const c = d.counters.exporter(from.address);
    // The section that starts mid-packet and the IPv6 header cut short.
    expect({ sectionsUnreadable: c.sectionsUnreadable, recordsWithoutAddress: c.recordsWithoutAddress, flows: c.flows }).toEqual({
      sectionsUnreadable: 2,
      recordsWithoutAddress: 0,
      flows: 4,
    });
  });

  it('reads a fixed-length section in NetFlow v9 too, the zero padding after the frame unread', () => {
    const d = createFlowDecoder();
    const b = new FlowBatch(1);
    const from = exporterRef('192.0.2.21');
    const padded = Buffer.concat([ETH_VLAN_IPV4_TCP, Buffer.alloc(96 - ETH_VLAN_IPV4_TCP.length)]);
    const pkt = v9Packet(
      { uptimeMs: 1_000_000, unixSecs: 1_700_000_900, count: 2 },
      v9Templates({
        id: 260,
        fields: [
          [10, 4],
          [312, 2],
          [315, 96],
        ],
      }),
      set(260, Buffer.concat([uint(7, 4), uint(74, 2), padded])),
    );
    expect(d.decode(pkt, from, 1_700_000_900_500, b).status).toBe('ok');
    expect(rows(b)).toEqual([
      {
        received: 1_700_000_900_500,
        start: 1_700_000_900_000,
        end: 1_700_000_900_000,
        exporter: '192.0.2.21',
        src: '192.0.2.1',
        dst: '198.51.100.2',
        nextHop: '0.0.0.0',
        ipVersion: 4,
        proto: 6,
        srcPort: 443,
        dstPort: 51_000,
        tcpFlags: 0x18,
        tos: 0xb8,
        bytes: 52,
        packets: 1,
        bytesRest: 0,
        packetsRest: 0,
        samplingInterval: 1,
        inputIf: 7,
        outputIf: 0,
        srcAs: 0,
        dstAs: 0,
      },
    ]);
  });

  it('takes every key field from the packet when the template has no address, and none when it has addresses', () => {
    const d = createFlowDecoder();
    const b = new FlowBatch(2);
    const from = exporterRef('192.0.2.22');
    const received = 1_700_000_950_500;
    // A protocol and ToS of the template's own, beside the packet that has the rest of the key:
    // one header gives the whole key, as in tunnel templates, so the packet's.
    const sampled = ipfixTemplateRecord(330, [
      [10, 4],
      [4, 1],
      [5, 1],
      [315, 65535],
    ]);
    // Addresses of its own: a flow template, whose key and counters the section does not touch.
    const flow = ipfixTemplateRecord(331, [
      [8, 4],
      [12, 4],
      [1, 4],
      [2, 4],
      [315, 65535],
    ]);
    const msg = ipfixMessage(
      { exportSecs: 1_700_000_950 },
      set(2, Buffer.concat([sampled, flow])),
      set(330, Buffer.concat([uint(9, 4), uint(17, 1), uint(0, 1), varField(ETH_VLAN_IPV4_TCP)])),
      set(331, Buffer.concat([ipv4('10.3.3.3'), ipv4('10.4.4.4'), uint(4_000, 4), uint(3, 4), varField(ETH_VLAN_IPV4_TCP)])),
    );
    expect(d.decode(msg, from, received, b).status).toBe('ok');
    const base = {
      received,
      start: 1_700_000_950_000,
      end: 1_700_000_950_000,
      exporter: '192.0.2.22',
      nextHop: '0.0.0.0',
      ipVersion: 4,
      bytesRest: 0,
      packetsRest: 0,
      samplingInterval: 1,
      outputIf: 0,
      srcAs: 0,
      dstAs: 0,
    };
    expect(rows(b)).toEqual([
      {
        ...base,
        src: '192.0.2.1',
        dst: '198.51.100.2',
        proto: 6,
        srcPort: 443,
        dstPort: 51_000,
        tcpFlags: 0x18,
        tos: 0xb8,
        bytes: 52,
        packets: 1,
        inputIf: 9,
      },
      {
        ...base,
        src: '10.3.3.3',
        dst: '10.4.4.4',
        proto: 0,
        srcPort: 0,
        dstPort: 0,
        tcpFlags: 0,
        tos: 0,
        bytes: 4_000,
        packets: 3,
        inputIf: 0,
      },
    ]);
    expect(d.counters.exporter(from.address)).toMatchObject({ flows: 2, recordsWithoutAddress: 0, sectionsUnreadable: 0 });
  });
});
