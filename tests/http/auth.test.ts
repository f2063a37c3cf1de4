import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { startTestService, type TestService } from '../helpers/test-service';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(() => svc.stop());

const event = { events: [{ type: 'track', event: 'auth-test' }] };

describe('keys and scopes', () => {
  // [what, headers, error on GET /events, error on POST /events]: a collection route reads a Basic
  // header's user name as a write key (as Segment's clients send it), so there it is an unknown key.
  const unauthorized: Array<[string, Record<string, string>, string, string]> = [
    ['no Authorization header', {}, 'invalid_request', 'invalid_request'],
    ['a Basic header', { authorization: 'Basic dXNlcjpwYXNz' }, 'invalid_request', 'invalid_token'],
    ['Bearer without a key', { authorization: 'Bearer ' }, 'invalid_request', 'invalid_request'],
    ['an unknown key', { authorization: 'Bearer not-a-key-we-know' }, 'invalid_token', 'invalid_token'],
  ];
  for (const [what, headers, getError, postError] of unauthorized) {
    for (const [method, path, body, error] of [['POST', '/events', event, postError], ['GET', '/events', undefined, getError]] as const) {
      test(`${what} on ${method} ${path}: 401 with WWW-Authenticate`, async () => {
        const res = await svc.request(method, path, { headers, body });
        expect(res.status).toBe(401);
        expect(res.headers.get('www-authenticate')).toBe(`Bearer error="${error}"`);
        expect(res.headers.get('content-type')).toBe('application/problem+json');
      });
    }
  }

  test('a key in a header is checked before the body: an unknown key with a malformed body gets 401, not 400', async () => {
    // Without a header the key may be in the body (writeKey), which must then be read first.
    const res = await svc.request('POST', '/events', { key: 'not-a-key-we-know', body: '{"events": [' });
    expect(res.status).toBe(401);
  });

  test('a public key on GET /events: 403', async () => {
    const res = await svc.request('GET', '/events', { key: svc.publicKey });
    expect(res.status).toBe(403);
    expect(((await res.json()) as any).detail).toContain('private key');
  });

  test('a public key on POST /events: 201', async () => {
    expect((await svc.request('POST', '/events', { key: svc.publicKey, body: event })).status).toBe(201);
  });

  test('a private key on POST /events: 201 (private keys may send too)', async () => {
    expect((await svc.request('POST', '/events', { key: svc.privateKey, body: event })).status).toBe(201);
  });

  test('a private key on GET /events: 200', async () => {
    expect((await svc.request('GET', '/events', { key: svc.privateKey })).status).toBe(200);
  });

  test('the scheme name is case-insensitive', async () => {
    const res = await svc.request('GET', '/events', { headers: { authorization: `bearer ${svc.privateKey}` } });
    expect(res.status).toBe(200);
  });

  test('GET / needs no key and tells the storage mode', async () => {
    const res = await svc.request('GET', '/');
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ service: 'event-analytics', storage: 'embedded', status: 'ok' });
  });
});

describe('error bodies', () => {
  test('an unknown route: 404 problem+json', async () => {
    const res = await svc.request('GET', '/nowhere', { key: svc.privateKey });
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toBe('application/problem+json');
    expect(await res.json()).toEqual({ type: 'about:blank', title: 'Not Found', status: 404, detail: 'no route GET /nowhere' });
  });

  test('a declared Content-Length over the limit: 413 before the body is read', async () => {
    const res = await fetch(`${svc.url}/events`, {
      method: 'POST',
      headers: { authorization: `Bearer ${svc.publicKey}`, 'content-type': 'application/json', 'content-length': String(svc.config.maxBodyBytes + 1) },
      body: 'x'.repeat(svc.config.maxBodyBytes + 1),
    });
    expect(res.status).toBe(413);
    expect(res.headers.get('content-type')).toBe('application/problem+json');
    expect(await res.json()).toMatchObject({ status: 413, title: 'Payload Too Large' });
  });

  test('no Content-Type on POST /events: 415', async () => {
    const res = await fetch(`${svc.url}/events`, {
      method: 'POST',
      headers: { authorization: `Bearer ${svc.publicKey}` },
      body: new Blob([JSON.stringify(event)]),
    });
    expect(res.status).toBe(415);
    expect(res.headers.get('content-type')).toBe('application/problem+json');
  });

  test('every response carries a request id', async () => {
    const res = await svc.request('GET', '/', { headers: { 'x-request-id': 'trace-123' } });
    expect(res.headers.get('x-request-id')).toBe('trace-123');
  });
});
