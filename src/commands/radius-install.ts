/**
 * What `netsvc radius install` does to a raddb directory (docs/hotspot.md,
 * section 3): netsvc's own files are written whole (mode 0640, group
 * freerad), stock files are edited in place with a `.netsvc-orig` copy of
 * the original, enabled modules are relative symlinks as Debian makes them,
 * and nothing is touched that already reads as wanted, so a second run
 * changes nothing.
 */
import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  copyFileSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  renameSync,
  statSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import { packageRoot } from '../../collector/listen/thread-id.js';
import { DatabaseUrlError, parseDatabaseUrl } from '../../storage/sql/sql-client.js';
import { resolveSqlitePath } from '../config-paths.js';
import { UsageError, type CliContext } from './context.js';
import { pickEntity } from './profile-run.js';
import { RadiusInstallError } from './radius-install-error.js';

/** The database the sql module is to use, in rlm_sql's terms. */
export type RadiusSqlTarget =
  | { dialect: 'mysql' | 'postgresql'; server: string; port: number; login: string; password: string; database: string }
  | { dialect: 'sqlite'; filename: string };

/** Options of `radius install`, as commander parses them. */
export interface RadiusInstallFlags {
  raddb: string;
  entity?: string;
  database?: string;
}

/** What the install needs; `group` and `freeradius` are looked up by the CLI, and given by tests. */
export interface RadiusInstallOptions {
  raddb: string;
  target: RadiusSqlTarget;
  /** The group FreeRADIUS reads its configuration with (freerad on Debian); null when there is none. */
  group: { name: string; gid: number } | null;
  /** The server binary for the check (`freeradius`, `radiusd`); null skips the check. */
  freeradius: string | null;
  /** netsvc's `radius/` directory (default: the package's). */
  source?: string;
  out(line: string): void;
  err(line: string): void;
}

/** What the install changed, and how the check went. */
export interface RadiusInstallResult {
  changes: string[];
  check: 'ok' | 'skipped';
}

/** File name suffix of the original of each stock file the install edits. */
export const BACKUP_SUFFIX = '.netsvc-orig';

/** File name suffix of the last different version of one of netsvc's own files, when the install replaces it. */
export const PREVIOUS_SUFFIX = '.netsvc-prev';

const OWN_MODE = 0o640;

/** raddb directories FreeRADIUS loads every file of. */
const LOADED_DIRS = new Set(['mods-enabled', 'sites-enabled', 'policy.d']);

/** The sql target of a netsvc database URL; a relative `sqlite:` path is resolved against `baseDir`. */
export function radiusSqlTarget(url: string, baseDir: string): RadiusSqlTarget {
  const db = parseDatabaseUrl(url);
  if (db.dialect === 'sqlite') {
    if (db.path === ':memory:') throw new DatabaseUrlError('FreeRADIUS cannot share an in-memory sqlite database');
    return { dialect: 'sqlite', filename: resolveSqlitePath(url, baseDir) };
  }
  const u = new URL(db.url);
  const database = decodeURIComponent(u.pathname.slice(1));
  if (!database) throw new DatabaseUrlError(`database URL names no database: ${u.protocol}//${u.host}`);
  return {
    dialect: db.dialect === 'postgres' ? 'postgresql' : 'mysql',
    server: u.hostname || 'localhost',
    port: Number(u.port || (db.dialect === 'mysql' ? 3306 : 5432)),
    login: decodeURIComponent(u.username),
    password: decodeURIComponent(u.password),
    database,
  };
}

/** A value as a single-quoted FreeRADIUS string: taken as written, no `${…}` expansion. */
function quoted(value: string): string {
  if (/[\r\n]/.test(value)) throw new UsageError('database settings cannot contain line breaks');
  return `'${value.replace(/[\\']/g, (c) => `\\${c}`)}'`;
}

/** The shipped sql module with the database filled in. */
export function renderSqlModule(template: string, target: RadiusSqlTarget): string {
  const settings: Array<[RegExp, string]> = [[/^(\tdialect = ).*$/m, `"${target.dialect}"`]];
  if (target.dialect === 'sqlite') settings.push([/^(\t\tfilename = ).*$/m, quoted(target.filename)]);
  else {
    settings.push(
      [/^(\tserver = ).*$/m, quoted(target.server)],
      [/^(\tport = ).*$/m, String(target.port)],
      [/^(\tlogin = ).*$/m, quoted(target.login)],
      [/^(\tpassword = ).*$/m, quoted(target.password)],
      [/^(\tradius_db = ).*$/m, quoted(target.database)],
    );
  }
  return settings.reduce((text, [re, value]) => {
    if (!re.test(text)) throw new Error(`radius/mods-available/netsvc_sql has no line matching ${re.source}`);
    return text.replace(re, (_, head: string) => `${head}${value}`);
  }, template);
}

/** The default site with `sql` in session {} and `netsvc_counters` after the sql line of authorize {}; and what changed. */
export function editDefaultSite(text: string): { text: string; changes: string[] } {
  const lines = text.split('\n');
  // Sections of a virtual server start at column 0 (`authorize {`) and end with `}` at column 0.
  const bounds = (name: string): [number, number] | undefined => {
    const start = lines.findIndex((l) => new RegExp(`^${name}\\s*\\{`).test(l));
    if (start < 0) return undefined;
    const end = lines.findIndex((l, i) => i > start && /^\}/.test(l));
    return end < 0 ? undefined : [start, end];
  };
  const changes: string[] = [];
  const authorize = bounds('authorize');
  if (!authorize) throw new RadiusInstallError('site', 'the default site has no authorize {} section');
  const inAuthorize = lines.slice(authorize[0], authorize[1]);
  if (!inAuthorize.some((l) => /^\s*netsvc_counters\s*$/.test(l))) {
    const at = inAuthorize.findIndex((l) => /^\s*-?sql\s*$/.test(l));
    if (at < 0) throw new RadiusInstallError('site', "authorize {} of the default site does not call sql: add '-sql' there");
    lines.splice(authorize[0] + at + 1, 0, '\tnetsvc_counters');
    changes.push(`netsvc_counters after ${inAuthorize[at]!.trim()} in authorize {}`);
  }
  const session = bounds('session');
  if (!session) throw new RadiusInstallError('site', 'the default site has no session {} section');
  const inSession = lines.slice(session[0], session[1]);
  if (!inSession.some((l) => /^\s*-?sql\s*$/.test(l))) {
    const commented = inSession.findIndex((l) => /^#\s*sql\s*$/.test(l));
    if (commented >= 0) lines[session[0] + commented] = '\tsql';
    else lines.splice(session[1], 0, '\tsql');
    changes.push('sql in session {}');
  }
  return { text: lines.join('\n'), changes };
}

/** raddb/dictionary with netsvc's included once. */
export function includeDictionary(text: string): string {
  if (/^\s*\$INCLUDE\s+(\S*\/)?dictionary\.netsvc\s*$/m.test(text)) return text;
  return `${text.endsWith('\n') ? text : `${text}\n`}\n#  netsvc's attributes (netsvc radius install)\n$INCLUDE dictionary.netsvc\n`;
}

/**
 * The sqlite queries with Simultaneous-Use fixed: FreeRADIUS 3.2's
 * simul_verify_query for sqlite filters on `%{${group_attribute}}` (empty
 * while authenticating), so a second login is let in; mysql and postgresql
 * filter on `%{SQL-User-Name}`.
 */
export function fixSqliteSimulVerify(text: string): string {
  let inQuery = false;
  return text
    .split('\n')
    .map((line) => {
      if (/^simul_verify_query\b/.test(line)) inQuery = true;
      const out = inQuery ? line.replaceAll('%{${group_attribute}}', '%{SQL-User-Name}') : line;
      if (inQuery && !line.endsWith('\\')) inQuery = false;
      return out;
    })
    .join('\n');
}

/** The `freeradius -XC` check: the lines to show when it fails, or undefined when the binary is missing. */
export function checkRaddb(binary: string, raddb: string): { ok: boolean; lines: string[] } | undefined {
  const run = spawnSync(binary, ['-XC', '-d', raddb], { encoding: 'utf8', timeout: 60_000 });
  if (run.error && (run.error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
  if (run.status === 0) return { ok: true, lines: [] };
  // The server stops at the first error and says why in its last lines (the file names it read before are noise).
  const lines = `${run.stdout ?? ''}${run.stderr ?? ''}`
    .trimEnd()
    .split('\n')
    .filter((l) => !/^including (configuration file|files in directory|dictionary file) /.test(l));
  return { ok: false, lines: lines.slice(-12) };
}

/** The install's file operations on one raddb, recording each change. */
class Raddb {
  readonly changes: string[] = [];

  constructor(
    private readonly dir: string,
    private readonly group: RadiusInstallOptions['group'],
    private readonly err: (line: string) => void,
  ) {}

  private path(rel: string): string {
    return join(this.dir, rel);
  }

  private note(change: string): void {
    this.changes.push(change);
  }

  /** Writes one of netsvc's own files: 0640, group freerad (it may hold a password); a different one is kept as `.netsvc-prev`. */
  writeOwn(rel: string, content: string): void {
    const path = this.path(rel);
    mkdirSync(dirname(path), { recursive: true, mode: 0o755 });
    const before = existsSync(path) ? readFileSync(path, 'utf8') : undefined;
    if (before === undefined) {
      writeFileSync(path, content, { mode: OWN_MODE });
      this.note(`wrote ${rel}`);
    } else if (before !== content) {
      // Someone's edits (a tls {} block, a longer busy_timeout) or an older version: kept, not lost.
      const previous = this.backupOf(path, PREVIOUS_SUFFIX);
      copyFileSync(path, previous);
      writeFileSync(path, content);
      this.note(`updated ${rel} (the file it replaced is ${relative(this.dir, previous)})`);
    }
    const st = statSync(path);
    if ((st.mode & 0o777) !== OWN_MODE) {
      chmodSync(path, OWN_MODE);
      if (before === content) this.note(`mode 0640 on ${rel}`);
    }
    if (this.group && st.gid !== this.group.gid) {
      try {
        chownSync(path, st.uid, this.group.gid);
        if (before === content) this.note(`group ${this.group.name} on ${rel}`);
      } catch (err) {
        this.err(
          `warning: could not give ${rel} to group ${this.group.name} (${(err as NodeJS.ErrnoException).code}): run as root`,
        );
      }
    }
  }

  /**
   * Where the original of `path` is kept: beside it, except in the directories
   * FreeRADIUS loads whole (a copy there would be loaded too), from where it
   * goes up to raddb as `<dir>-<name>.netsvc-orig` (or `-prev`).
   */
  private backupOf(path: string, suffix = BACKUP_SUFFIX): string {
    const dir = relative(this.dir, dirname(path));
    return LOADED_DIRS.has(dir) ? join(this.dir, `${dir}-${basename(path)}${suffix}`) : `${path}${suffix}`;
  }

  /** Edits a stock file in place (through its symlink), keeping the original once (backupOf). */
  editInPlace(rel: string, edit: (text: string) => { text: string; changes: string[] }): void {
    const path = realpathSync(this.path(rel));
    const shown = relative(this.dir, path);
    const before = readFileSync(path, 'utf8');
    const { text, changes } = edit(before);
    if (text === before) return;
    const backup = this.backupOf(path);
    if (!existsSync(backup)) {
      copyFileSync(path, backup);
      const st = statSync(path);
      try {
        chownSync(backup, st.uid, st.gid);
      } catch {
        // Not root: the copy is the caller's, which is who edits the original too.
      }
    }
    // Written in place, not replaced: the file keeps its owner, group and mode.
    writeFileSync(path, text);
    this.note(`edited ${shown}: ${changes.join('; ')} (original in ${relative(this.dir, backup)})`);
  }

  /** Makes `rel` a symlink to `target` (relative, as Debian's mods-enabled/ has them). */
  link(rel: string, target: string): void {
    const path = this.path(rel);
    let was = '';
    try {
      const st = lstatSync(path);
      if (st.isSymbolicLink()) {
        const current = readlinkSync(path);
        if (current === target) return;
        unlinkSync(path);
        was = ` (was -> ${current})`;
      } else {
        // A plain file (someone's own module): kept, where FreeRADIUS does not load it.
        const aside = this.backupOf(path);
        if (existsSync(aside))
          throw new RadiusInstallError('raddb', `${rel} is a file and ${relative(this.dir, aside)} exists: move one away`);
        renameSync(path, aside);
        was = ` (the file that was there is now ${relative(this.dir, aside)})`;
      }
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    symlinkSync(target, path);
    this.note(`linked ${rel} -> ${target}${was}`);
  }
}

function describeTarget(t: RadiusSqlTarget): string {
  return t.dialect === 'sqlite' ? `sqlite ${t.filename}` : `${t.dialect} ${t.login}@${t.server}:${t.port}/${t.database}`;
}

/** Installs netsvc's FreeRADIUS configuration into `opts.raddb`, prints what changed and checks the result. */
export function installRadiusConfig(opts: RadiusInstallOptions): RadiusInstallResult {
  const source = opts.source ?? join(packageRoot(dirname(fileURLToPath(import.meta.url))), 'radius');
  const raddb = resolve(opts.raddb);
  for (const need of ['radiusd.conf', 'dictionary', 'mods-available', 'mods-enabled', 'policy.d', 'sites-enabled/default']) {
    if (!existsSync(join(raddb, need)))
      throw new RadiusInstallError('raddb', `${raddb} is not a FreeRADIUS 3 configuration directory: it has no ${need}`);
  }
  const read = (rel: string) => readFileSync(join(source, rel), 'utf8');
  // Real path: edits go through symlinks, and their paths are shown relative to it.
  const fs = new Raddb(realpathSync(raddb), opts.group, opts.err);
  opts.out(`installing netsvc's FreeRADIUS configuration into ${raddb} (sql on ${describeTarget(opts.target)})`);

  fs.writeOwn('mods-available/netsvc_sql', renderSqlModule(read('mods-available/netsvc_sql'), opts.target));
  fs.link('mods-enabled/sql', '../mods-available/netsvc_sql');
  fs.writeOwn('mods-available/netsvc_sqlcounter', read('mods-available/netsvc_sqlcounter'));
  fs.link('mods-enabled/netsvc_sqlcounter', '../mods-available/netsvc_sqlcounter');
  const counters = 'mods-config/sql/counter';
  for (const dialect of readdirSync(join(source, counters))) {
    for (const file of readdirSync(join(source, counters, dialect))) {
      fs.writeOwn(`${counters}/${dialect}/${file}`, read(`${counters}/${dialect}/${file}`));
    }
  }
  fs.writeOwn('policy.d/netsvc', read('policy.d/netsvc'));
  fs.writeOwn('dictionary.netsvc', read('dictionary.netsvc'));
  fs.editInPlace('dictionary', (text) => ({ text: includeDictionary(text), changes: ['$INCLUDE dictionary.netsvc'] }));
  fs.editInPlace('sites-enabled/default', editDefaultSite);
  const queries = 'mods-config/sql/main/sqlite/queries.conf';
  if (opts.target.dialect === 'sqlite' && existsSync(join(raddb, queries))) {
    fs.editInPlace(queries, (text) => ({
      text: fixSqliteSimulVerify(text),
      changes: ['simul_verify_query filters on %{SQL-User-Name}'],
    }));
  }

  for (const change of fs.changes) opts.out(`  ${change}`);
  if (!fs.changes.length) opts.out('  nothing to change: already installed');

  if (!opts.freeradius) return { changes: fs.changes, check: 'skipped' };
  const check = checkRaddb(opts.freeradius, raddb);
  if (!check) {
    opts.out(`${opts.freeradius} not found: configuration not checked`);
    return { changes: fs.changes, check: 'skipped' };
  }
  if (!check.ok) {
    for (const line of check.lines) opts.err(line);
    throw new RadiusInstallError(
      'check',
      `${opts.freeradius} -XC -d ${raddb} rejects the configuration (its last lines are above)`,
    );
  }
  opts.out(`${opts.freeradius} -XC -d ${raddb}: configuration OK`);
  return { changes: fs.changes, check: 'ok' };
}

/** The group `name` from /etc/group, or null when there is none. */
export function lookupGroup(name: string, groupFile = '/etc/group'): { name: string; gid: number } | null {
  try {
    const line = readFileSync(groupFile, 'utf8')
      .split('\n')
      .find((l) => l.split(':')[0] === name);
    const gid = Number(line?.split(':')[2]);
    return line && Number.isInteger(gid) ? { name, gid } : null;
  } catch {
    return null;
  }
}

/** The server binary on PATH: Debian's `freeradius`, else `radiusd`; null when neither is. */
function serverBinary(): string | null {
  for (const bin of ['freeradius', 'radiusd']) {
    if (spawnSync(bin, ['-v'], { stdio: 'ignore' }).error === undefined) return bin;
  }
  return null;
}

/** `netsvc radius install`'s action: the database from `--database` or the entity, then the install. */
export async function runRadiusInstall(ctx: CliContext, cmd: Command, flags: RadiusInstallFlags): Promise<void> {
  if (flags.database && flags.entity) throw new UsageError('give --entity or --database, not both');
  let target: RadiusSqlTarget;
  if (flags.database) target = radiusSqlTarget(flags.database, process.cwd());
  else {
    const config = await ctx.config(cmd);
    target = radiusSqlTarget(pickEntity(config, flags.entity)[1], config.dataDir);
  }
  const result = installRadiusConfig({
    raddb: flags.raddb,
    target,
    group: lookupGroup('freerad'),
    freeradius: serverBinary(),
    out: ctx.out,
    err: ctx.err,
  });
  if (result.changes.length) ctx.out('restart FreeRADIUS to use it: systemctl restart freeradius (or freeradius -X to watch it)');
}
