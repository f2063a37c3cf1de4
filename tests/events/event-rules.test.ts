/**
 * One rule for every door events come in by: `POST /events` (its fast path and the app alike),
 * `POST /events/import` and the Segment routes keep a page's name the same way, and refuse a
 * track without an event.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { uniqueName } from '../helpers/engine-dir';
import { listEvents, startTestService, type TestService } from '../helpers/test-service';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(() => svc.stop());

/**
 * POST /events as the collection fast path takes it (a plain JSON request), or with an Origin
 * header, which the fast path leaves to the app: both must answer the same.
 */
const DOORS = { 'fast path': {}, app: { origin: 'https://shop.example' } } as const;

async function postEvents(events: unknown[], headers: Record<string, string> = {}) {
  const res = await svc.request('POST', '/events', { key: svc.publicKey, body: { events }, headers });
  return { status: res.status, body: (await res.json()) as any };
}

async function segment(path: string, body: unknown) {
  const res = await fetch(svc.url + path, {
    method: 'POST',
    headers: { authorization: `Bearer ${svc.publicKey}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as any };
}

async function storedFor(userId: string): Promise<Array<Record<string, any>>> {
  const { body } = await listEvents(svc, `userId=${userId}&orderByField=parsedAt&orderByDirection=asc`);
  return body.results;
}

describe("a page's name", () => {
  for (const [door, headers] of Object.entries(DOORS)) {
    test(`POST /events (${door}) keeps it, and its category, in properties as /v1/page does`, async () => {
      const userId = uniqueName('u');
      const page = { userId, name: 'Pricing', category: 'Docs', properties: { path: '/pricing', name: 'sent in properties too' } };
      const sent = await postEvents([{ type: 'page', ...page }], headers);
      expect(sent.status).toBe(201);
      expect((await segment('/v1/page', page)).status).toBe(200);
      const [viaEvents, viaSegment] = await storedFor(userId);
      expect(viaEvents!.properties).toEqual({ path: '/pricing', name: 'Pricing', category: 'Docs' });
      expect(viaSegment!.properties).toEqual(viaEvents!.properties);
      expect(sent.body.results[0].properties).toEqual(viaEvents!.properties);
    });
  }

  test('a page without one keeps its properties as sent; a name must be a string', async () => {
    const userId = uniqueName('u');
    expect((await postEvents([{ type: 'page', userId, properties: { path: '/' } }])).status).toBe(201);
    expect((await storedFor(userId))[0]!.properties).toEqual({ path: '/' });
    const refused = await postEvents([{ type: 'page', userId, name: 7 }]);
    expect(refused.status).toBe(400);
    expect(refused.body.errors).toEqual([expect.objectContaining({ pointer: '/events/0/name' })]);
  });
});

describe('a track without an event', () => {
  for (const [door, headers] of Object.entries(DOORS)) {
    test(`POST /events (${door}): 400 pointing at each missing event, and nothing of the batch is stored`, async () => {
      const userId = uniqueName('u');
      const res = await postEvents(
        [
          { type: 'track', event: 'signup', userId },
          { type: 'track', userId, properties: { plan: 'pro' } },
          { type: 'identify', userId },
          { type: 'track', userId },
        ],
        headers,
      );
      expect(res.status).toBe(400);
      expect(res.body.errors).toEqual([
        { pointer: '/events/1/event', detail: 'is required in track events' },
        { pointer: '/events/3/event', detail: 'is required in track events' },
      ]);
      expect(await storedFor(userId)).toEqual([]);
    });
  }

  test('/v1/track refuses one too', async () => {
    const userId = uniqueName('u');
    const res = await segment('/v1/track', { userId });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([expect.objectContaining({ pointer: '/event' })]);
    expect(await storedFor(userId)).toEqual([]);
  });

  test('POST /events/import reports its line and stores the others; a page line keeps its name', async () => {
    const userId = uniqueName('u');
    const lines = [{ type: 'track', userId, event: 'imported' }, { type: 'track', userId }, { type: 'page', userId, name: 'Home' }];
    const res = await svc.request('POST', '/events/import', {
      key: svc.privateKey,
      body: lines.map((line) => JSON.stringify(line)).join('\n'),
      headers: { 'content-type': 'application/x-ndjson' },
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ stored: 2, errorCount: 1, errors: [{ line: 2, detail: '/event is required in track events' }] });
    const stored = await storedFor(userId);
    expect(stored.map((e) => e.type)).toEqual(['track', 'page']);
    expect(stored[1]!.properties).toEqual({ name: 'Home' });
  });
});
