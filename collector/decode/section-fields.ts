/**
 * Which fields of a data template describe a sampled packet as raw bytes
 * (packet-section.ts reads them), and the counters that go with them. The
 * template compiler emits the section code only for templates this finds a
 * section in, so flow templates pay nothing.
 */
import { IE } from './ie-registry.js';
import type { TemplateField } from './template-cache.js';

/** Where a template's packet section is and how to read it. */
export interface SectionLayout {
  /** Index of the section field in the template (fixed or variable length). */
  readonly index: number;
  /** Which reader of packet-section.ts the bytes need. */
  readonly reader: 'readIpPacket' | 'readDataLinkFrame';
  /**
   * Fixed-length unsigned fields that go with it, role → field index: `frameSize`
   * (dataLinkFrameSize), `ipLength` (ipTotalLength), `sectionOffset`, `sectionExported`
   * (sectionExportedOctets).
   */
  readonly roles: ReadonlyMap<string, number>;
}

const NUMERIC: Record<string, number> = {
  frameSize: IE.dataLinkFrameSize,
  ipLength: IE.ipTotalLength,
  sectionOffset: IE.sectionOffset,
  sectionExported: IE.sectionExportedOctets,
};

/**
 * The template's packet section: ipHeaderPacketSection (313) when it has one, since it
 * starts at the IP header and needs no guessing, else dataLinkFrameSection (315); undefined
 * when it has neither. ipPayloadPacketSection (314) and mplsLabelStackSection (316) hold no
 * addresses and are not read.
 */
export function sectionLayout(fields: readonly TemplateField[]): SectionLayout | undefined {
  const find = (id: number): number => fields.findIndex((f) => f.enterprise === 0 && f.id === id && f.length >= 1);
  const ipAt = find(IE.ipHeaderPacketSection);
  const l2At = find(IE.dataLinkFrameSection);
  if (ipAt < 0 && l2At < 0) return undefined;
  const roles = new Map<string, number>();
  for (const [role, id] of Object.entries(NUMERIC)) {
    const idx = fields.findIndex((f) => f.enterprise === 0 && f.id === id && f.length >= 1 && f.length <= 8);
    if (idx >= 0) roles.set(role, idx);
  }
  return ipAt >= 0 ? { index: ipAt, reader: 'readIpPacket', roles } : { index: l2At, reader: 'readDataLinkFrame', roles };
}
