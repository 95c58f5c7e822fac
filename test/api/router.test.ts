import { createRoute, z } from '@hono/zod-openapi';
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../api/errors.js';
import { createRouter, useRequiredMessages } from '../../api/router.js';

// What serve sets at start-up (src/main.ts): a missing parameter is named as missing.
useRequiredMessages();

function app() {
  const r = createRouter();
  const route = createRoute({
    method: 'post',
    path: '/things',
    request: {
      body: { content: { 'application/json': { schema: z.object({ kind: z.enum(['a', 'b']), n: z.number().int() }) } } },
    },
    responses: { 200: { description: 'ok' } },
  });
  r.openapi(route, (c) => c.json({ ok: true }, 200));
  r.onError((err, c) => c.json({ message: err.message, status: err instanceof ApiError ? err.status : 500 }, 400));
  return r;
}

async function post(body: unknown) {
  const res = await app().request('/things', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return (await res.json()) as { message: string };
}

describe('request validation', () => {
  it('says a parameter is missing, whatever its type', async () => {
    expect((await post({ n: 1 })).message).toBe("Missing required parameter 'kind'.");
    expect((await post({ kind: 'a' })).message).toBe("Missing required parameter 'n'.");
  });

  it('names the parameter and the rule when a value is wrong', async () => {
    expect((await post({ kind: 'c', n: 1 })).message).toMatch(/^Invalid parameter 'kind': .*"a"\|"b"/);
    expect((await post({ kind: 'a', n: 1.5 })).message).toMatch(/^Invalid parameter 'n': /);
  });
});
