/**
 * Keeps the template store across restarts: a v9/IPFIX exporter may resend
 * its templates only every few minutes, and without them its data is
 * useless until then.
 *
 * One file (msgpack) per exporter address in the source's directory holds
 * that exporter's domains: templates with their last-announced time, and
 * what options data said (sampler intervals, system init time). A save
 * writes only the exporters whose templates changed since the last one and
 * removes the files of exporters no longer held, so its cost follows the
 * change, not the store: one exporter churning templates rewrites its own
 * file (bounded by the per-exporter caps), never everyone's.
 *
 * Each file is written to a temporary name, fsynced and renamed, and the
 * directory fsynced once per save, so a power loss leaves either the old
 * file or the new one, never an empty one. The caller chooses the
 * directory (in the data dir) and passes the clock.
 */
import {
  closeSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { pack, unpack } from 'msgpackr';
import { TemplateCache, type ExporterState, type TemplateField, type TemplateLimits } from '../decode/template-cache.js';

/** A saved file could not be read back as templates. */
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

/** Layout of a per-exporter file. */
const FORMAT = 2;
/** Layout of the earlier single file holding every exporter. */
const LEGACY_FORMAT = 1;
const SUFFIX = '.msgpack';

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
  /** Directory of the per-exporter files. */
  dir: string;
  /** A single file of the earlier layout, read when `dir` holds no file yet and removed by the next save. */
  legacyPath?: string;
  /** Clock (ms since epoch). */
  now: () => number;
  /** TTL of the store built by `load` (0 = keep forever); templates already older are not loaded. */
  ttlMs: number;
  /** Bounds of the store built by `load`. */
  limits?: Partial<TemplateLimits>;
}

/** Saves and loads a TemplateCache, one file per exporter. */
export class TemplatePersistence {
  /** Exporter address → its revision when its file was last written (or read). */
  private readonly saved = new Map<string, number>();
  private legacyPending = false;
  /** Files the last `load` could not read (their exporters start without templates). */
  unreadable: TemplateFileError[] = [];

  constructor(readonly options: TemplatePersistenceOptions) {}

  /**
   * Writes the files of exporters whose templates changed (with `all`, of
   * every exporter: at shutdown, so the times of re-announcements are kept
   * too) and removes those of exporters gone; returns the templates written.
   */
  save(cache: TemplateCache, all = false): number {
    const { dir } = this.options;
    const nowMs = this.options.now();
    mkdirSync(dir, { recursive: true });
    let count = 0;
    let touched = false;
    const present = new Set<string>();
    for (const e of cache.allExporters()) {
      present.add(e.address);
      if (!all && this.saved.get(e.address) === e.revision) continue;
      count += this.writeExporter(e, cache.ttlMs, nowMs);
      this.saved.set(e.address, e.revision);
      touched = true;
    }
    for (const address of [...this.saved.keys()]) {
      if (present.has(address)) continue;
      rmSync(this.fileOf(address), { force: true });
      this.saved.delete(address);
      touched = true;
    }
    if (this.legacyPending && this.options.legacyPath !== undefined) {
      rmSync(this.options.legacyPath, { force: true });
      this.legacyPending = false;
    }
    if (touched) syncDir(dir);
    return count;
  }

  /** Builds a store from the files; no file gives an empty store, an unreadable one is listed in `unreadable`. */
  load(): TemplateCache {
    const { dir, legacyPath, ttlMs, limits } = this.options;
    const cache = new TemplateCache({ ttlMs, ...(limits && { limits }) });
    this.unreadable = [];
    this.saved.clear();
    const names = existsSync(dir) ? readdirSync(dir).filter((n) => n.endsWith(SUFFIX)) : [];
    if (names.length === 0 && legacyPath !== undefined && existsSync(legacyPath)) {
      // Every exporter of the old single file is written to its own file by the next save.
      const file = this.read(legacyPath, LEGACY_FORMAT);
      if (file !== undefined) this.restore(cache, file.domains);
      this.legacyPending = true;
      return cache;
    }
    for (const name of names) {
      const file = this.read(join(dir, name), FORMAT);
      if (file !== undefined) this.restore(cache, file.domains);
    }
    for (const e of cache.allExporters()) this.saved.set(e.address, e.revision);
    return cache;
  }

  private read(path: string, format: number): SavedFile | undefined {
    let file: unknown;
    try {
      file = unpack(readFileSync(path));
    } catch (err) {
      this.unreadable.push(new TemplateFileError(`cannot read template file ${path}`, path, { cause: err }));
      return undefined;
    }
    if (!isSavedFile(file, format)) {
      this.unreadable.push(new TemplateFileError(`template file ${path} has an unknown layout`, path));
      return undefined;
    }
    return file;
  }

  private restore(cache: TemplateCache, domains: readonly SavedDomain[]): void {
    const nowMs = this.options.now();
    const { ttlMs } = this.options;
    for (const sd of domains) {
      const live = sd.templates.filter((st) => !(ttlMs > 0 && nowMs - st.lastSeenMs > ttlMs));
      const usedMs = live.reduce((m, st) => Math.max(m, st.lastSeenMs), 0);
      const d = cache.domain(sd.address, sd.version, sd.domainId, usedMs);
      d.defaultInterval = sd.defaultInterval;
      d.systemInitMs = sd.systemInitMs ?? Number.NaN;
      for (const [id, iv] of sd.samplers) d.samplers.set(id, iv);
      for (const st of live) {
        const fields: TemplateField[] = [];
        for (let i = 0; i + 2 < st.fields.length; i += 3) {
          fields.push({ id: st.fields[i]!, length: st.fields[i + 1]!, enterprise: st.fields[i + 2]! });
        }
        cache.restore(d, st.id, st.options, st.scopeCount, fields, st.lastSeenMs);
      }
    }
  }

  private writeExporter(e: ExporterState, ttlMs: number, nowMs: number): number {
    const domains: SavedDomain[] = [];
    let count = 0;
    for (const d of e.domains.values()) {
      const templates: SavedTemplate[] = [];
      for (const t of d.templates.values()) {
        if (ttlMs > 0 && nowMs - t.lastSeenMs > ttlMs) continue;
        const fields: number[] = [];
        for (const f of t.fields) fields.push(f.id, f.length, f.enterprise);
        templates.push({ id: t.id, options: t.options, scopeCount: t.scopeCount, fields, lastSeenMs: t.lastSeenMs });
      }
      if (templates.length === 0 && d.samplers.size === 0 && d.defaultInterval === 0) continue;
      count += templates.length;
      domains.push({
        address: e.address,
        version: d.version,
        domainId: d.domainId,
        defaultInterval: d.defaultInterval,
        systemInitMs: Number.isFinite(d.systemInitMs) ? d.systemInitMs : null,
        samplers: [...d.samplers.entries()],
        templates,
      });
    }
    const path = this.fileOf(e.address);
    if (domains.length === 0) {
      rmSync(path, { force: true });
      return 0;
    }
    writeAtomically(path, pack({ format: FORMAT, savedAtMs: nowMs, domains } satisfies SavedFile));
    return count;
  }

  /** The file of one exporter: its address, with the characters a file name should not hold replaced. */
  private fileOf(address: string): string {
    return join(this.options.dir, address.replace(/[^0-9A-Za-z.]/g, '_') + SUFFIX);
  }
}

function writeAtomically(path: string, bytes: Uint8Array): void {
  const tmp = `${path}.tmp`;
  const fd = openSync(tmp, 'w');
  try {
    for (let off = 0; off < bytes.length;) off += writeSync(fd, bytes, off, bytes.length - off);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
}

/** Makes renames in `dir` durable; where a directory cannot be opened or synced (some filesystems), they stand as they are. */
function syncDir(dir: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(dir, 'r');
    fsyncSync(fd);
  } catch {
    // Not fatal: the files themselves are complete on disk.
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

function isSavedFile(x: unknown, format: number): x is SavedFile {
  if (typeof x !== 'object' || x === null) return false;
  const f = x as Partial<SavedFile>;
  if (f.format !== format || !Array.isArray(f.domains)) return false;
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
