import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { TokenBuckets, parseRate } from '../../src/http/token-buckets';
import { parseExposition, sampleValue } from '../helpers/exposition';
import { createWorkspace, startTestService, type CreatedWorkspace, type TestService } from '../helpers/test-service';

describe('token buckets', () => {
  test('a burst of up to the count, then one token per interval', () => {
    const buckets = new TokenBuckets(parseRate('3/s')!, 10);
    expect([0, 0, 0].map(() => buckets.take('k', 0))).toEqual([0, 0, 0]);
    expect(buckets.take('k', 0)).toBe(334);
    expect(buckets.take('k', 334)).toBe(0);
    expect(buckets.take('other', 334)).toBe(0);
  });

  test('a debt charged after the fact holds the key back until it is repaid', () => {
    const buckets = new TokenBuckets({ count: 60_000, perMs: 60_000 }, 10);
    buckets.charge('ws', 90_000, 0);
    expect(buckets.wait('ws', 0)).toBe(30_001);
    expect(buckets.wait('ws', 30_001)).toBe(0);
  });

  test('at most maxKeys are kept: the oldest is forgotten', () => {
    const buckets = new TokenBuckets(parseRate('1/h')!, 2);
    buckets.take('a', 0);
    buckets.take('b', 0);
    buckets.take('c', 0);
    expect(buckets.take('a', 0)).toBe(0);
  });

  test('rates are N/s, N/m or N/h, or 0 for none', () => {
    expect(parseRate('6000/m')).toEqual({ count: 6000, perMs: 60_000 });
    expect(parseRate('0')).toBeUndefined();
    for (const bad of ['10', '10/d', '0/s', '-1/s', '1.5/s']) expect(() => parseRate(bad)).toThrow('must be a rate');
  });
});

describe('rate limits', () => {
  let svc: TestService;
  let other: CreatedWorkspace;
  beforeAll(async () => {
    svc = await startTestService({
      RATE_LIMIT_COLLECT_PER_KEY: '3/m',
      RATE_LIMIT_COLLECT_PER_ADDRESS: '0',
      RATE_LIMIT_READ_PER_KEY: '0',
      RATE_LIMIT_READ_PER_ADDRESS: '8/m',
      RATE_LIMIT_AUTH_FAILURES_PER_ADDRESS: '3/m',
      TRUSTED_PROXIES: '127.0.0.1',
    });
    other = await createWorkspace(svc, { name: `rate limited ${Date.now()}` });
  });
  afterAll(() => svc.stop());

  const send = (key: string, headers: Record<string, string> = {}) => svc.request('POST', '/events', { key, body: { events: [{ type: 'track', event: 'rl' }] }, headers });

  test('a burst over the per-key limit gets 429 with Retry-After and RateLimit fields; other keys are unaffected', async () => {
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await send(svc.publicKey)).status);
    expect(statuses).toEqual([201, 201, 201]);
    const limited = await send(svc.publicKey);
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(limited.headers.get('ratelimit-limit')).toBe('3');
    expect(limited.headers.get('ratelimit-remaining')).toBe('0');
    expect(limited.headers.get('ratelimit-reset')).toBe(limited.headers.get('retry-after'));
    expect(limited.headers.get('ratelimit-policy')).toBe('3;w=60');
    expect(((await limited.json()) as any).detail).toContain('too many requests with this public key');
    // Another workspace's key, and the private key of the same workspace, still send.
    expect((await send(other.publicApiKey)).status).toBe(201);
    expect((await send(svc.privateKey)).status).toBe(201);
  });

  test('per client address, X-Forwarded-For counts only from a trusted proxy', async () => {
    const list = (forwardedFor: string) => svc.request('GET', '/events?limit=1', { key: other.privateApiKey, headers: { 'x-forwarded-for': forwardedFor } });
    const first = [];
    for (let i = 0; i < 8; i++) first.push((await list('198.51.100.7')).status);
    expect(first).toEqual(Array(8).fill(200));
    expect((await list('198.51.100.7')).status).toBe(429);
    // Another client behind the same proxy has its own bucket; one that forges a left-most entry does not escape.
    expect((await list('198.51.100.8')).status).toBe(200);
    expect((await list('203.0.113.1, 198.51.100.7')).status).toBe(429);
  });

  test('after too many 401s from an address, even a valid key from it gets 429 until the bucket refills', async () => {
    const from = { 'x-forwarded-for': '192.0.2.44' };
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await send('wrong-key-123', from)).status);
    expect(statuses).toEqual([401, 401, 401]);
    const blocked = await send(other.publicApiKey, from);
    expect(blocked.status).toBe(429);
    expect(((await blocked.json()) as any).detail).toContain('missing or wrong key');
    expect((await send(other.publicApiKey, { 'x-forwarded-for': '192.0.2.45' })).status).toBe(201);
  });

  test('refusals are counted in /metrics by limit', async () => {
    const res = await svc.request('GET', '/metrics', { key: svc.privateKey, headers: { 'x-forwarded-for': '192.0.2.99' } });
    const families = parseExposition(await res.text());
    const limited = (limit: string) => sampleValue(families, 'analytics_rate_limited_total', { limit });
    expect(limited('collect_per_key')).toBe(1);
    expect(limited('read_per_address')).toBe(2);
    expect(limited('auth_failures_per_address')).toBe(1);
    expect(sampleValue(families, 'analytics_request_body_bytes_in_flight')).toBe(0);
  });
});
