/**
 * netsvc's own tables beside FreeRADIUS's, described once and rendered per
 * dialect: user info (api.md 2.4's optional fields and audit stamps),
 * profile descriptions and quota purchases. FreeRADIUS's tables are never
 * altered; everything here is prefixed `netsvc_`, so it cannot clash with
 * daloRADIUS's `userinfo` in the same database.
 */
import type { Dialect } from '../sql/sql-client.js';
import { QUOTA_FIELD_MAX as Q } from './quota-purchase.js';
import { INFO_FIELD_MAX, INFO_FIELDS, NAME_MAX } from './radius-store.js';

interface Types {
  id: string;
  text: (n: number) => string;
  datetime: string;
  decimal: string;
  suffix: string;
}

const TYPES: Record<Dialect, Types> = {
  mysql: {
    id: 'int unsigned NOT NULL AUTO_INCREMENT PRIMARY KEY',
    text: (n) => `varchar(${n})`,
    datetime: 'datetime',
    decimal: 'decimal(14,2)',
    // No explicit collation: the tables take the database default, as FreeRADIUS's do, so names compare alike.
    suffix: ' ENGINE=InnoDB',
  },
  postgres: {
    id: 'serial PRIMARY KEY',
    text: (n) => `varchar(${n})`,
    datetime: 'timestamp',
    decimal: 'numeric(14,2)',
    suffix: '',
  },
  sqlite: { id: 'INTEGER PRIMARY KEY AUTOINCREMENT', text: () => 'TEXT', datetime: 'TEXT', decimal: 'TEXT', suffix: '' },
};

/** CREATE statements of netsvc's tables for a dialect, table by table. */
export function netsvcTables(dialect: Dialect): Array<{ name: string; ddl: string[] }> {
  const t = TYPES[dialect];
  const info = INFO_FIELDS.map((f) => `  ${f} ${t.text(INFO_FIELD_MAX[f])} NULL`).join(',\n');
  return [
    {
      name: 'netsvc_userinfo',
      ddl: [
        `CREATE TABLE netsvc_userinfo (
  id ${t.id},
  username ${t.text(NAME_MAX)} NOT NULL,
  usertype ${t.text(8)} NOT NULL,
${info},
  createddate ${t.datetime} NOT NULL,
  createdby ${t.text(128)} NOT NULL,
  updateddate ${t.datetime} NULL,
  updatedby ${t.text(128)} NULL
)${t.suffix}`,
        'CREATE UNIQUE INDEX netsvc_userinfo_username ON netsvc_userinfo (username)',
      ],
    },
    {
      name: 'netsvc_profile',
      ddl: [
        `CREATE TABLE netsvc_profile (
  groupname ${t.text(NAME_MAX)} NOT NULL PRIMARY KEY,
  description ${t.text(500)} NOT NULL,
  createddate ${t.datetime} NOT NULL,
  updateddate ${t.datetime} NULL
)${t.suffix}`,
      ],
    },
    {
      name: 'netsvc_quota_purchase',
      ddl: [
        `CREATE TABLE netsvc_quota_purchase (
  id ${t.id},
  transaction_time ${t.datetime} NOT NULL,
  username ${t.text(Q.username)} NOT NULL,
  plan_name ${t.text(Q.plan_name)} NOT NULL,
  currency ${t.text(Q.currency)} NOT NULL,
  amount ${t.decimal} NOT NULL,
  user_profiles ${t.text(Q.user_profiles)} NOT NULL,
  remarks ${t.text(Q.remarks)} NOT NULL,
  create_by ${t.text(Q.create_by)} NOT NULL,
  create_at ${t.datetime} NOT NULL
)${t.suffix}`,
        'CREATE INDEX netsvc_quota_purchase_time ON netsvc_quota_purchase (transaction_time)',
        'CREATE INDEX netsvc_quota_purchase_user ON netsvc_quota_purchase (username, transaction_time)',
      ],
    },
  ];
}

/** Extra report indexes (`netsvc db index radius`): each filter column then the sort column. */
export function reportIndexes(dialect: Dialect): Array<{ name: string; table: string; columns: string; ddl: string }> {
  // PostgreSQL: CONCURRENTLY, so FreeRADIUS's inserts are not blocked while a large radacct is indexed
  // (MariaDB's InnoDB builds secondary indexes online anyway; SQLite has no such mode).
  const create = dialect === 'postgres' ? 'CREATE INDEX CONCURRENTLY' : 'CREATE INDEX';
  const plain = (name: string, table: string, columns: string) => ({
    name,
    table,
    columns,
    ddl: `${create} ${name} ON ${table} (${columns})`,
  });
  const open =
    dialect === 'mysql'
      ? plain('netsvc_radacct_open', 'radacct', 'acctstoptime, acctstarttime, radacctid')
      : {
          name: 'netsvc_radacct_open',
          table: 'radacct',
          columns: 'acctstarttime, radacctid WHERE acctstoptime IS NULL',
          ddl: `${create} netsvc_radacct_open ON radacct (acctstarttime, radacctid) WHERE acctstoptime IS NULL`,
        };
  return [
    // (filter, acctstarttime, radacctid) is the page order itself; acctstoptime after it lets
    // online-sessions check "still open" inside the index, without reading rows.
    plain('netsvc_radacct_user_start', 'radacct', 'username, acctstarttime, radacctid, acctstoptime'),
    plain('netsvc_radacct_mac_start', 'radacct', 'callingstationid, acctstarttime, radacctid, acctstoptime'),
    plain('netsvc_radacct_called_start', 'radacct', 'calledstationid, acctstarttime, radacctid, acctstoptime'),
    plain('netsvc_radacct_nas_start', 'radacct', 'nasipaddress, acctstarttime, radacctid, acctstoptime'),
    plain('netsvc_radacct_ip_start', 'radacct', 'framedipaddress, acctstarttime, radacctid'),
    open,
    plain('netsvc_radpostauth_user', 'radpostauth', 'username, id'),
    plain('netsvc_radpostauth_authdate', 'radpostauth', 'authdate'),
    plain('netsvc_radusergroup_group', 'radusergroup', 'groupname'),
  ];
}
