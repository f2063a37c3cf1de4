import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildTracker, TRACKER_DIST, TRACKER_MAX_GZIP_BYTES } from '../../tracker/build';
import { buildConfig, readEnvFile } from '../../src/config';
import { uniqueName } from '../helpers/engine-dir';
import { PROJECT_ROOT } from '../helpers/project-root';
import { rejection } from '../helpers/rejection';
import { listEvents, startTestService, type TestService } from '../helpers/test-service';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(() => svc.stop());

const committed = () => readFileSync(TRACKER_DIST, 'utf8');

describe('the tracker build', () => {
  test('type-checks, fits its budget, and is what tracker/dist/script.js holds (run npm run build:tracker if not)', async () => {
    const built = await buildTracker();
    console.log(`tracker: ${built.code.length} bytes, ${built.gzipBytes} bytes gzipped (budget ${TRACKER_MAX_GZIP_BYTES})`);
    expect(built.gzipBytes).toBeLessThanOrEqual(TRACKER_MAX_GZIP_BYTES);
    expect(built.code).toBe(committed());
  });
});

describe('GET /script.js', () => {
  test('serves the tracker with the collection path in it, ETag and Cache-Control, gzipped when asked', async () => {
    const plain = await fetch(`${svc.url}/script.js`, { headers: { 'accept-encoding': 'identity' } });
    expect(plain.status).toBe(200);
    expect(plain.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(plain.headers.get('cache-control')).toBe('public, max-age=3600');
    expect(plain.headers.get('etag')).toMatch(/^"[\w-]{22}"$/);
    expect(plain.headers.get('content-encoding')).toBeNull();
    const text = await plain.text();
    expect(text).toBe(committed().replace('"__COLLECT_PATH__"', '"/v1/batch"'));
    const gzipped = await fetch(`${svc.url}/script.js`, { headers: { 'accept-encoding': 'gzip, deflate, br' } });
    expect(gzipped.headers.get('content-encoding')).toBe('gzip');
    expect(gzipped.headers.get('vary')).toBe('Accept-Encoding');
    expect(gzipped.headers.get('etag')).toBe(plain.headers.get('etag'));
    expect(await gzipped.text()).toBe(text);
  });

  test('If-None-Match with its ETag (strong, weak or in a list): 304 without a body', async () => {
    const etag = (await fetch(`${svc.url}/script.js`)).headers.get('etag')!;
    for (const header of [etag, `W/${etag}`, `"other", ${etag}`]) {
      const res = await fetch(`${svc.url}/script.js`, { headers: { 'if-none-match': header } });
      expect(res.status).toBe(304);
      expect(await res.text()).toBe('');
      expect(res.headers.get('etag')).toBe(etag);
    }
    expect((await fetch(`${svc.url}/script.js`, { headers: { 'if-none-match': '"stale"' } })).status).toBe(200);
  });
});

describe('renamed paths (TRACKER_SCRIPT_PATH, TRACKER_COLLECT_PATH)', () => {
  test('the script and the collection path move; the script sends to the new path, which serves as /v1/batch', async () => {
    const renamed = await startTestService({ TRACKER_SCRIPT_PATH: '/js/site.js', TRACKER_COLLECT_PATH: '/api/e' });
    try {
      const script = await fetch(`${renamed.url}/js/site.js`);
      expect(script.status).toBe(200);
      expect(await script.text()).toContain('new URL("/api/e",');
      expect((await fetch(`${renamed.url}/script.js`)).status).toBe(404);
      const userId = uniqueName('u');
      const origin = 'https://site.example';
      const preflight = await fetch(`${renamed.url}/api/e`, { method: 'OPTIONS', headers: { origin, 'access-control-request-method': 'POST' } });
      expect(preflight.status).toBe(204);
      const res = await fetch(`${renamed.url}/api/e`, {
        method: 'POST',
        headers: { 'content-type': 'text/plain', origin },
        body: JSON.stringify({ writeKey: renamed.publicKey, batch: [{ type: 'page', userId, name: 'Home' }] }),
      });
      expect(res.status).toBe(200);
      expect(res.headers.get('access-control-allow-origin')).toBe(origin);
      expect((await listEvents(renamed, `userId=${userId}`)).body.total).toBe(1);
    } finally {
      await renamed.stop();
    }
  });

  test("a path that is already one of the service's routes stops the start, naming the variable", async () => {
    const taken = (await rejection(startTestService({ TRACKER_COLLECT_PATH: '/events' }))) as Error;
    expect(taken.message).toContain('TRACKER_COLLECT_PATH: POST /events is already a route of the service');
    const docs = (await rejection(startTestService({ TRACKER_SCRIPT_PATH: '/docs' }))) as Error;
    expect(docs.message).toContain('TRACKER_SCRIPT_PATH: GET /docs is already a route of the service');
  });

  test('a value that is not a path stops the start, naming the variable', () => {
    const defaults = readEnvFile(join(PROJECT_ROOT, '.env.defaults'));
    for (const value of ['script.js', '/a b.js', '/js/', '/x?y']) {
      expect(() => buildConfig(defaults, { TRACKER_SCRIPT_PATH: value })).toThrow(/TRACKER_SCRIPT_PATH: must be a path such as \/js\/site\.js/);
    }
  });
});
