import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { parseIsoDateTime } from '../../src/timestamps';
import { uniqueName } from '../helpers/engine-dir';
import { createWorkspace, listEvents, startTestService, type TestService } from '../helpers/test-service';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(() => svc.stop());

const basic = (user: string, password = '') => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

/** POSTs to a Segment route with the given headers; the body as JSON unless it is a string. */
async function call(path: string, body: unknown, headers: Record<string, string> = { authorization: basic(svc.publicKey) }) {
  const res = await fetch(svc.url + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
}

async function storedFor(userId: string, key = svc.privateKey) {
  const { body } = await listEvents(svc, `userId=${userId}&orderByField=parsedAt&orderByDirection=asc`, key);
  return body.results as Array<Record<string, any>>;
}

describe('Segment routes: authentication', () => {
  test('HTTP Basic with the write key as user name and an empty password', async () => {
    const userId = uniqueName('u');
    expect(await call('/v1/track', { userId, event: 'Basic' })).toMatchObject({ status: 200, body: { success: true } });
    expect(await storedFor(userId)).toHaveLength(1);
  });

  test('writeKey in the body, when there is no Authorization header; a Bearer key as elsewhere', async () => {
    const userId = uniqueName('u');
    expect((await call('/v1/identify', { userId, writeKey: svc.publicKey }, {})).status).toBe(200);
    expect((await call('/v1/identify', { userId }, { authorization: `Bearer ${svc.publicKey}` })).status).toBe(200);
    expect((await call('/v1/batch', { batch: [{ type: 'track', userId, event: 'x' }], writeKey: svc.publicKey }, {})).status).toBe(200);
    expect(await storedFor(userId)).toHaveLength(3);
  });

  test("a workspace's write key stores in that workspace", async () => {
    const ws = await createWorkspace(svc, { name: uniqueName('segment') });
    const userId = uniqueName('u');
    expect((await call('/v1/track', { userId, event: 'There' }, { authorization: basic(ws.publicApiKey) })).status).toBe(200);
    expect(await storedFor(userId, ws.privateApiKey)).toHaveLength(1);
    expect(await storedFor(userId)).toHaveLength(0);
  });

  test('401 for no key, an unknown key, or a malformed header; nothing stored', async () => {
    const userId = uniqueName('u');
    for (const headers of [{} as Record<string, string>, { authorization: basic('not-a-key') }, { authorization: 'Basic %%%' }, { authorization: 'Token abc' }]) {
      const res = await call('/v1/track', { userId, event: 'x' }, headers);
      expect(res.status).toBe(401);
      expect(res.headers.get('content-type')).toBe('application/problem+json');
    }
    expect((await call('/v1/track', { userId, event: 'x', writeKey: 'wrong-key-1' }, {})).status).toBe(401);
    expect(await storedFor(userId)).toHaveLength(0);
  });
});

describe('Segment routes: limits and validation', () => {
  test('a call over 32 KB, alone or in a batch, and a batch over 500 KB get 400; nothing stored', async () => {
    const userId = uniqueName('u');
    const big = { userId, event: 'big', properties: { s: 'x'.repeat(33 * 1024) } };
    expect((await call('/v1/track', big)).status).toBe(400);
    const inBatch = await call('/v1/batch', { batch: [{ type: 'track', userId, event: 'small' }, { type: 'track', ...big }] });
    expect(inBatch.status).toBe(400);
    expect(inBatch.body.errors).toEqual([{ pointer: '/batch/1', detail: expect.stringContaining('the limit is 32768 per call') }]);
    const alone = await call('/v1/batch', { batch: [{ type: 'track', ...big }] });
    expect(alone.status).toBe(400);
    expect(alone.body.errors).toEqual([{ pointer: '/batch/0', detail: expect.stringContaining('the limit is 32768 per call') }]);
    const many = Array.from({ length: 20 }, () => ({ type: 'track', userId, event: 'many', properties: { s: 'y'.repeat(30 * 1024) } }));
    const huge = await call('/v1/batch', { batch: many });
    expect(huge.status).toBe(400);
    expect(huge.body.detail).toContain('the limit of this route is 512000');
    expect(await storedFor(userId)).toHaveLength(0);
  });

  test('malformed JSON is 400; a call without ids, a track without event, an alias without previousId are 400 with pointers', async () => {
    expect((await call('/v1/track', '{"userId":')).status).toBe(400);
    const userId = uniqueName('u');
    const res = await call('/v1/batch', {
      batch: [
        { type: 'track', userId, event: 'ok' },
        { type: 'track', event: 'no ids' },
        { type: 'track', userId },
        { type: 'alias', userId },
        { type: 'group', userId },
        { type: 'pageview', userId },
      ],
    });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([{ pointer: '/batch/5/type', detail: 'must be one of track, identify, page, screen, group, alias' }]);
    const semantic = await call('/v1/batch', { batch: [{ type: 'track', userId, event: 'ok' }, { type: 'track', event: 'no ids' }, { type: 'track', userId }, { type: 'alias', userId }, { type: 'group', userId }] });
    expect(semantic.status).toBe(400);
    expect(semantic.body.errors).toEqual([
      { pointer: '/batch/1', detail: 'needs a userId or an anonymousId' },
      { pointer: '/batch/2/event', detail: 'is required in track calls' },
      { pointer: '/batch/3/previousId', detail: 'is required in alias calls' },
      { pointer: '/batch/4/groupId', detail: 'is required in group calls' },
    ]);
    expect(await storedFor(userId)).toHaveLength(0);
  });

  test('JSON sent as text/plain (browsers avoid a CORS preflight so) is read as JSON', async () => {
    const userId = uniqueName('u');
    expect((await call('/v1/page', JSON.stringify({ userId, name: 'Home' }), { authorization: basic(svc.publicKey), 'content-type': 'text/plain' })).status).toBe(200);
    expect(await storedFor(userId)).toHaveLength(1);
  });

  test('when the ingest queue is full: 429 with Retry-After, nothing stored, and the next call that fits is taken', async () => {
    const small = await startTestService({ INGEST_QUEUE_MAX_EVENTS: '1' });
    try {
      const userId = uniqueName('u');
      const res = await fetch(`${small.url}/v1/batch`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: basic(small.publicKey) },
        body: JSON.stringify({ batch: [{ type: 'track', userId, event: 'a' }, { type: 'track', userId, event: 'b' }] }),
      });
      expect(res.status).toBe(429);
      expect(res.headers.get('retry-after')).toBe('1');
      expect((await listEvents(small, `userId=${userId}`)).body.total).toBe(0);
      const next = await fetch(`${small.url}/v1/track`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: basic(small.publicKey) }, body: JSON.stringify({ userId, event: 'c' }) });
      expect(next.status).toBe(200);
    } finally {
      await small.stop();
    }
  });
});

describe('Segment routes: what is stored', () => {
  test("Segment's clock-skew rule: timestamp = receivedAt - (sentAt - originalTimestamp or timestamp)", async () => {
    const userId = uniqueName('u');
    // The device's clock is a year behind: its call happened 5 s before it was sent.
    const before = Date.now();
    await call('/v1/batch', {
      batch: [
        { type: 'track', userId, event: 'skewed', timestamp: '2025-11-22T10:00:00.000Z' },
        { type: 'track', userId, event: 'original', originalTimestamp: '2025-11-22T10:00:02.000Z', timestamp: '2025-11-22T10:00:00.000Z' },
        { type: 'track', userId, event: 'own sentAt', timestamp: '2025-11-22T10:00:00.000Z', sentAt: '2025-11-22T10:00:01.000Z' },
      ],
      sentAt: '2025-11-22T10:00:05.000Z',
    });
    await call('/v1/track', { userId, event: 'no sentAt', timestamp: '2020-01-01T00:00:00Z' });
    await call('/v1/track', { userId, event: 'no time' });
    const after = Date.now();
    const events = await storedFor(userId);
    const lag = (e: Record<string, any>) => Number(parseIsoDateTime(e.parsedAt)! - parseIsoDateTime(e.timestamp)!) / 1000;
    expect(events.map((e) => e.event)).toEqual(['skewed', 'original', 'own sentAt', 'no sentAt', 'no time']);
    expect(events.map(lag).slice(0, 3)).toEqual([5000, 3000, 1000]);
    expect(events[3]!.timestamp).toBe('2020-01-01T00:00:00.000Z');
    expect(events[4]!.timestamp).toBe(events[4]!.parsedAt);
    for (const e of events) expect(Date.parse(e.parsedAt)).toBeGreaterThanOrEqual(before - 1);
    expect(Date.parse(events[0]!.timestamp)).toBeLessThanOrEqual(after);
  });

  test("the batch's context and integrations merge into each call (the call's keys win)", async () => {
    const userId = uniqueName('u');
    await call('/v1/batch', {
      batch: [
        { type: 'track', userId, event: 'plain' },
        { type: 'track', userId, event: 'own', context: { ip: '203.0.113.9', locale: 'fr' }, integrations: { Mixpanel: false } },
      ],
      context: { ip: '198.51.100.1', library: { name: 'analytics-node' } },
      integrations: { All: true },
    });
    const [plain, own] = await storedFor(userId);
    expect(plain!.context).toEqual({ ip: '198.51.100.1', library: { name: 'analytics-node' }, integrations: { All: true } });
    expect(own!.context).toEqual({ ip: '203.0.113.9', locale: 'fr', library: { name: 'analytics-node' }, integrations: { All: true, Mixpanel: false } });
  });

  test("an identify without traits takes context.traits (RudderStack's JS SDK sends them there); other calls do not", async () => {
    const userId = uniqueName('u');
    await call('/v1/identify', { userId, context: { traits: { plan: 'pro' } } });
    await call('/v1/identify', { userId, traits: { plan: 'own' }, context: { traits: { plan: 'context' } } });
    await call('/v1/track', { userId, event: 'x', context: { traits: { plan: 'pro' } } });
    const [lifted, own, track] = await storedFor(userId);
    expect(lifted!.traits).toEqual({ plan: 'pro' });
    expect(own!.traits).toEqual({ plan: 'own' });
    expect(track!.traits).toBeUndefined();
  });

  test('page and screen names go into properties; screen and alias keep their types; track, identify and group map as /events', async () => {
    const userId = uniqueName('u');
    await call('/v1/batch', {
      batch: [
        { type: 'page', userId, name: 'Pricing', category: 'Docs', properties: { path: '/pricing' } },
        { type: 'screen', userId, name: 'Home', properties: { name: 'overridden' } },
        { type: 'alias', userId, previousId: 'anon-1' },
        { type: 'group', userId, groupId: 'g1', traits: { seats: 5 } },
        { type: 'identify', userId, anonymousId: 'a1', traits: { plan: 'pro' } },
        { type: 'track', userId, event: 'Bought', properties: { amount: 42 } },
      ],
    });
    const stored = await storedFor(userId);
    const strip = ({ uuid, timestamp, parsedAt, ...rest }: Record<string, any>) => rest;
    expect(stored.map(strip)).toEqual([
      { type: 'page', userId, properties: { path: '/pricing', name: 'Pricing', category: 'Docs' } },
      { type: 'screen', userId, properties: { name: 'Home' } },
      { type: 'alias', userId, properties: { previousId: 'anon-1' } },
      { type: 'group', userId, groupId: 'g1', traits: { seats: 5 } },
      { type: 'identify', userId, anonymousId: 'a1', traits: { plan: 'pro' } },
      { type: 'track', userId, event: 'Bought', properties: { amount: 42 } },
    ]);
    const screens = await listEvents(svc, `userId=${userId}&type=screen`);
    expect(screens.body.total).toBe(1);
  });
});
