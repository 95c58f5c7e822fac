import mysql from 'mysql2';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import type { Command } from 'commander';
import type { CliContext } from '../../src/commands/context.js';
import type { Config } from '../../src/config.js';
import { configMayUseTls, databaseUrlMayUseTls, DEFERRED_EXTRA_CA_VARIABLE, deferredExtraCa } from '../../src/extra-ca.js';

/** mysql2's own reading of a pool's `uri`, as MysqlSqlClient gives it (a pool connects only when used). */
function mysqlSsl(url: string): unknown {
  const pool = mysql.createPool({ uri: url }) as unknown as { config: { connectionConfig: { ssl: unknown } }; end(): void };
  try {
    return pool.config.connectionConfig.ssl;
  } finally {
    pool.end();
  }
}

/** Whether the client library itself would ask the server for TLS with this URL; 'refused' when it rejects the URL. */
function clientAsksTls(url: string): boolean | 'refused' {
  try {
    if (url.startsWith('mysql:')) return Boolean(mysqlSsl(url));
    // pg.Client reads connectionString and, without TLS settings in it, PGSSLMODE; it connects only when asked.
    return Boolean(new pg.Client({ connectionString: url }).ssl);
  } catch {
    return 'refused';
  }
}

const MYSQL = 'mysql://netsvc:secret@db.example:3306/radius';
const POSTGRES = 'postgres://netsvc:secret@db.example:5432/radius';

const mysqlUrls = [
  MYSQL,
  `${MYSQL}?charset=utf8mb4`,
  `${MYSQL}?ssl={}`,
  `${MYSQL}?ssl=${encodeURIComponent('{"rejectUnauthorized":false}')}`,
  `${MYSQL}?ssl=${encodeURIComponent('{"rejectUnauthorized":true}')}`,
  `${MYSQL}?ssl=Amazon%20RDS`,
  `${MYSQL}?ssl=false`,
  `${MYSQL}?ssl=0`,
  `${MYSQL}?ssl=`,
  `${MYSQL}?ssl=null`,
  `${MYSQL}?ssl={}&ssl=false`,
  `${MYSQL}?ssl=false&ssl={}`,
  `${MYSQL}?ssl=true`,
];

const postgresUrls = [
  POSTGRES,
  POSTGRES.replace('postgres:', 'postgresql:'),
  `${POSTGRES}?application_name=netsvc`,
  ...['disable', 'prefer', 'require', 'verify-ca', 'verify-full', 'no-verify', ''].map((m) => `${POSTGRES}?sslmode=${m}`),
  ...['true', '1', '0', 'false', 'no-verify', ''].map((v) => `${POSTGRES}?ssl=${v}`),
  `${POSTGRES}?ssl=1&sslmode=disable`,
  `${POSTGRES}?ssl=0&sslmode=verify-full`,
  `${POSTGRES}?sslmode=require&sslmode=disable`,
  `${POSTGRES}?sslmode=disable&sslmode=require`,
  `${POSTGRES}?ssl=1&ssl=0`,
  `${POSTGRES}?sslnegotiation=direct`,
  `${POSTGRES}?uselibpqcompat=true&sslmode=require`,
  `${POSTGRES}?uselibpqcompat=true&sslmode=disable`,
];

const savedPgSslMode = process.env.PGSSLMODE;
afterEach(() => {
  if (savedPgSslMode === undefined) delete process.env.PGSSLMODE;
  else process.env.PGSSLMODE = savedPgSslMode;
});

describe('databaseUrlMayUseTls: a database URL that asks for TLS (src/extra-ca.ts)', () => {
  it('says no for sqlite: files', () => {
    expect(databaseUrlMayUseTls('sqlite:radius.sqlite', {})).toBe(false);
    expect(databaseUrlMayUseTls('sqlite:/var/lib/netsvc/sys?ssl=1.sqlite', {})).toBe(false);
  });

  it.each(mysqlUrls)('agrees with mysql2 on %s', (url) => {
    const client = clientAsksTls(url);
    // A URL the client refuses makes no connection: either answer is safe, only a missed TLS is not.
    if (client !== 'refused') expect(databaseUrlMayUseTls(url, {})).toBe(client);
  });

  for (const pgSslMode of [undefined, '', 'disable', 'prefer', 'require', 'verify-full', 'no-verify']) {
    it.each(postgresUrls)(`agrees with pg on %s, PGSSLMODE ${pgSslMode ?? 'unset'}`, (url) => {
      if (pgSslMode === undefined) delete process.env.PGSSLMODE;
      else process.env.PGSSLMODE = pgSslMode;
      const client = clientAsksTls(url);
      if (client !== 'refused') expect(databaseUrlMayUseTls(url, { PGSSLMODE: pgSslMode })).toBe(client);
    });
  }

  it('the cases above include URLs with TLS and without, for both clients', () => {
    for (const urls of [mysqlUrls, postgresUrls]) {
      delete process.env.PGSSLMODE;
      const answers = new Set(urls.map(clientAsksTls));
      expect(answers).toContain(true);
      expect(answers).toContain(false);
    }
  });

  it('says yes for a URL it cannot read, rather than miss a TLS connection', () => {
    expect(databaseUrlMayUseTls('postgres://netsvc@/radius?ssl=0', {})).toBe(true);
    expect(databaseUrlMayUseTls('mysql://[not-an-address/radius', {})).toBe(true);
  });
});

describe('configMayUseTls', () => {
  const plain = { radius: 'sqlite:radius.sqlite', syslog: `${MYSQL}?charset=utf8mb4` };
  it('looks at every database of every entity', () => {
    expect(configMayUseTls({ entities: { a: plain, b: { radius: POSTGRES } } }, {})).toBe(false);
    expect(configMayUseTls({ entities: { a: plain, b: { syslog: `${POSTGRES}?sslmode=verify-full` } } }, {})).toBe(true);
    expect(configMayUseTls({ entities: { a: { ...plain, radius: `${MYSQL}?ssl={}` } } }, {})).toBe(true);
    expect(configMayUseTls({ entities: { a: plain, b: { radius: POSTGRES } } }, { PGSSLMODE: 'require' })).toBe(true);
    expect(configMayUseTls({ entities: {} }, { PGSSLMODE: 'require' })).toBe(false);
  });
});

describe('deferredExtraCa', () => {
  const noTls = { entities: { default: { radius: 'sqlite:radius.sqlite', syslog: `${POSTGRES}?sslmode=disable` } } };
  const context = (): CliContext => ({
    config: async () => noTls as unknown as Config,
    beforeTls: async () => undefined,
    out: () => undefined,
    err: () => undefined,
    env: {},
  });

  it('leaves the context and the environment alone when bin/netsvc deferred nothing', () => {
    const ctx = context();
    const env: NodeJS.ProcessEnv = { PATH: '/usr/bin', NODE_EXTRA_CA_CERTS: '/etc/ssl/certs/site-ca.pem' };
    expect(deferredExtraCa(ctx, env)).toBe(ctx);
    expect(env).toEqual({ PATH: '/usr/bin', NODE_EXTRA_CA_CERTS: '/etc/ssl/certs/site-ca.pem' });
  });

  it('puts NODE_EXTRA_CA_CERTS back as bin/netsvc found it, and runs a command that reaches no TLS database as it is', async () => {
    const ctx = context();
    const file = '/etc/ssl/certs/site-ca.pem';
    const env: NodeJS.ProcessEnv = { PATH: '/usr/bin', [DEFERRED_EXTRA_CA_VARIABLE]: file };
    const deferred = deferredExtraCa(ctx, env);
    expect(env).toEqual({ PATH: '/usr/bin', NODE_EXTRA_CA_CERTS: file });
    expect(deferred).not.toBe(ctx);
    expect([deferred.out, deferred.err, deferred.env]).toEqual([ctx.out, ctx.err, ctx.env]);
    expect(await deferred.config({} as Command)).toBe(await ctx.config({} as Command));
  });

  it('treats an empty NODE_EXTRA_CA_CERTS as Node does, as none', () => {
    const ctx = context();
    const env: NodeJS.ProcessEnv = { [DEFERRED_EXTRA_CA_VARIABLE]: '' };
    expect(deferredExtraCa(ctx, env)).toBe(ctx);
    expect(env).toEqual({});
  });
});
