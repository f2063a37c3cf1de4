import { afterAll, beforeAll, expect, test } from 'bun:test';
import { startTestService, type TestService } from '../helpers/test-service';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(() => svc.stop());

const HEADERS = { 'x-content-type-options': 'nosniff', 'referrer-policy': 'strict-origin-when-cross-origin', 'x-frame-options': 'DENY' };

test('every answer, errors included, carries nosniff, a referrer policy, a frame policy and a strict CSP', async () => {
  for (const [path, key] of [['/', undefined], ['/events', svc.privateKey], ['/no-such-route', undefined], ['/events', undefined]] as const) {
    const res = await svc.request('GET', path, { key });
    expect(Object.fromEntries(Object.keys(HEADERS).map((h) => [h, res.headers.get(h)]))).toEqual(HEADERS);
    expect(res.headers.get('content-security-policy')).toBe(
      "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'",
    );
  }
});

test('the API reference page has a CSP: scripts from this origin only, inline styles (Scalar adds its own), no framing', async () => {
  const res = await svc.request('GET', '/docs');
  expect(res.headers.get('content-type')).toStartWith('text/html');
  const csp = res.headers.get('content-security-policy')!;
  expect(csp).toContain("default-src 'self'");
  expect(csp).toContain("script-src 'self';");
  expect(csp).toContain("style-src 'self' 'unsafe-inline'");
  expect(csp).not.toContain('https:');
  expect(csp).toContain("connect-src 'self'");
  expect(csp).toContain("frame-ancestors 'none'");
  expect(res.headers.get('x-content-type-options')).toBe('nosniff');
});
