import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';

/** The loader's message for a flow source without its (required) listen address. */
function missingKeyMessage(): string {
  const cwd = mkdtempSync(join(tmpdir(), 'netsvc-config-'));
  writeFileSync(join(cwd, 'netsvc.config.json'), JSON.stringify({ flowSources: { a: { protocol: 'netflow' } } }));
  try {
    loadConfig({ cwd, env: {} });
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error('the configuration was accepted');
}

describe('configuration messages (issue 18, point 7)', () => {
  it("are zod's own wording, whether or not the router module was loaded and its wording set", async () => {
    const before = missingKeyMessage();
    expect(before).toBe('invalid configuration: flowSources.a.listen: Invalid input: expected string, received undefined');
    // Loading the router sets nothing any more.
    const router = await import('../../api/router.js');
    expect(z.string().safeParse(undefined).error?.issues[0]?.message).not.toBe(router.REQUIRED);
    expect(missingKeyMessage()).toBe(before);
    // Serve's start-up sets the routes' wording, process-wide: the loader still words its messages alike.
    router.useRequiredMessages();
    expect(z.string().safeParse(undefined).error?.issues[0]?.message).toBe(router.REQUIRED);
    expect(missingKeyMessage()).toBe(before);
  });
});
