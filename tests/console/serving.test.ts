import { afterAll, beforeAll, expect, test } from 'bun:test';
import { gunzipSync } from 'node:zlib';
import { startTestService, type TestService } from '../helpers/test-service';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(() => svc.stop());

/** The hashed files a page names. */
const assetsOf = (html: string) => [...html.matchAll(/(?:src|href)="(\/console\/assets\/[^"]+)"/g)].map((m) => m[1]!);

test('GET /console: the page, revalidated on every load, with a CSP that allows nothing inline or foreign', async () => {
  for (const path of ['/console', '/console/']) {
    const res = await svc.request('GET', path);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('cache-control')).toBe('no-cache');
    // The strict policy of every page (src/http/security-headers.ts), which the console keeps to.
    const csp = res.headers.get('content-security-policy')!;
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("script-src 'self';");
    expect(csp).toContain("style-src 'self';");
    expect(csp).toContain("connect-src 'self'");
    const html = await res.text();
    expect(html).not.toMatch(/<script>|<style|style=|\son[a-z]+=/);
    expect(html).not.toMatch(/https?:\/\//);
    expect(assetsOf(html)).toHaveLength(2);
  }
});

test('its files: hashed names, cached for a year as immutable, gzipped when asked; an unknown name is a 404 problem', async () => {
  const html = await (await svc.request('GET', '/console')).text();
  for (const path of assetsOf(html)) {
    const plain = await fetch(svc.url + path, { headers: { 'accept-encoding': 'identity' } });
    expect(plain.status).toBe(200);
    expect(plain.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(plain.headers.get('content-type')).toMatch(/^text\/(javascript|css); charset=utf-8$/);
    const body = new Uint8Array(await plain.arrayBuffer());
    const zipped = await fetch(svc.url + path, { headers: { 'accept-encoding': 'gzip' }, decompress: false } as RequestInit);
    expect(zipped.headers.get('content-encoding')).toBe('gzip');
    expect(gunzipSync(new Uint8Array(await zipped.arrayBuffer()))).toEqual(Buffer.from(body));
  }
  const missing = await svc.request('GET', '/console/assets/main-nothere.js');
  expect(missing.status).toBe(404);
  expect(missing.headers.get('content-type')).toBe('application/problem+json');
});

test('GET / is still the health check', async () => {
  expect(((await (await svc.request('GET', '/')).json()) as { status: string }).status).toBe('ok');
});

test('GET /docs: the API reference page names only files the service serves', async () => {
  const res = await svc.request('GET', '/docs');
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
  const html = await res.text();
  expect(html).not.toMatch(/https?:\/\//);
  const assets = assetsOf(html);
  expect(assets.some((a) => a.includes('scalar-standalone-'))).toBe(true);
  for (const path of assets) expect((await svc.request('GET', path)).status).toBe(200);
});
