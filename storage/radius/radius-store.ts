/**
 * The hotspot area's view of a FreeRADIUS SQL database: users, profiles
 * (FreeRADIUS groups), per-user attributes and the accounting / post-auth
 * reports, over the tables FreeRADIUS 3.2 ships (never altered) plus
 * netsvc's own `netsvc_*` tables. One interface per concern, joined in
 * `RadiusStore`; the three SQL dialects implement it (`*-radius-store.ts`).
 *
 * How netsvc writes, so a real FreeRADIUS acts on it (docs/hotspot.md):
 *  - `user` users: radcheck `Cleartext-Password :=`; `mac`/`pin` users:
 *    radcheck `Auth-Type := Accept` (daloRADIUS does the same).
 *  - disabled: membership (priority 0) of the reject group, whose
 *    radgroupcheck holds `Auth-Type := Reject`.
 *  - a user's own attributes: `:=` rows (`+=` when the attribute may repeat).
 *  - a profile's attributes: reply `=` (adds only when the user has none),
 *    check `+=` (FreeRADIUS reads the first instance, the user's), plus
 *    `Fall-Through = Yes` so every attached profile applies, in priority order.
 */
import type { StoreHealth } from '../store-health.js';

// Its own module so that the CLI knows it without the stores; re-exported for the stores' users.
export { RadiusStoreError, type RadiusStoreErrorCode } from './radius-store-error.js';

/** How a user is created: with a password, by MAC address, or by PIN. */
export type UserType = 'user' | 'mac' | 'pin';

/** How a user authenticates as read back (api.md 2.4). */
export type AuthKind = 'Username-Password' | 'Auth-Type';

/** The optional user fields of api.md 2.4, stored in `netsvc_userinfo`. */
export const INFO_FIELDS = [
  'firstname',
  'lastname',
  'email',
  'mobile',
  'gender',
  'race',
  'religion',
  'nationality',
  'profession',
  'interests',
  'marital_status',
  'birthdate',
  'locale',
  'passport_nric_no',
  'company',
  'address',
  'country',
  'zip',
] as const;
/** One of the optional user fields. */
export type InfoField = (typeof INFO_FIELDS)[number];

/** Longest value of each info field (column width of `netsvc_userinfo`). */
export const INFO_FIELD_MAX: Record<InfoField, number> = {
  firstname: 100,
  lastname: 100,
  email: 254,
  mobile: 32,
  gender: 32,
  race: 64,
  religion: 64,
  nationality: 64,
  profession: 128,
  interests: 500,
  marital_status: 32,
  birthdate: 10,
  locale: 35,
  passport_nric_no: 64,
  company: 200,
  address: 500,
  country: 64,
  zip: 16,
};

/** Longest user and profile name: radcheck.username / radusergroup.groupname are varchar(64) on MySQL. */
export const NAME_MAX = 64;
/**
 * Largest user id any backend can hold: `netsvc_userinfo.id` is a `serial`
 * (int4) on PostgreSQL, the narrowest of the three; a larger id names no user.
 */
export const MAX_USER_ID = 2_147_483_647;

/** True when `id` can be a stored user's id (1 to MAX_USER_ID). */
export function isUserId(id: number): boolean {
  return Number.isInteger(id) && id >= 1 && id <= MAX_USER_ID;
}

/** Values of the info fields; `null` clears one. */
export type UserInfo = Partial<Record<InfoField, string | null>>;

/** A new user, already validated (username normalised for `mac`). */
export interface NewUser extends UserInfo {
  username: string;
  usertype: UserType;
  /** Required for `user`, refused for `mac`/`pin` by the API. */
  password?: string;
  disabled?: boolean;
  /** Profile names in priority order. */
  profiles?: string[];
}

/** Changes to a user; absent fields stay as they are. */
export interface UserChanges extends UserInfo {
  username?: string;
  password?: string;
  disabled?: boolean;
  /** Replaces the whole profile set (priority = order). */
  profiles?: string[];
}

/** Who makes a change: the API user's name from the token, or `cli`. */
export interface Actor {
  name: string;
}

/** List form of a user (api.md 2.4). */
export interface UserSummary {
  id: number;
  username: string;
  usertype: AuthKind | null;
  /** Profiles joined with `, `, or null without any. */
  profile: string | null;
  firstname: string | null;
  lastname: string | null;
  email: string | null;
  mobile: string | null;
  gender: string | null;
  disabled: boolean;
}

/** Detail form of a user: every info field, the audit stamps and the masked password. */
export interface UserDetail extends UserSummary, Required<UserInfo> {
  /** First character and seven asterisks; null for users without a password. */
  password: string | null;
  createddate: string;
  createdby: string;
  updateddate: string | null;
  updatedby: string | null;
}

/** What create answers (api.md 4.3, 1). */
export interface UserStamp {
  id: string;
  username: string;
  createdby: string;
  createddate: string;
  updatedby: string | null;
  updateddate: string | null;
}

/** Result of attaching or detaching a profile. */
export interface ProfileMembership {
  username: string;
  /** The user's profiles afterwards, joined with `, ` ('' when none). */
  profile: string;
  /** False when detach found nothing to remove. */
  changed: boolean;
}

/** Paging as the API takes it: `page` from 1; stores fetch `perPage + 1` rows. */
export interface PageRequest {
  page: number;
  perPage: number;
}

/** Profile record (api.md 2.4). */
export interface ProfileRecord {
  groupname: string;
  description: string;
}

/** Profile-user record (api.md 2.4): every field a string. */
export interface ProfileUserRecord {
  id: string;
  username: string;
  firstname: string;
  lastname: string;
  profileName: string;
  priority: string;
}

/** One row of radcheck/radreply or radgroupcheck/radgroupreply. */
export interface AttributeRow {
  id: number;
  table: 'check' | 'reply';
  attribute: string;
  op: string;
  value: string;
}

/** A profile as the CLI describes it. */
export interface ProfileDescription extends ProfileRecord {
  attributes: AttributeRow[];
  members: number;
}

/** One attribute write; `value` is already in FreeRADIUS's unit. */
export interface AttributeWrite {
  attribute: string;
  table: 'check' | 'reply';
  op: string;
  value: string;
  /** Several rows of the attribute may coexist (attach adds instead of replacing). */
  multiple: boolean;
}

/** What an attribute write did. */
export type AttributeAction = 'added' | 'updated' | 'unchanged';

/** Filters of historical-sessions and online-sessions; times are epoch ms, both inclusive. */
export interface SessionFilter {
  username?: string;
  /** NAS identifier: the `nas.shortname` of the session's NAS IP. */
  hotspot?: string;
  /** NAS IP address. */
  nas?: string;
  /** Client MAC, normalised `XX-XX-XX-XX-XX-XX`. */
  macaddress?: string;
  /** Device (called station) MAC, normalised. */
  calledstationid?: string;
  /** User IP (historical only). */
  ipaddress?: string;
  from?: number;
  to?: number;
}

/** Historical session record (api.md 2.4). */
export interface HistoricalSession {
  radacctid: number;
  hotspot: string;
  username: string;
  macaddress: string;
  ipaddress: string;
  acctstarttime: string | null;
  acctstoptime: string | null;
  acctsessiontime: number;
  calledstationid: string;
  acctinputoctets: number;
  acctoutputoctets: number;
  acctterminatecause: string;
  nas: string;
}

/** Online session record (api.md 2.4). */
export interface OnlineSession {
  radacctid: number;
  hotspot: string;
  username: string;
  nas: string;
  macaddress: string;
  calledstationid: string;
  ipaddress: string;
  starttime: string | null;
  traffic: string;
  name: string;
  totaltime: string;
}

/** Filters of login-attempts. */
export interface LoginAttemptFilter {
  username?: string;
  reply?: string;
  from?: number;
  to?: number;
}

/** Login attempt record; `pass` is always masked. */
export interface LoginAttempt {
  id: number;
  username: string;
  pass: string;
  reply: string;
  authdate: string;
}

/** Filters of quota-purchase-report; `remarks` is a substring, the rest exact. */
export interface QuotaPurchaseFilter {
  /** `YYYY-MM-DD` (that day) or `YYYY-MM-DD HH:MM:SS` (exact). */
  transaction_time?: string;
  username?: string;
  plan_name?: string;
  user_profiles?: string;
  remarks?: string;
  from?: number;
  to?: number;
}

/** Quota purchase record (api.md 2.4). */
export interface QuotaPurchase {
  id: number;
  transaction_time: string;
  username: string;
  plan_name: string;
  currency: string;
  amount: string;
  user_profiles: string;
  remarks: string;
  create_by: string;
  create_at: string;
}

/** A purchase to record (`netsvc quota add`, a billing script); the rules are in quota-purchase.ts. */
export interface NewQuotaPurchase {
  /** Wall clock `YYYY-MM-DD HH:MM:SS` in the store's zone. */
  transaction_time: string;
  /** An existing user: a row in netsvc_userinfo, radcheck, radreply or radusergroup (daloRADIUS bills only known users). */
  username: string;
  plan_name: string;
  /** ISO 4217 code, e.g. `EUR`. */
  currency: string;
  /** Decimal >= 0 with at most two places, e.g. `10.50`. */
  amount: string;
  /** Existing profiles the purchase grants, comma-separated; stored joined with `, `. Nothing is attached. */
  user_profiles?: string;
  remarks?: string;
}

/** What `migrate()` did. */
export interface MigrateReport {
  /** FreeRADIUS tables were missing and created from its schema.sql. */
  createdFreeradiusTables: boolean;
  /** netsvc tables created by this run. */
  createdTables: string[];
}

/** An index `createIndexes()` made or found. */
export interface IndexReport {
  name: string;
  table: string;
  columns: string;
  created: boolean;
}

/** Local users: create, read, change, delete, profiles. */
export interface RadiusUsers {
  /** Newest first; `perPage + 1` rows so the caller can tell a next page exists. */
  listUsers(filter: { id?: number; username?: string }, page: PageRequest): Promise<UserSummary[]>;
  getUser(id: number): Promise<UserDetail | undefined>;
  createUser(user: NewUser, actor: Actor): Promise<UserStamp>;
  updateUser(id: number, changes: UserChanges, actor: Actor): Promise<UserDetail>;
  /** Removes radcheck, radreply, radusergroup and info rows; accounting and login history stay. */
  deleteUser(id: number): Promise<{ id: string; username: string }>;
  attachProfile(id: number, profile: string, actor: Actor): Promise<ProfileMembership>;
  detachProfile(id: number, profile: string, actor: Actor): Promise<ProfileMembership>;
}

/** Profiles (FreeRADIUS groups) and their attributes. */
export interface RadiusProfiles {
  /** By name; the disabled group is never listed. */
  listProfiles(page: PageRequest): Promise<ProfileRecord[]>;
  profileUsers(profile: string, page: PageRequest): Promise<ProfileUserRecord[]>;
  /** Creates the profile (description row + `Fall-Through = Yes`), or updates its description; `created` tells which. */
  saveProfile(name: string, description: string | undefined): Promise<ProfileRecord & { created: boolean }>;
  describeProfile(name: string): Promise<ProfileDescription | undefined>;
  /** Sets one attribute of a profile (replacing its rows unless `multiple`). */
  setProfileAttribute(name: string, write: AttributeWrite): Promise<AttributeAction>;
  /** Removes every row of the attribute from the profile; answers how many. */
  unsetProfileAttribute(name: string, attribute: string, table: 'check' | 'reply'): Promise<number>;
  /**
   * Removes the profile's radgroupcheck, radgroupreply and netsvc_profile rows in one transaction and answers
   * how many rows went. Refuses an unknown profile (`profile_not_found`) and one users are attached to (`profile_in_use`).
   */
  deleteProfile(name: string): Promise<{ groupname: string; rows: number }>;
}

/** Per-user attributes (radcheck/radreply rows other than the authentication ones). */
export interface RadiusUserAccess {
  userAttributes(id: number): Promise<{ id: string; username: string; attributes: AttributeRow[] }>;
  /** Writes every item in one transaction; answers one action per item, in order. */
  setUserAttributes(id: number, writes: AttributeWrite[], actor: Actor): Promise<AttributeAction[]>;
  /** Removes the attributes in one transaction; answers rows removed per item. */
  unsetUserAttributes(id: number, items: Array<{ attribute: string; table: 'check' | 'reply' }>, actor: Actor): Promise<number[]>;
}

/** Reports over radacct, radpostauth and the quota purchases; purchases are the one thing recorded here. */
export interface RadiusReports {
  historicalSessions(filter: SessionFilter, page: PageRequest): Promise<HistoricalSession[]>;
  onlineSessions(filter: SessionFilter, page: PageRequest): Promise<OnlineSession[]>;
  loginAttempts(filter: LoginAttemptFilter, page: PageRequest): Promise<LoginAttempt[]>;
  quotaPurchases(filter: QuotaPurchaseFilter, page: PageRequest): Promise<QuotaPurchase[]>;
  /**
   * Writes one purchase (create_by = `actor.name`, create_at = now) and answers it as the report shows it.
   * Refuses: malformed fields (`invalid`), an unknown user (`user_not_found`), an unknown profile (`profile_not_found`).
   */
  recordQuotaPurchase(purchase: NewQuotaPurchase, actor: Actor): Promise<QuotaPurchase>;
}

/** Everything the hotspot area needs from one entity's RADIUS database. */
export interface RadiusStore extends RadiusUsers, RadiusProfiles, RadiusUserAccess, RadiusReports {
  /** Creates netsvc's own tables (and, when asked and missing, FreeRADIUS's from its schema.sql). */
  migrate(options?: { createFreeradiusTables?: boolean }): Promise<MigrateReport>;
  /** Creates the extra report indexes of `netsvc db index radius`. */
  createIndexes(): Promise<IndexReport[]>;
  /** Whether the database answers and has every table netsvc reads and writes. */
  health(): Promise<StoreHealth>;
  close(): Promise<void>;
}
