import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { testInProcess } from '../helpers/deno-service';
import { serviceOverOldMetadata } from '../helpers/old-metadata';
import { uniqueName } from '../helpers/engine-dir';
import { createWorkspace, listEvents, startTestService, type TestService } from '../helpers/test-service';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(() => svc.stop());

const admin = (method: string, path: string, body?: unknown) => svc.request(method, path, { key: svc.privateKey, body });

/** POSTs one track call to `path` from a page of `origin` (none: not a browser) with `key`. */
function sendFrom(origin: string | undefined, key: string, userId: string, path = '/v1/track') {
  const body = path === '/events' ? { events: [{ type: 'track', event: 'from a page', userId }] } : { userId, event: 'from a page' };
  return fetch(svc.url + path, {
    method: 'POST',
    headers: { 'content-type': 'text/plain', authorization: `Bearer ${key}`, ...(origin ? { origin } : {}) },
    body: JSON.stringify(body),
  });
}

describe('allowedOrigins of a workspace', () => {
  test('defaults to any origin, on new workspaces and the default one', async () => {
    const ws = await createWorkspace(svc, { name: uniqueName('open') });
    expect(ws.allowedOrigins).toEqual(['*']);
    const listed = (await (await admin('GET', '/workspaces')).json()) as any;
    expect(listed.results.every((w: any) => Array.isArray(w.allowedOrigins))).toBe(true);
    const userId = uniqueName('u');
    expect((await sendFrom('https://anyone.example', ws.publicApiKey, userId)).status).toBe(200);
  });

  test('set on create and on PUT, normalized as browsers send origins; absent on PUT keeps them', async () => {
    const ws = await createWorkspace(svc, { name: uniqueName('shop'), allowedOrigins: ['https://Shop.Example:443/', 'http://localhost:3000', 'http://localhost:3000'] });
    expect(ws.allowedOrigins).toEqual(['https://shop.example', 'http://localhost:3000']);
    const put = await admin('PUT', `/workspaces/${ws.workspaceId}`, { name: ws.name, allowedOrigins: ['https://www.shop.example'] });
    expect(((await put.json()) as any).allowedOrigins).toEqual(['https://www.shop.example']);
    const renamed = await admin('PUT', `/workspaces/${ws.workspaceId}`, { name: `${ws.name}-2` });
    expect(((await renamed.json()) as any).allowedOrigins).toEqual(['https://www.shop.example']);
    expect(((await (await admin('GET', `/workspaces/${ws.workspaceId}`)).json()) as any).allowedOrigins).toEqual(['https://www.shop.example']);
  });

  test('anything but * or an origin: 400 naming each bad item; nothing created', async () => {
    const name = uniqueName('bad');
    const res = await admin('POST', '/workspaces', { name, allowedOrigins: ['https://ok.example', 'https://a.example/path', 'ftp://files.example', '*.example.com'] });
    expect(res.status).toBe(400);
    const body = (await res.json()) as any;
    expect(body.errors.map((e: any) => e.pointer)).toEqual(['/allowedOrigins/1', '/allowedOrigins/2', '/allowedOrigins/3']);
    expect(body.errors[0].detail).toBe('must be * or an origin such as https://www.example.com (scheme, host and port; no path)');
    const all = (await (await admin('GET', '/workspaces')).json()) as any;
    expect(all.results.some((w: any) => w.name === name)).toBe(false);
  });

  test('a page of another origin sending with a public key: 403 naming the origin, nothing stored', async () => {
    const ws = await createWorkspace(svc, { name: uniqueName('strict'), allowedOrigins: ['https://shop.example'] });
    const userId = uniqueName('u');
    for (const path of ['/v1/track', '/events']) {
      const res = await sendFrom('https://evil.example', ws.publicApiKey, userId, path);
      expect(res.status).toBe(403);
      expect(((await res.json()) as any).detail).toBe("origin https://evil.example is not in the allowedOrigins of this key's workspace");
      expect(res.headers.get('access-control-allow-origin')).toBe('https://evil.example');
    }
    const beacon = await fetch(`${svc.url}/events?writeKey=${ws.publicApiKey}`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain', origin: 'null' },
      body: JSON.stringify({ events: [{ type: 'page', userId }] }),
    });
    expect(beacon.status).toBe(403);
    expect((await listEvents(svc, `userId=${userId}`, ws.privateApiKey)).body.total).toBe(0);
  });

  test('the listed origin, a request without Origin (a server) and a private key from anywhere are taken', async () => {
    const ws = await createWorkspace(svc, { name: uniqueName('strict'), allowedOrigins: ['https://shop.example'] });
    const userId = uniqueName('u');
    expect((await sendFrom('https://shop.example', ws.publicApiKey, userId)).status).toBe(200);
    expect((await sendFrom(undefined, ws.publicApiKey, userId)).status).toBe(200);
    expect((await sendFrom('https://evil.example', ws.privateApiKey, userId)).status).toBe(200);
    expect((await listEvents(svc, `userId=${userId}`, ws.privateApiKey)).body.total).toBe(3);
  });

  testInProcess('workspaces written before allowedOrigins existed read as any origin after the upgrade', async () => {
    const { upgraded, database } = await serviceOverOldMetadata(svc, 5);
    try {
      const listed = (await (await upgraded.request('GET', '/workspaces', { key: upgraded.privateKey })).json()) as any;
      expect(listed.results).toEqual([expect.objectContaining({ databaseName: database, allowedOrigins: ['*'] })]);
      const res = await fetch(`${upgraded.url}/v1/track`, {
        method: 'POST',
        headers: { origin: 'https://anyone.example', authorization: `Bearer ${upgraded.publicKey}` },
        body: JSON.stringify({ userId: 'u', event: 'after the upgrade' }),
      });
      expect(res.status).toBe(200);
    } finally {
      await upgraded.stop();
    }
  });
});
