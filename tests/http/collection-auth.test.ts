import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { createLogger } from '../../src/log';
import { uniqueName } from '../helpers/engine-dir';
import { createWorkspace, listEvents, startTestService, type CreatedWorkspace, type TestService } from '../helpers/test-service';

const logLines: string[] = [];
let svc: TestService;
let ws: CreatedWorkspace;
beforeAll(async () => {
  svc = await startTestService({}, undefined, createLogger('debug', (line) => logLines.push(line)));
  ws = await createWorkspace(svc, { name: uniqueName('beacons') });
});
afterAll(() => svc.stop());

/** POSTs `body` as text (JSON unless it is a string) with only the headers given. */
async function post(path: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(svc.url + path, { method: 'POST', headers, body: typeof body === 'string' ? body : JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

const stored = async (userId: string, key = ws.privateApiKey) => (await listEvents(svc, `userId=${userId}`, key)).body.results as Array<Record<string, any>>;

describe('what beacons and script tags send', () => {
  test('POST /events reads JSON sent as text/plain (sendBeacon, a fetch without preflight)', async () => {
    const userId = uniqueName('u');
    const res = await post('/events', { events: [{ type: 'page', userId }] }, { 'content-type': 'text/plain;charset=UTF-8', authorization: `Bearer ${ws.publicApiKey}` });
    expect(res.status).toBe(201);
    expect(await stored(userId)).toHaveLength(1);
  });

  test('a public key as writeKey in the body or the query string, on POST /events and the Segment routes', async () => {
    const userId = uniqueName('u');
    const text = { 'content-type': 'text/plain' };
    expect((await post('/events', { events: [{ type: 'page', userId }], writeKey: ws.publicApiKey }, text)).status).toBe(201);
    expect((await post(`/events?writeKey=${ws.publicApiKey}`, { events: [{ type: 'page', userId }] }, text)).status).toBe(201);
    expect((await post(`/v1/page?writeKey=${ws.publicApiKey}`, { userId, name: 'Home' }, text)).status).toBe(200);
    expect((await post('/v1/b', { batch: [{ type: 'track', userId, event: 'e' }], writeKey: ws.publicApiKey }, text)).status).toBe(200);
    expect(await stored(userId)).toHaveLength(4);
    // The key decides the workspace: none of these went to the default one.
    expect(await stored(userId, svc.privateKey)).toHaveLength(0);
  });

  test('a private key as writeKey, in the body or the query string: 403, nothing stored', async () => {
    const userId = uniqueName('u');
    for (const key of [ws.privateApiKey, svc.privateKey]) {
      for (const [path, body] of [
        ['/events', { events: [{ type: 'page', userId }], writeKey: key }],
        [`/events?writeKey=${key}`, { events: [{ type: 'page', userId }] }],
        ['/v1/batch', { batch: [{ type: 'track', userId, event: 'e' }], writeKey: key }],
        [`/v1/track?writeKey=${key}`, { userId, event: 'e' }],
      ] as const) {
        const res = await post(path, body, { 'content-type': 'text/plain' });
        expect(res.status).toBe(403);
        expect(res.body.detail).toBe('only a public key may be sent as writeKey (body or query string); send private keys in the Authorization header');
      }
    }
    expect(await stored(userId)).toHaveLength(0);
    expect(await stored(userId, svc.privateKey)).toHaveLength(0);
  });

  test('an unknown writeKey: 401; none at all: 401 saying where a key may go', async () => {
    expect((await post('/events?writeKey=pk_nobody_knows', { events: [{ type: 'page' }] }, { 'content-type': 'text/plain' })).status).toBe(401);
    const none = await post('/events', { events: [{ type: 'page' }] }, { 'content-type': 'text/plain' });
    expect(none.status).toBe(401);
    expect(none.body.detail).toContain('"writeKey" in the body or the query string');
  });

  test('/v1/* reads JSON whatever the Content-Type says, or without one', async () => {
    const userId = uniqueName('u');
    const auth = { authorization: `Basic ${btoa(`${ws.publicApiKey}:`)}` };
    for (const type of ['application/json', 'text/plain', 'application/x-www-form-urlencoded', 'application/octet-stream']) {
      expect((await post('/v1/track', { userId, event: type }, { ...auth, 'content-type': type })).status).toBe(200);
    }
    const none = await fetch(`${svc.url}/v1/track`, { method: 'POST', headers: auth, body: new TextEncoder().encode(JSON.stringify({ userId, event: 'none' })) });
    expect(none.status).toBe(200);
    expect((await stored(userId)).map((e) => e.event).sort()).toEqual(['application/json', 'application/octet-stream', 'application/x-www-form-urlencoded', 'none', 'text/plain']);
  });

  test("analytics.js's short paths serve the long routes: /v1/t, /p, /i, /g, /a, /s and /b", async () => {
    const userId = uniqueName('u');
    const auth = { authorization: `Basic ${btoa(`${ws.publicApiKey}:`)}`, 'content-type': 'text/plain' };
    for (const [path, call] of [
      ['/v1/t', { event: 'Short' }],
      ['/v1/p', { name: 'Home' }],
      ['/v1/i', { traits: { plan: 'pro' } }],
      ['/v1/g', { groupId: 'g1' }],
      ['/v1/a', { previousId: 'anon' }],
      ['/v1/s', { name: 'Main' }],
    ] as const) {
      expect((await post(path, { userId, ...call }, auth)).status, path).toBe(200);
    }
    expect((await post('/v1/b', { batch: [{ type: 'track', userId, event: 'Batched' }] }, auth)).status).toBe(200);
    expect((await stored(userId)).map((e) => e.type).sort()).toEqual(['alias', 'group', 'identify', 'page', 'screen', 'track', 'track']);
  });

  test('keys never appear in the logs, wherever they were sent and whatever the answer', async () => {
    const keys = [ws.publicApiKey, ws.privateApiKey, svc.publicKey, svc.privateKey];
    for (const key of keys) {
      await post(`/events?writeKey=${key}`, { events: [{ type: 'page' }] }, { 'content-type': 'text/plain' });
      await post('/v1/batch', { batch: [{ type: 'track', userId: 'u', event: 'e' }], writeKey: key }, { 'content-type': 'text/plain' });
      await post('/v1/track', { userId: 'u', event: 'e' }, { authorization: `Basic ${btoa(`${key}:`)}` });
    }
    expect(logLines.filter((line) => line.includes('"msg":"request"')).length).toBeGreaterThanOrEqual(keys.length * 3);
    for (const key of keys) expect(logLines.filter((line) => line.includes(key))).toEqual([]);
  });
});

test('a Basic header the service has seen is refused once its workspace is deleted (its key revoked)', async () => {
  const doomed = await createWorkspace(svc, { name: uniqueName('doomed') });
  const basic = { 'content-type': 'application/json', authorization: `Basic ${btoa(`${doomed.publicApiKey}:`)}` };
  const userId = uniqueName('u');
  // Twice: the second call finds the header among those already decoded.
  for (let i = 0; i < 2; i++) expect((await post('/v1/track', { userId, event: 'e' }, basic)).status).toBe(200);
  expect((await svc.request('DELETE', `/workspaces/${doomed.workspaceId}`, { key: svc.privateKey })).status).toBe(200);
  const after = await post('/v1/track', { userId, event: 'e' }, basic);
  expect(after.status).toBe(401);
  expect(after.body.detail).toBe('the key is not valid');
});
