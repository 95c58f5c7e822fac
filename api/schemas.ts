/** OpenAPI schemas shared by every area. */
import { z } from '@hono/zod-openapi';

/** `{status: false, errorMessage}`: every failure (api.md 2.1). */
export const failureSchema = z
  .object({
    status: z.literal(false),
    errorMessage: z.string(),
  })
  .openapi('Failure');

/** Standard failure responses of an authenticated route, for `createRoute`. */
export const authFailures = {
  400: {
    description: 'A parameter is malformed; the message names it',
    content: { 'application/json': { schema: failureSchema } },
  },
  401: { description: 'Token validation failed', content: { 'application/json': { schema: failureSchema } } },
  403: { description: 'Token of another area or entity', content: { 'application/json': { schema: failureSchema } } },
} as const;

/** Spread into `createRoute` of an operation beyond the 3.1.0 contract: marks it `x-netsvc-extension: true` (decisions.md, "Beyond 3.1.0"). */
export const netsvcExtension = { 'x-netsvc-extension': true } as const;
