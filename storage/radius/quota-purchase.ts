/**
 * The rules a quota purchase meets before it is written to
 * `netsvc_quota_purchase`, in one place: the store applies them to every
 * caller, and `netsvc quota add` applies them first so a typo is a usage
 * error that names the option. Pure: no database, no clock.
 */
import { DateTime } from 'luxon';
import { NAME_MAX, RadiusStoreError, type NewQuotaPurchase } from './radius-store.js';

/** Longest value of each text column of `netsvc_quota_purchase`, in characters. */
export const QUOTA_FIELD_MAX = {
  username: NAME_MAX,
  plan_name: 128,
  currency: 8,
  user_profiles: 500,
  remarks: 1000,
  create_by: 128,
} as const;

/** A non-negative decimal with at most two places and at most 12 integer digits: the column is decimal(14,2). */
export const AMOUNT = /^\d{1,12}(\.\d{1,2})?$/;

/** ISO 4217 alphabetic code, e.g. `EUR`. */
const CURRENCY = /^[A-Z]{3}$/;

const WALL = 'yyyy-LL-dd HH:mm:ss';
// Control characters would break the one-line-per-row CLI output and CSV exports of the report.
const CONTROL = /[\u0000-\u001f\u007f]/;

const length = (s: string): number => Array.from(s).length;

/** `5` → `5.00`, `007.5` → `7.50`: the text every backend prints for the same decimal(14,2) value. */
export function normaliseAmount(amount: string): string {
  const [int = '0', frac = ''] = amount.split('.');
  return `${BigInt(int).toString()}.${frac.padEnd(2, '0')}`;
}

/** Profile names of a comma-separated list, trimmed, without empties or repeats, in the order given. */
export function splitProfiles(list: string): string[] {
  const out: string[] = [];
  for (const p of list.split(',').map((s) => s.trim())) if (p && !out.includes(p)) out.push(p);
  return out;
}

function invalid(field: string, message: string): never {
  throw new RadiusStoreError('invalid', message, { param: field });
}

function text(field: keyof typeof QUOTA_FIELD_MAX, value: string, required: boolean): void {
  if (required && !value.trim()) invalid(field, `${field} is required.`);
  if (length(value) > QUOTA_FIELD_MAX[field]) invalid(field, `${field} is longer than ${QUOTA_FIELD_MAX[field]} characters.`);
  if (CONTROL.test(value)) invalid(field, `${field} contains a control character.`);
}

/**
 * Checks a purchase and answers it normalised (amount with two places,
 * currency in capitals, profiles joined with `, ` as everywhere in the
 * hotspot area). Throws RadiusStoreError `invalid` naming the field.
 * Whether the user and the profiles exist is the store's part.
 */
export function checkQuotaPurchase(p: NewQuotaPurchase, createBy: string, timeZone: string): NewQuotaPurchase {
  text('username', p.username, true);
  text('plan_name', p.plan_name, true);
  text('remarks', p.remarks ?? '', false);
  text('create_by', createBy, true);
  const currency = p.currency.toUpperCase();
  if (!CURRENCY.test(currency))
    invalid('currency', `currency '${p.currency}' is not an ISO 4217 code of three letters (EUR, USD, …).`);
  if (!AMOUNT.test(p.amount))
    invalid('amount', `amount '${p.amount}' is not a decimal >= 0 with at most two places (5, 5.5, 20.50).`);
  if (
    !/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/.test(p.transaction_time) ||
    !DateTime.fromFormat(p.transaction_time, WALL, { zone: timeZone }).isValid
  ) {
    invalid('transaction_time', `transaction_time '${p.transaction_time}' is not a time YYYY-MM-DD HH:MM:SS.`);
  }
  const profiles = splitProfiles(p.user_profiles ?? '').join(', ');
  text('user_profiles', profiles, false);
  return { ...p, currency, amount: normaliseAmount(p.amount), user_profiles: profiles, remarks: p.remarks ?? '' };
}
