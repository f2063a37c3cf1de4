import { expect, test } from 'bun:test';
import { Elysia } from 'elysia';
import { serve } from '../../src/http/serve';
import { createLogger } from '../../src/log';

test('an error that escapes the app (here its own error handler failing) is a 500 problem+json, logged, never Bun\'s developer page', async () => {
  const lines: string[] = [];
  const app = new Elysia()
    .onError(() => {
      throw new Error('the error handler failed too');
    })
    .get('/', () => {
      throw new Error('the handler failed');
    });
  const server = serve(app, { port: 0, hostname: '127.0.0.1', maxRequestBodySize: 1024, idleTimeoutSeconds: 10, gate: true, log: createLogger('error', (l) => lines.push(l)) });
  try {
    const res = await fetch(`http://127.0.0.1:${server.port}/`);
    expect(res.status).toBe(500);
    expect(res.headers.get('content-type')).toBe('application/problem+json');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(await res.json()).toEqual({ type: 'about:blank', title: 'Internal Server Error', status: 500, detail: 'the server failed to handle the request; it has been logged' });
    expect(lines.map((l) => JSON.parse(l)).map((e) => [e.level, e.msg, e.err?.message])).toEqual([['error', 'unhandled error', 'the error handler failed too']]);
  } finally {
    await server.stop(true);
  }
});
