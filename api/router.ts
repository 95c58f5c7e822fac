/** Router factory every area uses, so request validation fails the same way everywhere. */
import { OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv } from './context.js';
import { BadRequestError } from './errors.js';

interface ValidationIssue {
  path: PropertyKey[];
  message: string;
  code?: string;
}

/** Turns the first validation issue into a message that names the parameter. */
export function describeIssue(issue: ValidationIssue | undefined, target: string): { param: string | undefined; message: string } {
  if (!issue) return { param: undefined, message: `Invalid ${target}.` };
  const param = issue.path.length ? issue.path.map(String).join('.') : undefined;
  if (!param) return { param, message: `Invalid ${target}: ${issue.message}.` };
  const missing = issue.code === 'invalid_type' && /received undefined/.test(issue.message);
  return { param, message: missing ? `Missing required parameter '${param}'.` : `Invalid parameter '${param}': ${issue.message}.` };
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
