/**
 * The hotspot user's fields and the checks the API makes on them (api/routes/hotspot/users.ts,
 * storage/radius/username.ts), repeated here so a mistake is named next to its field before anything
 * is sent. The API stays the judge: what it still refuses is shown with its own message. Pure.
 */

/** A user as GET /hotspot/users lists it (api.md 2.4). */
export interface UserSummary {
  id: number;
  username: string;
  usertype: 'Username-Password' | 'Auth-Type' | null;
  profile: string | null;
  firstname: string | null;
  lastname: string | null;
  email: string | null;
  mobile: string | null;
  gender: string | null;
  disabled: boolean;
}

/** The detail form of GET /hotspot/users/{id}: every info field, the masked password, the stamps. */
export type UserDetail = UserSummary &
  Record<InfoKey, string | null> & {
    password: string | null;
    createddate: string;
    createdby: string;
    updateddate: string | null;
    updatedby: string | null;
  };

export type UserType = 'user' | 'mac' | 'pin';

/** The optional user fields, their column widths (INFO_FIELD_MAX) and how they are entered. */
export const INFO_FIELDS = [
  { key: 'firstname', label: 'First name', max: 100, main: true },
  { key: 'lastname', label: 'Last name', max: 100, main: true },
  { key: 'email', label: 'Email', max: 254, main: true, type: 'email', autocomplete: 'off' },
  { key: 'mobile', label: 'Mobile', max: 32, main: true, type: 'tel' },
  { key: 'company', label: 'Company', max: 200, main: true },
  { key: 'gender', label: 'Gender', max: 32 },
  { key: 'birthdate', label: 'Birth date', max: 10, type: 'date' },
  { key: 'nationality', label: 'Nationality', max: 64 },
  { key: 'country', label: 'Country', max: 64 },
  { key: 'address', label: 'Address', max: 500 },
  { key: 'zip', label: 'Postcode', max: 16 },
  { key: 'locale', label: 'Locale', max: 35 },
  { key: 'profession', label: 'Profession', max: 128 },
  { key: 'interests', label: 'Interests', max: 500 },
  { key: 'marital_status', label: 'Marital status', max: 32 },
  { key: 'race', label: 'Race', max: 64 },
  { key: 'religion', label: 'Religion', max: 64 },
  { key: 'passport_nric_no', label: 'Passport / NRIC no.', max: 64 },
] as const;

export type InfoKey = (typeof INFO_FIELDS)[number]['key'];

const USERNAME = /^[A-Za-z0-9@._:/-]+$/;
const NAME_MAX = 64;
const PASSWORD_MAX = 128;
const EMAIL = /^[^\s@'"<>()\\,;:]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+$/;
const CONTROL = /[\u0000-\u001f\u007f]/;

/** `XX-XX-XX-XX-XX-XX` for any common notation of a MAC (storage/radius/mac.ts), else undefined. */
export function normaliseMac(input: string): string | undefined {
  const s = input.trim().toLowerCase();
  let hex = s;
  if (/^[0-9a-f]{2}([-:])[0-9a-f]{2}(\1[0-9a-f]{2}){4}$/.test(s)) hex = s.replace(/[-:]/g, '');
  else if (/^[0-9a-f]{4}\.[0-9a-f]{4}\.[0-9a-f]{4}$/.test(s)) hex = s.replace(/\./g, '');
  else if (/^[0-9a-f]{6}-[0-9a-f]{6}$/.test(s)) hex = s.replace('-', '');
  if (!/^[0-9a-f]{12}$/.test(hex)) return undefined;
  return hex.toUpperCase().match(/../g)!.join('-');
}

/** What is wrong with a user name for `usertype`, or undefined. */
export function usernameProblem(usertype: UserType, name: string): string | undefined {
  if (name === '') return 'Enter a user name.';
  if (usertype === 'mac') return normaliseMac(name) ? undefined : `'${name}' is not a MAC address.`;
  if (!USERNAME.test(name)) return 'Use letters, digits and @ . _ : / - only (no spaces).';
  if (name.length > NAME_MAX) return `At most ${NAME_MAX} characters.`;
  return undefined;
}

/**
 * A rename: the API checks it against the stored type, which reads back only as Username-Password
 * (a password user) or Auth-Type (a MAC or a pin user), so an Auth-Type user's name may be either.
 */
export function renameProblem(usertype: UserSummary['usertype'], name: string): string | undefined {
  if (usertype !== 'Auth-Type') return usernameProblem('user', name);
  const asPin = usernameProblem('pin', name);
  return asPin && usernameProblem('mac', name) ? asPin : undefined;
}

/** What is wrong with a password, or undefined. */
export function passwordProblem(password: string): string | undefined {
  if (password === '') return 'Enter a password.';
  if (password.length > PASSWORD_MAX) return `At most ${PASSWORD_MAX} characters (RADIUS User-Password).`;
  if (CONTROL.test(password)) return 'Must not contain control characters.';
  const first = password[0];
  if (password.length >= 2 && (first === '"' || first === "'" || first === '`') && password.endsWith(first)) {
    return 'Must not be wrapped in quotes (FreeRADIUS would strip or expand them).';
  }
  return undefined;
}

/** What is wrong with an info field's value, or undefined; '' is always allowed (no value). */
export function infoProblem(key: InfoKey, value: string, today = new Date()): string | undefined {
  if (value === '') return undefined;
  const max = INFO_FIELDS.find((f) => f.key === key)!.max;
  if (value.length > max) return `At most ${max} characters.`;
  if (CONTROL.test(value)) return 'Must not contain control characters.';
  if (key === 'email' && !EMAIL.test(value)) return `'${value}' is not an email address.`;
  if (key === 'birthdate') {
    const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
    const d = m ? new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]))) : undefined;
    const valid = d && d.toISOString().slice(0, 10) === value && d.getUTCFullYear() >= 1900 && d <= today;
    if (!valid) return 'A past date, YYYY-MM-DD.';
  }
  return undefined;
}

/** Profile names of a `profile` string as the API writes it (`gold, silver`), or none. */
export function profilesOf(profile: string | null | undefined): string[] {
  return (profile ?? '')
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean);
}

/** The label of a read-back usertype. */
export function typeLabel(usertype: UserSummary['usertype']): string {
  return usertype === 'Username-Password' ? 'Password' : usertype === 'Auth-Type' ? 'MAC or PIN' : '—';
}
