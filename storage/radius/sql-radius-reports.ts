/** Floor of SqlRadiusStore (see sql-radius-base.ts): reports over radacct and radpostauth, and the quota purchases. */
import { DateTime } from 'luxon';
import { displayMac, macSpellings, normaliseMac } from './mac.js';
import {
  RadiusStoreError,
  type Actor,
  type HistoricalSession,
  type LoginAttempt,
  type LoginAttemptFilter,
  type NewQuotaPurchase,
  type OnlineSession,
  type PageRequest,
  type QuotaPurchase,
  type QuotaPurchaseFilter,
  type SessionFilter,
} from './radius-store.js';
import { formatDuration, formatTraffic, MASKED_PASS } from './report-format.js';
import { checkQuotaPurchase, splitProfiles } from './quota-purchase.js';
import { SqlRadiusAttributes } from './sql-radius-attributes.js';
import { Conditions, num, offsetOf, str, WALL, type Row } from './sql-radius-base.js';

export abstract class SqlRadiusReports extends SqlRadiusAttributes {
  // ---------------------------------------------------------------- reports

  /** Conditions of a session filter, or undefined when nothing can match. */
  private async sessionConditions(filter: SessionFilter, online: boolean): Promise<Conditions | undefined> {
    const c = new Conditions();
    if (online) c.add('acctstoptime IS NULL');
    if (filter.username !== undefined) c.add('username = ?', filter.username);
    if (filter.nas !== undefined) {
      if (!this.ipComparable(filter.nas)) return undefined;
      c.add('nasipaddress = ?', filter.nas);
    }
    if (filter.hotspot !== undefined) {
      const nases = await this.db.query<{ nasname: string }>(`SELECT nasname FROM nas WHERE shortname = ?`, [filter.hotspot]);
      const ips = nases.map((n) => n.nasname).filter((ip) => this.ipComparable(ip));
      if (!ips.length) return undefined;
      c.in('nasipaddress', ips);
    }
    if (filter.macaddress !== undefined) {
      const mac = normaliseMac(filter.macaddress);
      if (!mac) return undefined;
      c.in('callingstationid', macSpellings(mac));
    }
    if (filter.calledstationid !== undefined) {
      const mac = normaliseMac(filter.calledstationid);
      if (!mac) return undefined;
      const spellings = macSpellings(mac);
      // Called-Station-Id is often "MAC:SSID"; match the MAC with or without the SSID suffix.
      const prefixes = spellings.filter((s) => /[-:]/.test(s) && s.length === 17).map((s) => `${s}:%`);
      c.add(
        `(calledstationid IN (${spellings.map(() => '?').join(', ')}) OR ${prefixes.map(() => 'calledstationid LIKE ?').join(' OR ')})`,
        ...spellings,
        ...prefixes,
      );
    }
    if (filter.ipaddress !== undefined) {
      if (!this.ipComparable(filter.ipaddress)) return undefined;
      c.add('framedipaddress = ?', filter.ipaddress);
    }
    if (filter.from !== undefined) c.add('acctstarttime >= ?', this.acctTimeParam(filter.from));
    // Both bounds are inclusive at one-second resolution.
    const end = this.endOfSecond(filter.to);
    if (end !== undefined) c.add('acctstarttime < ?', this.acctTimeParam(end));
    return c;
  }

  private async sessionRows(filter: SessionFilter, page: PageRequest, online: boolean): Promise<Row[]> {
    const c = await this.sessionConditions(filter, online);
    if (!c) return [];
    // Late row lookup: the page's ids come from the index alone (filter column, start time, stop time,
    // primary key), and only those rows are read, instead of every matching row before the sort.
    return this.db.query<Row>(
      `SELECT r.radacctid, r.username, r.nasipaddress, r.callingstationid, r.calledstationid, r.framedipaddress, r.acctstarttime,
              r.acctstoptime, r.acctsessiontime, r.acctinputoctets, r.acctoutputoctets, r.acctterminatecause
       FROM radacct r
       JOIN (SELECT radacctid AS k FROM radacct ${c.where} ORDER BY acctstarttime DESC, radacctid DESC LIMIT ? OFFSET ?) p ON r.radacctid = p.k
       ORDER BY r.acctstarttime DESC, r.radacctid DESC`,
      [...c.params, page.perPage + 1, offsetOf(page)],
    );
  }

  /** NAS IP → `nas.shortname` for the NAS addresses of a page. */
  private async hotspotNames(rows: Row[]): Promise<Map<string, string>> {
    const ips = [...new Set(rows.map((r) => str(r.nasipaddress)).filter(Boolean))];
    const out = new Map<string, string>();
    if (!ips.length) return out;
    const nases = await this.db.query<{ nasname: string; shortname: string | null }>(
      `SELECT nasname, shortname FROM nas WHERE nasname IN (${ips.map(() => '?').join(', ')}) ORDER BY id`,
      ips,
    );
    for (const n of nases) if (!out.has(n.nasname)) out.set(n.nasname, str(n.shortname));
    return out;
  }

  async historicalSessions(filter: SessionFilter, page: PageRequest): Promise<HistoricalSession[]> {
    return this.guarded(async () => {
      const rows = await this.sessionRows(filter, page, false);
      const hotspots = await this.hotspotNames(rows);
      return rows.map((r) => ({
        radacctid: num(r.radacctid),
        hotspot: hotspots.get(str(r.nasipaddress)) ?? '',
        username: str(r.username),
        macaddress: displayMac(str(r.callingstationid)),
        ipaddress: str(r.framedipaddress),
        acctstarttime: this.acctTimeText(r.acctstarttime),
        acctstoptime: this.acctTimeText(r.acctstoptime),
        acctsessiontime: num(r.acctsessiontime),
        calledstationid: displayMac(str(r.calledstationid)),
        acctinputoctets: num(r.acctinputoctets),
        acctoutputoctets: num(r.acctoutputoctets),
        acctterminatecause: str(r.acctterminatecause),
        nas: str(r.nasipaddress),
      }));
    });
  }

  async onlineSessions(filter: SessionFilter, page: PageRequest): Promise<OnlineSession[]> {
    return this.guarded(async () => {
      const { ipaddress: _ignored, ...rest } = filter;
      const rows = await this.sessionRows(rest, page, true);
      const hotspots = await this.hotspotNames(rows);
      const names = new Map<string, string>();
      const usernames = [...new Set(rows.map((r) => str(r.username)))];
      if (usernames.length) {
        const infos = await this.db.query<{ username: string; firstname: string | null; lastname: string | null }>(
          `SELECT username, firstname, lastname FROM netsvc_userinfo WHERE username IN (${usernames.map(() => '?').join(', ')})`,
          usernames,
        );
        for (const i of infos) names.set(this.nameKey(i.username), [str(i.firstname), str(i.lastname)].filter(Boolean).join(' '));
      }
      const now = this.now();
      return rows.map((r) => {
        const started = this.acctTimeMs(r.acctstarttime);
        const elapsed = started === undefined ? num(r.acctsessiontime) : Math.max(num(r.acctsessiontime), (now - started) / 1000);
        return {
          radacctid: num(r.radacctid),
          hotspot: hotspots.get(str(r.nasipaddress)) ?? '',
          username: str(r.username),
          nas: str(r.nasipaddress),
          macaddress: displayMac(str(r.callingstationid)),
          calledstationid: displayMac(str(r.calledstationid)),
          ipaddress: str(r.framedipaddress),
          starttime: this.acctTimeText(r.acctstarttime),
          traffic: formatTraffic(num(r.acctinputoctets) + num(r.acctoutputoctets)),
          name: names.get(this.nameKey(str(r.username))) ?? '',
          totaltime: formatDuration(elapsed),
        };
      });
    });
  }

  async loginAttempts(filter: LoginAttemptFilter, page: PageRequest): Promise<LoginAttempt[]> {
    return this.guarded(async () => {
      const c = new Conditions();
      if (filter.username !== undefined) c.add('username = ?', filter.username);
      if (filter.reply !== undefined) c.add('reply = ?', filter.reply);
      if (filter.from !== undefined) c.add('authdate >= ?', this.authdateParam(filter.from));
      const end = this.endOfSecond(filter.to);
      if (end !== undefined) c.add('authdate < ?', this.authdateParam(end));
      // Newest first by id: FreeRADIUS inserts in arrival order, and the primary key needs no extra index.
      const rows = await this.db.query<Row>(
        `SELECT id, username, reply, authdate FROM radpostauth ${c.where} ORDER BY id DESC LIMIT ? OFFSET ?`,
        [...c.params, page.perPage + 1, offsetOf(page)],
      );
      return rows.map((r) => ({
        id: num(r.id),
        username: str(r.username),
        pass: MASKED_PASS,
        reply: str(r.reply),
        authdate: this.authdateText(r.authdate),
      }));
    });
  }

  async quotaPurchases(filter: QuotaPurchaseFilter, page: PageRequest): Promise<QuotaPurchase[]> {
    return this.guarded(async () => {
      const c = new Conditions();
      if (filter.transaction_time !== undefined) {
        if (/^\d{4}-\d{2}-\d{2}$/.test(filter.transaction_time)) {
          const day = DateTime.fromISO(filter.transaction_time, { zone: this.timeZone });
          c.add('transaction_time >= ? AND transaction_time < ?', day.toFormat(WALL), day.plus({ days: 1 }).toFormat(WALL));
        } else if (/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/.test(filter.transaction_time)) {
          c.add('transaction_time = ?', filter.transaction_time);
        } else return [];
      }
      if (filter.username !== undefined) c.add('username = ?', filter.username);
      if (filter.plan_name !== undefined) c.add('plan_name = ?', filter.plan_name);
      if (filter.user_profiles !== undefined) c.add('user_profiles = ?', filter.user_profiles);
      if (filter.remarks !== undefined)
        c.add(`remarks ${this.ilike} ? ESCAPE '!'`, `%${filter.remarks.replace(/[!%_]/g, '!$&')}%`);
      if (filter.from !== undefined) c.add('transaction_time >= ?', this.wall(filter.from));
      const end = this.endOfSecond(filter.to);
      if (end !== undefined) c.add('transaction_time < ?', this.wall(end));
      const rows = await this.db.query<Row>(
        `SELECT id, transaction_time, username, plan_name, currency, amount, user_profiles, remarks, create_by, create_at
         FROM netsvc_quota_purchase ${c.where} ORDER BY transaction_time DESC, id DESC LIMIT ? OFFSET ?`,
        [...c.params, page.perPage + 1, offsetOf(page)],
      );
      return rows.map((r) => this.purchase(r));
    });
  }

  private purchase(r: Row): QuotaPurchase {
    return {
      id: num(r.id),
      transaction_time: this.dateText(r.transaction_time) ?? '',
      username: str(r.username),
      plan_name: str(r.plan_name),
      currency: str(r.currency),
      amount: Number(str(r.amount) || '0').toFixed(2),
      user_profiles: str(r.user_profiles),
      remarks: str(r.remarks),
      create_by: str(r.create_by),
      create_at: this.dateText(r.create_at) ?? '',
    };
  }

  async recordQuotaPurchase(purchase: NewQuotaPurchase, actor: Actor): Promise<QuotaPurchase> {
    return this.guarded(async () => {
      const p = checkQuotaPurchase(purchase, actor.name, this.timeZone);
      // Like daloRADIUS, which bills only users it knows. A MAC typed in another notation finds the MAC user.
      const mac = normaliseMac(p.username);
      const username =
        (await this.storedUsername(this.db, p.username)) ??
        (mac && mac !== p.username ? await this.storedUsername(this.db, mac) : undefined);
      if (username === undefined) throw new RadiusStoreError('user_not_found', `User '${p.username}' not found.`);
      await this.requireProfiles(this.db, splitProfiles(p.user_profiles ?? ''));
      const createAt = this.wall(this.now());
      // No transaction: a user deleted between the check and the insert keeps its purchase, as history does.
      const id = await this.insertId(
        this.db,
        `INSERT INTO netsvc_quota_purchase (transaction_time, username, plan_name, currency, amount, user_profiles, remarks, create_by, create_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        [
          p.transaction_time,
          username,
          p.plan_name,
          p.currency,
          p.amount,
          p.user_profiles ?? '',
          p.remarks ?? '',
          actor.name,
          createAt,
        ],
      );
      const [row] = await this.db.query<Row>(
        `SELECT id, transaction_time, username, plan_name, currency, amount, user_profiles, remarks, create_by, create_at FROM netsvc_quota_purchase WHERE id = ?`,
        [id],
      );
      return this.purchase(row!);
    });
  }
}
