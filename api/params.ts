/**
 * Query parameters that the logviewer and hotspot areas read the same way:
 * `startTime`/`endTime` (decisions.md: hotspot times are parsed "as in
 * syslog") and `page`/`perPage`. Each area keeps what differs: the words of
 * its descriptions, its default and largest page size, and what it compares
 * the times against.
 */
import { z } from '@hono/zod-openapi';
import { DateTime } from 'luxon';
import { BadRequestError } from './errors.js';

/** A page asked for: `page` from 1, `perPage` already reduced to the area's largest. */
export interface PageParams {
  page: number;
  perPage: number;
}

/** The `page` and `perPage` query parameters, as OpenAPI schemas; `perPage` described in the area's words. */
export function pageParams(perPageDescription: string) {
  return {
    page: z
      .string()
      .regex(/^\d{1,9}$/, 'must be an integer of at least 1')
      .optional()
      .openapi({ param: { name: 'page', in: 'query' }, description: 'Page number, from 1', example: '1' }),
    perPage: z
      .string()
      .regex(/^\d{1,9}$/, 'must be an integer of at least 1')
      .optional()
      .openapi({ param: { name: 'perPage', in: 'query' }, description: perPageDescription, example: '100' }),
  };
}

/**
 * A free-text query parameter that reaches SQL: at most `max` characters and
 * no NUL byte, which PostgreSQL's text cannot hold (it would refuse the whole
 * statement) and no syslog or RADIUS value contains; refused here so every
 * database gives the same 400.
 */
export function textParam(name: string, max: number, description: string, example?: string) {
  return z
    .string()
    .max(max, `must be at most ${max} characters`)
    .refine((s) => !s.includes('\u0000'), 'must not contain a NUL character')
    .optional()
    .openapi({ param: { name, in: 'query' }, description, ...(example === undefined ? {} : { example }) });
}

/**
 * Years a time parameter may name: MariaDB's DATETIME holds 1000 to 9999,
 * PostgreSQL has no year 0, SQLite compares text; inside this range all
 * three read the same instant.
 */
export const MIN_YEAR = 1000;
/** Last year a time parameter may name (see MIN_YEAR). */
export const MAX_YEAR = 9999;

/** 400 naming `name` unless `t` (in its zone, and in UTC where the stores compare instants) lies in MIN_YEAR..MAX_YEAR. */
export function checkYears(name: string, t: DateTime): DateTime {
  const within = (y: number) => y >= MIN_YEAR && y <= MAX_YEAR;
  if (!within(t.year) || !within(t.toUTC().year)) {
    throw new BadRequestError(name, `Invalid parameter '${name}': must lie in the years ${MIN_YEAR} to ${MAX_YEAR}.`);
  }
  return t;
}

/** The `startTime` or `endTime` query parameter, as an OpenAPI schema (the forms `parseTimeParam` reads, at most 40 characters). */
export function timeParam(name: 'startTime' | 'endTime', description: string, example: string) {
  return z
    .string()
    .max(40, 'must be at most 40 characters')
    .optional()
    .openapi({ param: { name, in: 'query' }, description, example });
}

/** The page of a request: 400 naming `page` or `perPage` below 1; a `perPage` above `maxPerPage` is reduced to it. */
export function pageOf(query: { page?: string; perPage?: string }, defaultPerPage: number, maxPerPage: number): PageParams {
  const page = query.page === undefined ? 1 : Number(query.page);
  if (!(page >= 1)) throw new BadRequestError('page', "Invalid parameter 'page': must be an integer of at least 1.");
  const asked = query.perPage === undefined ? defaultPerPage : Number(query.perPage);
  if (!(asked >= 1)) throw new BadRequestError('perPage', "Invalid parameter 'perPage': must be an integer of at least 1.");
  return { page, perPage: Math.min(asked, maxPerPage) };
}

/**
 * The instant a startTime/endTime value names, in `zone`: `YYYY-MM-DD` (midnight) and
 * `YYYY-MM-DD HH:mm[:ss]` are read in `zone`, ISO 8601 with an offset is converted to it.
 * 400 naming the parameter when the value is none of these forms, or names a year outside
 * MIN_YEAR..MAX_YEAR.
 */
export function parseTimeParam(name: string, raw: string, zone: string): DateTime {
  const s = raw.trim();
  let t: DateTime | undefined;
  if (/^\d{4}-\d{2}-\d{2}$/.test(s)) t = DateTime.fromISO(s, { zone });
  else if (/^\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}(:\d{2})?$/.test(s)) t = DateTime.fromISO(s.replace(' ', 'T'), { zone });
  else if (/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}(:?\d{2})?)$/.test(s))
    t = DateTime.fromISO(s).setZone(zone);
  if (!t || !t.isValid) {
    throw new BadRequestError(
      name,
      `Invalid parameter '${name}': '${raw}' is not YYYY-MM-DD, YYYY-MM-DD HH:mm[:ss] or ISO 8601.`,
    );
  }
  return checkYears(name, t);
}
