import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { join } from 'node:path';
import { buildConfig, readEnvFile } from '../../src/config';
import { PROJECT_ROOT } from '../helpers/project-root';
import { startTestService, type TestService } from '../helpers/test-service';

const CONSOLE = 'https://console.example.com';
const PAGE = 'https://shop.example.net';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({ CORS_ORIGINS: `${CONSOLE}, http://localhost:3000` });
});
afterAll(() => svc.stop());

const COLLECTION_PATHS = ['/events', '/v1/batch', '/v1/b', ...['track', 'identify', 'page', 'screen', 'group', 'alias'].flatMap((c) => [`/v1/${c}`, `/v1/${c[0]}`])];

function preflight(path: string, origin: string, method = 'POST', headers = 'authorization, content-type') {
  return fetch(svc.url + path, {
    method: 'OPTIONS',
    headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': headers },
  });
}

const corsHeaders = (res: Response) => ({
  origin: res.headers.get('access-control-allow-origin'),
  expose: res.headers.get('access-control-expose-headers'),
  vary: res.headers.get('vary'),
});

describe('CORS on the collection routes', () => {
  test('a preflight from any origin: 204 with the origin echoed, POST, the headers asked for and a day of Max-Age', async () => {
    for (const path of COLLECTION_PATHS) {
      const res = await preflight(path, PAGE, 'POST', 'authorization,content-type,anonymousid,sentat,rsa-request-id');
      expect(res.status, path).toBe(204);
      expect(res.headers.get('access-control-allow-origin')).toBe(PAGE);
      expect(res.headers.get('access-control-allow-methods')).toBe('POST');
      expect(res.headers.get('access-control-allow-headers')).toBe('Authorization, Content-Type, Content-Encoding, authorization,content-type,anonymousid,sentat,rsa-request-id');
      expect(res.headers.get('access-control-max-age')).toBe('86400');
      expect(res.headers.get('vary')).toBe('Origin, Access-Control-Request-Method, Access-Control-Request-Headers');
      expect(res.headers.get('access-control-allow-origin')).not.toBe('*');
    }
  });

  test('a preflight that asks for no headers (or a malformed list) gets the three the SDKs need', async () => {
    for (const asked of ['', 'bad header, x']) {
      const res = await preflight('/v1/t', PAGE, 'POST', asked);
      expect(res.headers.get('access-control-allow-headers')).toBe('Authorization, Content-Type, Content-Encoding');
    }
  });

  test('every answer carries the headers: 200/201, 400, 401, 403, 413 and 415', async () => {
    const send = (path: string, body: string, headers: Record<string, string>) =>
      fetch(svc.url + path, { method: 'POST', headers: { origin: PAGE, 'content-type': 'text/plain', ...headers }, body });
    const key = { authorization: `Bearer ${svc.publicKey}` };
    const answers = [
      [201, await send('/events', JSON.stringify({ events: [{ type: 'page' }] }), key)],
      [200, await send('/v1/t', JSON.stringify({ userId: 'u', event: 'e' }), key)],
      [400, await send('/events', '{"events": [', key)],
      [401, await send('/v1/track', '{}', {})],
      [403, await send('/events', JSON.stringify({ events: [{ type: 'page' }], writeKey: svc.privateKey }), {})],
      [413, await send('/events', 'x'.repeat(svc.config.maxBodyBytes + 1), key)],
      [415, await send('/events', '{}', { ...key, 'content-encoding': 'zstd' })],
    ] as const;
    for (const [status, res] of answers) {
      expect(res.status).toBe(status);
      expect(corsHeaders(res)).toEqual({ origin: PAGE, expose: 'Retry-After, RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, RateLimit-Policy, X-Request-Id', vary: 'Origin' });
    }
  });

  test('429 (Segment routes) and 503 (POST /events) carry them too, so an SDK can read Retry-After', async () => {
    const small = await startTestService({ INGEST_QUEUE_MAX_EVENTS: '1' });
    try {
      const headers = { origin: PAGE, 'content-type': 'application/json', authorization: `Bearer ${small.publicKey}` };
      const segment = await fetch(`${small.url}/v1/batch`, { method: 'POST', headers, body: JSON.stringify({ batch: [1, 2].map(() => ({ type: 'track', userId: 'u', event: 'x' })) }) });
      const events = await fetch(`${small.url}/events`, { method: 'POST', headers, body: JSON.stringify({ events: [{ type: 'page' }, { type: 'page' }] }) });
      for (const [res, status] of [[segment, 429], [events, 503]] as const) {
        expect(res.status).toBe(status);
        expect(res.headers.get('retry-after')).toBe('1');
        expect(corsHeaders(res)).toEqual({ origin: PAGE, expose: 'Retry-After, RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, RateLimit-Policy, X-Request-Id', vary: 'Origin' });
      }
    } finally {
      await small.stop();
    }
  });

  test('a request without Origin gets no CORS headers', async () => {
    const res = await svc.request('POST', '/events', { key: svc.publicKey, body: { events: [{ type: 'page' }] } });
    expect(res.status).toBe(201);
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
  });
});

describe('the private routes stay private', () => {
  const PRIVATE: Array<[string, string]> = [
    ['GET', '/events'],
    ['POST', '/queries'],
    ['GET', '/workspaces'],
    ['GET', '/webhooks'],
    ['GET', '/metrics'],
  ];

  test('a page of an unlisted origin: no CORS headers on the answer, and its preflight fails', async () => {
    for (const [method, path] of PRIVATE) {
      const res = await fetch(svc.url + path, { method, headers: { origin: PAGE, authorization: `Bearer ${svc.privateKey}`, 'content-type': 'application/json' }, body: method === 'POST' ? '{"queries":["SELECT 1"]}' : undefined });
      expect(res.status, `${method} ${path}`).toBe(200);
      expect(res.headers.get('access-control-allow-origin'), `${method} ${path}`).toBeNull();
      const pre = await preflight(path, PAGE, method);
      expect(pre.status, `OPTIONS ${path}`).toBe(404);
      expect(pre.headers.get('access-control-allow-origin')).toBeNull();
    }
  });

  test('an origin listed in CORS_ORIGINS (a console hosted elsewhere) may call them, echoed, never *', async () => {
    for (const origin of [CONSOLE, 'http://localhost:3000']) {
      for (const [method, path] of PRIVATE) {
        const pre = await preflight(path, origin, method);
        expect(pre.status, `OPTIONS ${path}`).toBe(204);
        expect(pre.headers.get('access-control-allow-origin')).toBe(origin);
        expect(pre.headers.get('access-control-allow-methods')).toBe('GET, POST, PUT, DELETE');
        const res = await fetch(svc.url + path, { method, headers: { origin, authorization: `Bearer ${svc.privateKey}` }, body: method === 'POST' ? '{"queries":["SELECT 1"]}' : undefined });
        expect(corsHeaders(res)).toEqual({ origin, expose: 'Retry-After, RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, RateLimit-Policy, X-Request-Id', vary: 'Origin' });
      }
    }
  });

  test('a listed origin may send X-Workspace-Id (an admin key acting on a workspace); an unlisted one may not', async () => {
    const pre = await preflight('/events', CONSOLE, 'GET', '');
    expect(pre.status).toBe(204);
    expect(pre.headers.get('access-control-allow-headers')).toBe('Authorization, Content-Type, Content-Encoding, X-Workspace-Id');
    const defaultId = ((await (await svc.request('GET', '/whoami', { key: svc.privateKey })).json()) as { workspace: { workspaceId: string } }).workspace.workspaceId;
    const res = await fetch(`${svc.url}/events?limit=1`, { headers: { origin: CONSOLE, authorization: `Bearer ${svc.privateKey}`, 'x-workspace-id': defaultId } });
    expect(res.status).toBe(200);
    expect(corsHeaders(res).origin).toBe(CONSOLE);
    expect((await preflight('/events', PAGE, 'GET', 'authorization, x-workspace-id')).status).toBe(404);
  });

  test('a preflight for GET /events from a page: refused, though POST /events is open', async () => {
    const res = await preflight('/events', PAGE, 'GET');
    expect(res.status).toBe(404);
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
  });

  test('CORS_ORIGINS must list origins: * or a URL with a path stops the start, naming the variable', () => {
    const defaults = readEnvFile(join(PROJECT_ROOT, '.env.defaults'));
    expect(() => buildConfig(defaults, { CORS_ORIGINS: '*' })).toThrow(/CORS_ORIGINS: must list origins; \* is refused/);
    expect(() => buildConfig(defaults, { CORS_ORIGINS: 'https://a.example/admin' })).toThrow(/CORS_ORIGINS: each item must be an origin/);
    expect(buildConfig(defaults, { CORS_ORIGINS: ' https://A.example:443 ,http://b.example:8080' }).corsOrigins).toEqual(['https://a.example', 'http://b.example:8080']);
  });
});
