/**
 * Errors that are the user's to fix, printed by the CLI as one line without a stack, with their
 * exit code. Loaded by cli.ts only when a command fails, so a start that succeeds loads none of them.
 */
import { AdminStoreError } from '../storage/admin/admin-store-error.js';
import { ConfigError } from './config-error.js';
import { DataDirLockedError } from './data-dir-lock.js';
import { DatabaseUrlError } from '../storage/sql/sql-errors.js';
import { DumpError, StatusError } from './commands/command-errors.js';
import { ListenError } from './listen-error.js';
import { ListenerBindError, ListenerConfigError } from '../collector/listen/listener-errors.js';
import { RadiusInstallError } from './commands/radius-install-error.js';
import { RadiusStoreError } from '../storage/radius/radius-store-error.js';
import { SyslogStoreError } from '../storage/syslog/syslog-store-error.js';
import { UsageError } from './commands/context.js';

/** Each comes from a module of its own with no heavy import: a command's work is loaded only when it runs. */
const USER_ERRORS: ReadonlyArray<readonly [abstract new (...args: never[]) => Error, number]> = [
  [ConfigError, 2],
  [UsageError, 2],
  [DatabaseUrlError, 2],
  [ListenError, 2],
  [ListenerBindError, 2],
  [ListenerConfigError, 2],
  [AdminStoreError, 1],
  [StatusError, 1],
  [DumpError, 1],
  [DataDirLockedError, 1],
  [SyslogStoreError, 1],
  [RadiusStoreError, 1],
  [RadiusInstallError, 1],
];

/** The message and exit code of an error that is the user's to fix; undefined for any other. */
export function userMessage(err: unknown): { message: string; code: number } | undefined {
  const match = USER_ERRORS.find(([type]) => err instanceof type);
  return match && { message: (err as Error).message, code: match[1] };
}
