/**
 * The SystemEvents DDL files in `storage/syslog/schema/`, found both from the
 * TypeScript sources and from the compiled `dist/` tree (tsc copies no .sql).
 */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Dialect } from '../sql/sql-client.js';

/** The schema file of each dialect: rsyslog's own for MySQL and PostgreSQL, ours for SQLite. */
export const SCHEMA_FILES: Record<Dialect, string> = {
  mysql: 'mysql.sql',
  postgres: 'pgsql.sql',
  sqlite: 'sqlite.sql',
};

/** Absolute path of a schema file. */
export function schemaPath(dialect: Dialect): string {
  const name = SCHEMA_FILES[dialect];
  const candidates = [
    new URL(`./schema/${name}`, import.meta.url),
    // dist/storage/syslog/ → storage/syslog/schema/
    new URL(`../../../storage/syslog/schema/${name}`, import.meta.url),
  ];
  for (const url of candidates) {
    const path = fileURLToPath(url);
    if (existsSync(path)) return path;
  }
  throw new Error(`schema file ${name} not found next to ${fileURLToPath(import.meta.url)}`);
}

/** Splits a DDL file into statements: `;` at the end of a line ends one; `--` comment lines are dropped. */
export function splitStatements(sql: string): string[] {
  const out: string[] = [];
  let current: string[] = [];
  for (const line of sql.split(/\r?\n/)) {
    if (/^\s*--/.test(line)) continue;
    current.push(line);
    if (/;\s*$/.test(line)) {
      const stmt = current.join('\n').trim().replace(/;\s*$/, '');
      if (stmt) out.push(stmt);
      current = [];
    }
  }
  const rest = current.join('\n').trim();
  if (rest) out.push(rest);
  return out;
}

/** The statements of a dialect's schema file, as they are. */
export function schemaStatements(dialect: Dialect): string[] {
  return splitStatements(readFileSync(schemaPath(dialect), 'utf8'));
}
