/** Router factory every area uses, so request validation fails the same way everywhere. */
import { OpenAPIHono, z } from '@hono/zod-openapi';
import type { AppEnv } from './context.js';
import { BadRequestError } from './errors.js';

/** Message zod gives a value that is absent once `useRequiredMessages` ran, so a missing parameter is told apart without parsing zod's wording. */
export const REQUIRED = 'is required';

/**
 * Has zod report an absent value as `REQUIRED`, which routers turn into "Missing required
 * parameter". The setting is zod's, process-wide: it is made once at start-up, before the
 * routes are built (startService in src/main.ts; tests that build routers call it themselves),
 * rather than as a side effect of importing this module, which made other schemas' messages
 * depend on what had been imported before. The configuration loader words its messages alike
 * either way (src/config.ts).
 */
export function useRequiredMessages(): void {
  z.config({ customError: (issue) => (issue.input === undefined ? REQUIRED : undefined) });
}

interface ValidationIssue {
  path: PropertyKey[];
  message: string;
  code?: string;
}

/** Turns the first validation issue into a message that names the parameter. */
export function describeIssue(
  issue: ValidationIssue | undefined,
  target: string,
): { param: string | undefined; message: string } {
  if (!issue) return { param: undefined, message: `Invalid ${target}.` };
  const param = issue.path.length ? issue.path.map(String).join('.') : undefined;
  if (!param) return { param, message: `Invalid ${target}: ${issue.message}.` };
  const missing = issue.message === REQUIRED;
  return {
    param,
    message: missing ? `Missing required parameter '${param}'.` : `Invalid parameter '${param}': ${issue.message}.`,
  };
}

/** A router whose schema failures become 400s naming the parameter. */
export function createRouter(): OpenAPIHono<AppEnv> {
  return new OpenAPIHono<AppEnv>({
    defaultHook: (result) => {
      if (!result.success) {
        const { param, message } = describeIssue(result.error.issues[0], result.target === 'json' ? 'body' : 'parameters');
        throw new BadRequestError(param, message);
      }
    },
  });
}
