/**
 * The user-name rule, in one place for the API (on create) and the store
 * (on create and rename, where the stored usertype is known). A `mac` user's
 * name is its MAC as `XX-XX-XX-XX-XX-XX`, from any common notation; any
 * other name is stored exactly as given, so it must already be one
 * FreeRADIUS can match: its safe_characters without the space (the stock
 * queries MIME-escape anything else, and the user would never match its
 * own row), at most NAME_MAX characters. Pure: no database.
 */
import { normaliseMac } from './mac.js';
import { NAME_MAX, RadiusStoreError, type UserType } from './radius-store.js';

/** FreeRADIUS's safe_characters minus the space. */
const USERNAME = /^[A-Za-z0-9@._:/-]+$/;

/** The name to store for a user of `usertype`; throws RadiusStoreError `invalid` (param `username`) when there is none. */
export function usernameFor(usertype: UserType, name: string): string {
  if (usertype === 'mac') {
    const mac = normaliseMac(name);
    if (!mac)
      throw new RadiusStoreError('invalid', `Invalid parameter 'username': '${name}' is not a MAC address.`, {
        param: 'username',
      });
    return mac;
  }
  // Tested on the raw value: trimming here would store something else than was checked, or than was asked for.
  if (!USERNAME.test(name)) {
    throw new RadiusStoreError('invalid', "Invalid parameter 'username': use letters, digits and @ . _ : / - only.", {
      param: 'username',
    });
  }
  if (name.length > NAME_MAX) {
    throw new RadiusStoreError('invalid', `Invalid parameter 'username': must be at most ${NAME_MAX} characters.`, {
      param: 'username',
    });
  }
  return name;
}
