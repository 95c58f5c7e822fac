/**
 * FreeRADIUS's own schema.sql files (copied unmodified into
 * `storage/radius/schema/`), found from the TypeScript sources and from the
 * compiled `dist/` tree alike (tsc copies no .sql).
 */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Dialect } from '../sql/sql-client.js';

/** File of each dialect, named as FreeRADIUS names its directories. */
export const FREERADIUS_SCHEMA_FILES: Record<Dialect, string> = {
  mysql: 'mysql.sql',
  postgres: 'postgresql.sql',
  sqlite: 'sqlite.sql',
};

/** Absolute path of a dialect's FreeRADIUS schema file. */
export function freeradiusSchemaPath(dialect: Dialect): string {
  const name = FREERADIUS_SCHEMA_FILES[dialect];
  const candidates = [
    new URL(`./schema/${name}`, import.meta.url),
    // dist/storage/radius/ → storage/radius/schema/
    new URL(`../../../storage/radius/schema/${name}`, import.meta.url),
  ];
  for (const url of candidates) {
    const path = fileURLToPath(url);
    if (existsSync(path)) return path;
  }
  throw new Error(`FreeRADIUS schema file ${name} not found next to ${fileURLToPath(import.meta.url)}`);
}

/**
 * Splits a schema file into statements: a `;` at the end of a line ends one,
 * `--` and `#` comment lines are dropped. Enough for FreeRADIUS's files,
 * which hold no procedures.
 */
export function splitSqlStatements(sql: string): string[] {
  const out: string[] = [];
  let current: string[] = [];
  for (const line of sql.split(/\r?\n/)) {
    if (/^\s*(--|#)/.test(line)) continue;
    current.push(line);
    if (/;\s*$/.test(line)) {
      const stmt = current.join('\n').trim().replace(/;\s*$/, '').trim();
      if (stmt && !/^\/\*[\s\S]*\*\/$/.test(stmt)) out.push(stmt);
      current = [];
    }
  }
  const rest = current.join('\n').trim();
  if (rest && !/^\/\*[\s\S]*\*\/$/.test(rest)) out.push(rest);
  return out;
}

/** The statements of a dialect's FreeRADIUS schema, as FreeRADIUS ships them. */
export function freeradiusSchemaStatements(dialect: Dialect): string[] {
  return splitSqlStatements(readFileSync(freeradiusSchemaPath(dialect), 'utf8'));
}
