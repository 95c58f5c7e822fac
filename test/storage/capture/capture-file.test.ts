import { readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CaptureFile } from '../../../storage/capture/capture-file.js';
import { tempDataDir } from './flows.js';

describe('capture file', () => {
  it('rejects a file from the other byte order by its magic', () => {
    const dir = tempDataDir();
    const path = `${dir}/nfcapd.202603251000`;
    const b = Buffer.alloc(64);
    b.writeUInt32BE(0x4643534e, 0);
    writeFileSync(path, b);
    expect(() => CaptureFile.open(path)).toThrow(expect.objectContaining({ code: 'wrong-byte-order' }));
    expect(readFileSync(path)).toHaveLength(64);
  });
});
