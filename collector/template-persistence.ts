/**
 * Keeps the template store across restarts: a v9/IPFIX exporter may resend
 * its templates only every few minutes, and without them its data is
 * useless until then.
 *
 * The file (msgpack) holds, per exporter domain, the templates with their
 * last-announced time and what options data said (sampler intervals, system
 * init time). It is written to a temporary name and renamed, so a crash
 * mid-write leaves the previous file. The caller chooses the path (in the
 * data dir) and passes the clock. The temporary file is fsynced before the
 * rename, and the directory after it, so a power loss right after a save
 * leaves either the old file or the new one, never an empty one.
 */
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { pack, unpack } from 'msgpackr';
import { TemplateCache, type TemplateField } from './template-cache.js';

/** The saved file could not be read back as a template store. */
export class TemplateFileError extends Error {
  override readonly name = 'TemplateFileError';
  constructor(
    message: string,
    readonly path: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

const FORMAT = 1;

interface SavedTemplate {
  id: number;
  options: boolean;
  scopeCount: number;
  /** id, length, enterprise of each field, flattened. */
  fields: number[];
  lastSeenMs: number;
}

interface SavedDomain {
  address: string;
  version: number;
  domainId: number;
  defaultInterval: number;
  /** null when unknown (msgpack has no NaN worth relying on). */
  systemInitMs: number | null;
  samplers: [number, number][];
  templates: SavedTemplate[];
}

interface SavedFile {
  format: number;
  savedAtMs: number;
  domains: SavedDomain[];
}

/** Options of the persistence wrapper. */
export interface TemplatePersistenceOptions {
  /** File to save to and load from. */
  path: string;
  /** Clock (ms since epoch). */
  now: () => number;
  /** TTL of the store built by `load` (0 = keep forever); templates already older are not loaded. */
  ttlMs: number;
}

/** Saves and loads a TemplateCache. */
export class TemplatePersistence {
  constructor(readonly options: TemplatePersistenceOptions) {}

  /** Writes the store atomically; returns the number of templates saved. */
  save(cache: TemplateCache): number {
    const nowMs = this.options.now();
    const domains: SavedDomain[] = [];
    let count = 0;
    for (const d of cache.allDomains()) {
      const templates: SavedTemplate[] = [];
      for (const t of d.templates.values()) {
        if (cache.ttlMs > 0 && nowMs - t.lastSeenMs > cache.ttlMs) continue;
        const fields: number[] = [];
        for (const f of t.fields) fields.push(f.id, f.length, f.enterprise);
        templates.push({ id: t.id, options: t.options, scopeCount: t.scopeCount, fields, lastSeenMs: t.lastSeenMs });
      }
      if (templates.length === 0 && d.samplers.size === 0 && d.defaultInterval === 0) continue;
      count += templates.length;
      domains.push({
        address: d.address,
        version: d.version,
        domainId: d.domainId,
        defaultInterval: d.defaultInterval,
        systemInitMs: Number.isFinite(d.systemInitMs) ? d.systemInitMs : null,
        samplers: [...d.samplers.entries()],
        templates,
      });
    }
    const file: SavedFile = { format: FORMAT, savedAtMs: nowMs, domains };
    const { path } = this.options;
    mkdirSync(dirname(path), { recursive: true });
    const tmp = `${path}.tmp`;
    const bytes = pack(file);
    const fd = openSync(tmp, 'w');
    try {
      for (let off = 0; off < bytes.length; ) off += writeSync(fd, bytes, off, bytes.length - off);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, path);
    syncDir(dirname(path));
    return count;
  }

  /** Builds a store from the file; an absent file gives an empty store. */
  load(): TemplateCache {
    const { path, ttlMs } = this.options;
    const cache = new TemplateCache({ ttlMs });
    if (!existsSync(path)) return cache;
    let file: SavedFile;
    try {
      file = unpack(readFileSync(path)) as SavedFile;
    } catch (err) {
      throw new TemplateFileError(`cannot read template file ${path}`, path, { cause: err });
    }
    if (!isSavedFile(file)) throw new TemplateFileError(`template file ${path} has an unknown layout`, path);
    const nowMs = this.options.now();
    for (const sd of file.domains) {
      const d = cache.domain(sd.address, sd.version, sd.domainId);
      d.defaultInterval = sd.defaultInterval;
      d.systemInitMs = sd.systemInitMs ?? Number.NaN;
      for (const [id, iv] of sd.samplers) d.samplers.set(id, iv);
      for (const st of sd.templates) {
        if (ttlMs > 0 && nowMs - st.lastSeenMs > ttlMs) continue;
        const fields: TemplateField[] = [];
        for (let i = 0; i + 2 < st.fields.length; i += 3) {
          fields.push({ id: st.fields[i]!, length: st.fields[i + 1]!, enterprise: st.fields[i + 2]! });
        }
        cache.set(d, st.id, st.options, st.scopeCount, fields, st.lastSeenMs);
      }
    }
    return cache;
  }
}

/** Makes a rename in `dir` durable; where a directory cannot be opened or synced (some filesystems), the rename stands as it is. */
function syncDir(dir: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(dir, 'r');
    fsyncSync(fd);
  } catch {
    // Not fatal: the file itself is complete on disk.
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

function isSavedFile(x: unknown): x is SavedFile {
  if (typeof x !== 'object' || x === null) return false;
  const f = x as Partial<SavedFile>;
  if (f.format !== FORMAT || !Array.isArray(f.domains)) return false;
  return f.domains.every(
    (d) =>
      typeof d === 'object' &&
      d !== null &&
      typeof d.address === 'string' &&
      Number.isInteger(d.version) &&
      Number.isInteger(d.domainId) &&
      Array.isArray(d.templates) &&
      Array.isArray(d.samplers) &&
      d.templates.every(
        (t) =>
          Number.isInteger(t.id) &&
          Number.isInteger(t.scopeCount) &&
          Array.isArray(t.fields) &&
          t.fields.every((n) => Number.isInteger(n) && n >= 0) &&
          typeof t.lastSeenMs === 'number',
      ),
  );
}
