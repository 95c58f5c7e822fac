/**
 * `netsvc radius install` on a copy of this machine's /etc/freeradius/3.0:
 * what it writes and links, that it leaves Debian's sql module and the
 * sites-enabled/ symlinks alone, that a second run changes nothing, and that
 * FreeRADIUS itself accepts the result (`freeradius -XC`).
 */
import {
  chmodSync,
  lstatSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { editDefaultSite, lookupGroup, renderSqlModule } from '../../../src/commands/radius-install.js';
import { runCliCaptured } from '../../helpers/cli.js';
import { requireAll } from '../../helpers/databases.js';
import { copyRaddb, freeradiusInstalled } from '../../helpers/freeradius.js';

const installed = freeradiusInstalled();
if (!installed && requireAll) throw new Error('freeradius is required (NETSVC_REQUIRE_ALL=1)');
const MYSQL = 'mysql://radius:s3cret@db.example.net/hotspot';

/** Every file's text and every symlink's target under `dir`, by relative path. */
function snapshot(dir: string, rel = ''): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of readdirSync(join(dir, rel))) {
    const path = join(rel, name);
    const st = lstatSync(join(dir, path));
    if (st.isSymbolicLink()) out[path] = `-> ${readlinkSync(join(dir, path))}`;
    else if (st.isDirectory()) Object.assign(out, snapshot(dir, path));
    else out[path] = `${(st.mode & 0o777).toString(8)} ${st.gid} ${readFileSync(join(dir, path), 'utf8')}`;
  }
  return out;
}

describe.skipIf(!installed)('netsvc radius install on a copy of /etc/freeradius/3.0', () => {
  let dir: string;
  let raddb: string;
  let stock: Record<string, string>;
  const install = (...args: string[]) => runCliCaptured(['radius', 'install', '--raddb', raddb, ...args]);

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'netsvc-radius-install-'));
    // freeradius -C switches to freerad (radiusd.conf's user) when run as root: it must reach the copy.
    chmodSync(dir, 0o755);
    raddb = join(dir, 'raddb');
    await copyRaddb(raddb);
    if (process.getuid?.() !== 0) {
      const conf = join(raddb, 'radiusd.conf');
      writeFileSync(conf, readFileSync(conf, 'utf8').replace(/^(\s*)(user|group) = freerad/gm, '$1#$2 = freerad'));
    }
    stock = snapshot(raddb);
  });

  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('installs netsvc_sql as the sql instance, the counters, policy and dictionary, and FreeRADIUS accepts it', async () => {
    const run = await install('--database', MYSQL);
    expect(run.err).toBe('');
    expect(run.code).toBe(0);
    expect(run.out).toContain('linked mods-enabled/sql -> ../mods-available/netsvc_sql');
    expect(run.out).toContain(
      'edited sites-available/default: netsvc_counters after -sql in authorize {}; sql in session {} (original in sites-available/default.netsvc-orig)',
    );
    expect(run.out).toMatch(/freeradius -XC -d \S+: configuration OK/);

    // Enabled modules are relative symlinks, as Debian makes them; the sites keep theirs.
    expect(readlinkSync(join(raddb, 'mods-enabled', 'sql'))).toBe('../mods-available/netsvc_sql');
    expect(readlinkSync(join(raddb, 'mods-enabled', 'netsvc_sqlcounter'))).toBe('../mods-available/netsvc_sqlcounter');
    expect(readlinkSync(join(raddb, 'sites-enabled', 'default'))).toBe('../sites-available/default');
    expect(readlinkSync(join(raddb, 'sites-enabled', 'inner-tunnel'))).toBe('../sites-available/inner-tunnel');

    // Debian's sql module (the one with the TLS block) is untouched, and not loaded.
    const after = snapshot(raddb);
    expect(after['mods-available/sql']).toBe(stock['mods-available/sql']);
    const sql = readFileSync(join(raddb, 'mods-available', 'netsvc_sql'), 'utf8');
    expect(sql).toMatch(/^\tdialect = "mysql"$/m);
    expect(sql).toMatch(/^\tserver = 'db\.example\.net'$/m);
    expect(sql).toMatch(/^\tport = 3306$/m);
    expect(sql).toMatch(/^\tlogin = 'radius'$/m);
    expect(sql).toMatch(/^\tpassword = 's3cret'$/m);
    expect(sql).toMatch(/^\tradius_db = 'hotspot'$/m);
    expect(sql).not.toMatch(/^\s*tls\s*\{/m);
    // It holds a password: readable by FreeRADIUS's group only.
    const st = statSync(join(raddb, 'mods-available', 'netsvc_sql'));
    expect(st.mode & 0o777).toBe(0o640);
    const freerad = lookupGroup('freerad');
    if (freerad && process.getuid?.() === 0) expect(st.gid).toBe(freerad.gid);

    // The stock files it edits: in place, the original kept once.
    expect(after['sites-available/default.netsvc-orig']).toBe(stock['sites-available/default']);
    expect(after['dictionary.netsvc-orig']).toBe(stock['dictionary']);
    const dictionary = readFileSync(join(raddb, 'dictionary'), 'utf8');
    expect(dictionary.match(/^\$INCLUDE dictionary\.netsvc$/gm)).toHaveLength(1);
    const site = readFileSync(join(raddb, 'sites-available', 'default'), 'utf8');
    expect(site).toMatch(/^\t-sql\n\tnetsvc_counters\n/m);
    expect(site).toMatch(/^session \{[^}]*^\tsql$/m);
    for (const file of ['policy.d/netsvc', 'dictionary.netsvc', 'mods-config/sql/counter/postgresql/netsvc_octets.conf'])
      expect(after[file]).toBeDefined();
    // Nothing else of Debian's changed.
    for (const [path, content] of Object.entries(stock)) {
      if (!['dictionary', 'sites-available/default'].includes(path)) expect(after[path], path).toBe(content);
    }
  });

  it('changes nothing when run again', async () => {
    expect((await install('--database', MYSQL)).code).toBe(0);
    const once = snapshot(raddb);
    const again = await install('--database', MYSQL);
    expect(again.code).toBe(0);
    expect(again.out).toContain('nothing to change: already installed');
    expect(again.out).not.toContain('restart FreeRADIUS');
    expect(snapshot(raddb)).toEqual(once);
  });

  it('replaces a changed file of its own and keeps the one it replaced, outside the directories FreeRADIUS loads', async () => {
    expect((await install('--database', MYSQL)).code).toBe(0);
    const sql = join(raddb, 'mods-available', 'netsvc_sql');
    const edited = readFileSync(sql, 'utf8').replace('busy_timeout = 200', 'busy_timeout = 2000');
    writeFileSync(sql, edited);
    writeFileSync(join(raddb, 'policy.d', 'netsvc'), '# an older netsvc_counters\nnetsvc_counters {\n}\n');
    const run = await install('--database', MYSQL);
    expect(run.code).toBe(0);
    expect(run.out).toContain(
      'updated mods-available/netsvc_sql (the file it replaced is mods-available/netsvc_sql.netsvc-prev)',
    );
    expect(run.out).toContain('updated policy.d/netsvc (the file it replaced is policy.d-netsvc.netsvc-prev)');
    expect(readFileSync(`${sql}.netsvc-prev`, 'utf8')).toBe(edited);
    expect(readdirSync(join(raddb, 'policy.d'))).not.toContain('netsvc.netsvc-prev');
  });

  it("points an enabled Debian sql module at netsvc's, and says what it was", async () => {
    // An operator who enabled Debian's module, and met its TLS block.
    symlinkSync('../mods-available/sql', join(raddb, 'mods-enabled', 'sql'));
    const run = await install('--database', MYSQL);
    expect(run.code).toBe(0);
    expect(run.out).toContain('linked mods-enabled/sql -> ../mods-available/netsvc_sql (was -> ../mods-available/sql)');
  });

  it("takes the entity's database from the configuration; for sqlite it fixes Simultaneous-Use's verify query", async () => {
    const data = join(dir, 'data');
    const config = join(dir, 'netsvc.config.json');
    writeFileSync(
      config,
      JSON.stringify({
        dataDir: data,
        flowSources: {},
        entities: { acme: { radius: 'mysql://x@h/acme' }, beta: { radius: 'sqlite:beta-radius.sqlite' } },
      }),
    );
    const ambiguous = await install('--config', config);
    expect(ambiguous.code).toBe(2);
    expect(ambiguous.err).toContain('choose one with --entity');

    const run = await install('--config', config, '--entity', 'beta');
    expect(run.err).toBe('');
    expect(run.code).toBe(0);
    const sql = readFileSync(join(raddb, 'mods-available', 'netsvc_sql'), 'utf8');
    expect(sql).toMatch(/^\tdialect = "sqlite"$/m);
    expect(sql).toContain(`\t\tfilename = '${join(data, 'beta-radius.sqlite')}'`);
    const queries = 'mods-config/sql/main/sqlite/queries.conf';
    expect(run.out).toContain(`edited ${queries}: simul_verify_query filters on %{SQL-User-Name}`);
    const fixed = readFileSync(join(raddb, queries), 'utf8');
    expect(fixed).not.toContain("username = '%{${group_attribute}}'");
    expect(readFileSync(join(raddb, `${queries}.netsvc-orig`), 'utf8')).toContain("username = '%{${group_attribute}}'");
  });

  it('prints the lines FreeRADIUS fails on, and exits 1', async () => {
    writeFileSync(join(raddb, 'policy.d', 'broken'), 'broken_policy {\n\tif (\n}\n');
    const run = await install('--database', MYSQL);
    expect(run.code).toBe(1);
    expect(run.err).toMatch(/policy\.d\/broken\[\d+\]/);
    expect(run.err).toMatch(/rejects the configuration/);
  });

  it('refuses a directory that is not a raddb', async () => {
    const run = await runCliCaptured(['radius', 'install', '--raddb', dir, '--database', MYSQL]);
    expect(run.code).toBe(1);
    expect(run.err).toContain('is not a FreeRADIUS 3 configuration directory');
  });
});

describe('the texts radius install writes', () => {
  it('quotes database settings so that FreeRADIUS takes them as written', () => {
    const template =
      'sql {\n\tdialect = "mysql"\n\tserver = "localhost"\n\tport = 3306\n\tlogin = "radius"\n\tpassword = \'radpass\'\n\tradius_db = "radius"\n}\n';
    const out = renderSqlModule(template, {
      dialect: 'postgresql',
      server: 'pg',
      port: 5433,
      login: "o'brien",
      password: 'a\\b${c}',
      database: 'radius',
    });
    expect(out).toContain("\tlogin = 'o\\'brien'");
    expect(out).toContain("\tpassword = 'a\\\\b${c}'");
    expect(out).toContain('\tdialect = "postgresql"');
    expect(out).toContain('\tport = 5433');
  });

  it('edits the default site once', () => {
    const site = 'server default {\nauthorize {\n\tfiles\n\t-sql\n\tpap\n}\nsession {\n#\tradutmp\n#\tsql\n}\n}\n';
    const once = editDefaultSite(site);
    expect(once.text).toBe(
      'server default {\nauthorize {\n\tfiles\n\t-sql\n\tnetsvc_counters\n\tpap\n}\nsession {\n#\tradutmp\n\tsql\n}\n}\n',
    );
    expect(editDefaultSite(once.text)).toEqual({ text: once.text, changes: [] });
  });
});
