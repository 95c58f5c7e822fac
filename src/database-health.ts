/**
 * The state of every entity's hotspot and logviewer database: checked once at
 * start-up (one warning per database that is not usable, with its cause, while
 * serve starts anyway: a database may come back) and on demand for `GET /health`
 * and `netsvc status`, at most every few seconds.
 */
import { parseDatabaseUrl, type DatabaseTarget } from '../storage/sql/sql-client.js';
import type { StoreHealth } from '../storage/store-health.js';
import type { Logger } from './log.js';

/** One database to check. */
export interface DatabaseCheck {
  entity: string;
  area: 'hotspot' | 'logviewer';
  /** Its URL without the password, for the operator's log. */
  database: string;
  check(): Promise<StoreHealth>;
}

/** One database as last seen; `kind`, which server it is, shown on /health where the URL is not. */
export type DatabaseState = Omit<DatabaseCheck, 'check'> & { kind: DatabaseTarget['dialect'] } & StoreHealth;

const WHAT_FAILS: Record<DatabaseCheck['area'], string> = {
  hotspot: 'hotspot requests for it answer 503',
  logviewer: 'logviewer searches for it answer 503',
};

export class DatabaseHealth {
  private last: { at: number; states: Promise<DatabaseState[]> } | undefined;

  constructor(
    private readonly checks: readonly DatabaseCheck[],
    private readonly opts: { now: () => number; timeoutMs: number; maxAgeMs?: number },
  ) {}

  /** Every database's state, checked anew when the last check is older than `maxAgeMs` (default 5 s). */
  states(): Promise<DatabaseState[]> {
    const t = this.opts.now();
    if (!this.last || t - this.last.at >= (this.opts.maxAgeMs ?? 5000)) this.last = { at: t, states: this.checkAll() };
    return this.last.states;
  }

  private checkAll(): Promise<DatabaseState[]> {
    return Promise.all(
      this.checks.map(async (c) => {
        let timer: NodeJS.Timeout | undefined;
        const timedOut = new Promise<StoreHealth>((resolve) => {
          timer = setTimeout(
            () => resolve({ state: 'unreachable', detail: `no answer within ${this.opts.timeoutMs} ms` }),
            this.opts.timeoutMs,
          );
        });
        const health = await Promise.race([
          c.check().catch((err: unknown): StoreHealth => ({ state: 'unreachable', detail: (err as Error).message })),
          timedOut,
        ]);
        clearTimeout(timer);
        // The kind is the URL's scheme, which the redacted URL keeps.
        const kind = parseDatabaseUrl(c.database).dialect;
        return { entity: c.entity, area: c.area, database: c.database, kind, ...health };
      }),
    );
  }

  /** Checks every database once and logs one warning for each that is not usable, saying what it affects and what to do. */
  async logAtStart(logger: Logger): Promise<void> {
    for (const s of await this.states()) {
      if (s.state === 'ok') continue;
      const fix =
        s.state === 'schema_missing'
          ? "run netsvc db migrate (--create-peer-tables for FreeRADIUS's or rsyslog's tables)"
          : 'check the URL, the server and the credentials';
      logger.warn(
        { entity: s.entity, area: s.area, database: s.database, state: s.state, cause: s.detail },
        `${s.area} database of entity '${s.entity}' is ${s.state === 'unreachable' ? 'unreachable' : 'missing tables'}: ${WHAT_FAILS[s.area]} until it is fixed; ${fix}`,
      );
    }
  }
}
