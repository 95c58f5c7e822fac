/**
 * The logviewer's state as it sits in the URL: the API's own parameter names (`host`, `tag`, `priority`,
 * `message`, `startTime`, `endTime`, `page`, `perPage`) plus `live=1` for the tail, so a view is a
 * bookmark and the back button undoes a search.
 */
import type { Query } from '../../api.js';

/** One row of GET /logviewer/search and /latest (api.md 2.3); times `YYYY-MM-DD HH:MM:SS` in the service zone. */
export interface SyslogRecord {
  ID: number;
  DeviceReportedTime: string | null;
  ReceivedAt: string | null;
  FromHost: string;
  SysLogTag: string;
  processid: string;
  Message: string;
  Priority: number | null;
}

/** Severity names by value (RFC 5424 6.2.1), as the API documents `priority`. */
export const SEVERITIES = ['Emergency', 'Alert', 'Critical', 'Error', 'Warning', 'Notice', 'Informational', 'Debug'];

/** The name of a severity value, or `Unknown` for rows without one. */
export function severityName(p: number | null): string {
  return (p !== null && SEVERITIES[p]) || 'Unknown';
}

export const PER_PAGE_CHOICES = ['50', '100', '200', '500'];
export const DEFAULT_PER_PAGE = '100';

/** The filters a user types; strings as typed (empty = no filter). */
export interface Filters {
  host: string;
  tag: string;
  priority: string;
  message: string;
  startTime: string;
  endTime: string;
}

export const FILTER_NAMES = ['host', 'tag', 'priority', 'message', 'startTime', 'endTime'] as const;

/** Everything the page shows, read from the URL. */
export interface LogQuery extends Filters {
  page: string;
  perPage: string;
  live: boolean;
}

/** The URL's query as the page's state; values are passed on as they are (the API judges them). */
export function queryOf(params: URLSearchParams): LogQuery {
  const get = (k: string) => params.get(k) ?? '';
  return {
    host: get('host'),
    tag: get('tag'),
    priority: get('priority'),
    message: get('message'),
    startTime: get('startTime'),
    endTime: get('endTime'),
    page: get('page'),
    perPage: get('perPage'),
    live: params.get('live') === '1',
  };
}

/** The API query of a search page; `latest` (the tail) takes no time range, so `withTime` false drops it. */
export function apiQuery(q: Filters, withTime: boolean): Query {
  return {
    host: q.host,
    tag: q.tag,
    priority: q.priority,
    message: q.message,
    startTime: withTime ? q.startTime.trim() : undefined,
    endTime: withTime ? q.endTime.trim() : undefined,
  };
}

/** A stable key of what the tail follows: it restarts when this changes. */
export function tailKey(q: Filters): string {
  return JSON.stringify([q.host, q.tag, q.priority, q.message]);
}

/** Newest-first order of the API (ReceivedAt desc, then ID desc): true when `a` comes before `b`. */
export function isNewer(a: SyslogRecord, b: SyslogRecord): boolean {
  const ra = a.ReceivedAt ?? '';
  const rb = b.ReceivedAt ?? '';
  return ra !== rb ? ra > rb : a.ID > b.ID;
}
