/**
 * The administration store: entities, their users, which API areas each may
 * use, and each user's API credentials (secret kept only as an scrypt hash).
 * It mirrors the spec's Admin > General > API screen.
 */

// Its own module so that the CLI knows it without the store's types; re-exported for the store's users.
export { AdminStoreError } from './admin-store-error.js';

/** The three API areas, each with its own auth endpoint and switch. */
export const AREAS = ['netflow', 'logviewer', 'hotspot'] as const;
export type Area = (typeof AREAS)[number];

/** Per-area switches of an entity or a user. */
export type AreaSwitches = Record<Area, boolean>;

/** An entity (tenant/site) as stored. */
export interface EntityRecord {
  name: string;
  areas: AreaSwitches;
  createdAt: string;
}

/** A user of an entity as stored; `apiId` is null until credentials are issued. */
export interface UserRecord {
  entity: string;
  name: string;
  areas: AreaSwitches;
  apiId: string | null;
  credentialVersion: number;
  createdAt: string;
}

/** What the auth endpoint needs to check a credential. */
export interface CredentialRecord {
  entity: string;
  user: string;
  secretHash: string;
  credentialVersion: number;
}

/** What the bearer check needs on every request. */
export interface PrincipalState {
  credentialVersion: number;
  entityAreas: AreaSwitches;
  userAreas: AreaSwitches;
}

/** Reads and changes the administration data. */
export interface AdminStore {
  addEntity(name: string, areas: Partial<AreaSwitches>): EntityRecord;
  listEntities(): EntityRecord[];
  setEntityArea(entity: string, area: Area, enabled: boolean): EntityRecord;
  addUser(entity: string, user: string, areas: Partial<AreaSwitches>): UserRecord;
  listUsers(entity?: string): UserRecord[];
  setUserArea(entity: string, user: string, area: Area, enabled: boolean): UserRecord;
  /** Stores a new credential (replacing any old one) and bumps the version, which revokes old tokens. */
  replaceCredential(entity: string, user: string, apiId: string, secretHash: string): UserRecord;
  findCredential(apiId: string): CredentialRecord | undefined;
  principalState(entity: string, user: string): PrincipalState | undefined;
  /**
   * Asks the running service to lift the failed-login lockout of a client
   * address ('*': of every address): `netsvc admin unlock`. The service keeps
   * its counts in memory and reads this when an address is locked out.
   */
  requestUnlock(address: string): void;
  /** When an unlock of `address` (or of every address) was last asked, ms since epoch; 0 if never. */
  unlockRequestedAt(address: string): number;
  close(): void;
}
