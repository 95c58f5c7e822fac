/**
 * What the three RadiusStores share: the SQL over FreeRADIUS's tables and
 * netsvc's own, the per-user write lock, and row mapping. Dialect classes
 * supply DDL, time handling, address comparison and error recognition.
 *
 * Concurrency. FreeRADIUS's tables have no unique keys (radusergroup may hold
 * a membership twice), so every write to one user runs in one transaction
 * that first locks that user's `netsvc_userinfo` row (`FOR UPDATE`; SQLite
 * serialises writers with `BEGIN IMMEDIATE`). Two creates of one name are
 * settled by the unique key on `netsvc_userinfo.username`, whose collation
 * is the database default, so MariaDB's case-insensitive names stay unique
 * the way FreeRADIUS matches them.
 */
import type { RadiusStore } from './radius-store.js';
import { SqlRadiusReports } from './sql-radius-reports.js';

export { DEFAULT_DISABLED_GROUP, type IndexSpec, type RadiusStoreOptions, type TableSpec } from './sql-radius-base.js';

/**
 * The shared implementation; one subclass per dialect. Its parts live one
 * floor per file (sql-radius-base.ts → -users → -attributes → -reports).
 */
export abstract class SqlRadiusStore extends SqlRadiusReports implements RadiusStore {}
