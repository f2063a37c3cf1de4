import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { listEvents, sendEvents, startTestService, type TestService } from '../helpers/test-service';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({ MAX_EVENTS_PER_REQUEST: '5', MAX_EVENT_BYTES: '1024', MAX_BODY_BYTES: '65536' });
});
afterAll(() => svc.stop());

async function post(body: unknown, headers?: Record<string, string>) {
  const res = await svc.request('POST', '/events', { key: svc.publicKey, body, headers });
  return { status: res.status, type: res.headers.get('content-type'), body: (await res.json()) as any };
}

async function total(): Promise<number> {
  return (await listEvents(svc, 'limit=0')).body.total;
}

describe('POST /events accepts', () => {
  test('a batch, answering 201 with uuid, timestamp and parsedAt filled in', async () => {
    const res = await post({
      events: [
        { type: 'track', event: 'signup', userId: 'u1', properties: { plan: 'pro' } },
        { type: 'identify', userId: 'u1', traits: { email: 'a@example.com' }, timestamp: '2024-05-01T12:00:00.123456+02:00' },
      ],
    });
    expect(res.status).toBe(201);
    expect(res.body.limit).toBe(2);
    expect(res.body.offset).toBe(0);
    expect(res.body.total).toBe(2);
    const [track, identify] = res.body.results;
    expect(track.uuid).toMatch(/^[0-9a-f-]{36}$/);
    expect(track).toMatchObject({ type: 'track', event: 'signup', userId: 'u1', properties: { plan: 'pro' } });
    expect(track.timestamp).toBe(track.parsedAt);
    expect(identify.timestamp).toBe('2024-05-01T10:00:00.123456Z');
    expect(identify.traits).toEqual({ email: 'a@example.com' });
    expect('event' in identify).toBe(false);
  });

  test('Segment fields it does not store, and ignores an input uuid', async () => {
    const res = await post({ events: [{ type: 'page', uuid: 'not-ours', sentAt: '2024-01-01T00:00:00Z', integrations: {}, channel: 'server' }] });
    expect(res.status).toBe(201);
    expect(res.body.results[0].uuid).not.toBe('not-ours');
    expect(Object.keys(res.body.results[0]).sort()).toEqual(['parsedAt', 'timestamp', 'type', 'uuid']);
  });

  test('numbers exactly as sent, beyond what a JavaScript number holds (digits, range), in the 201 and in GET /events', async () => {
    const body = '{"events":[{"type":"track","event":"exact","properties":{"id":18446744073709551615,"d":0.12345678901234567890,"x":1.0}}]}';
    const res = await svc.request('POST', '/events', { key: svc.publicKey, body });
    expect(res.status).toBe(201);
    const exact = '"properties":{"id":18446744073709551615,"d":0.12345678901234567890,"x":1.0}';
    expect(await res.text()).toContain(exact);
    const listed = await svc.request('GET', '/events?event=exact', { key: svc.privateKey });
    expect(await listed.text()).toContain(exact);
    // Beyond a double's range: not Infinity (then null) or 0, but the number as written.
    const range = '"properties":{"big":1e309,"tiny":-1E-400}';
    const ranged = await svc.request('POST', '/events', { key: svc.publicKey, body: `{"events":[{"type":"track","event":"exact-range",${range}}]}` });
    expect(await ranged.text()).toContain(range);
    expect(await (await svc.request('GET', '/events?event=exact-range', { key: svc.privateKey })).text()).toContain(range);
  });

  test('timestamps before 1970 are stored and read back exactly', async () => {
    const sent = await sendEvents(svc, [
      { type: 'track', event: 'old-times', timestamp: '1905-03-01T23:59:59.999001Z' },
      { type: 'track', event: 'old-times', timestamp: '1969-12-31T23:59:59.5Z' },
    ]);
    expect(sent.results.map((e) => e.timestamp)).toEqual(['1905-03-01T23:59:59.999001Z', '1969-12-31T23:59:59.500Z']);
    const { body } = await listEvents(svc, 'event=old-times&orderByDirection=asc&startDate=1900-01-01&endDate=1969-12-31T23:59:59.5Z');
    expect(body.results.map((e: any) => e.timestamp)).toEqual(['1905-03-01T23:59:59.999001Z', '1969-12-31T23:59:59.500Z']);
  });

  test('events a GET sent right after the 201 sees (read-your-writes)', async () => {
    const sent = await sendEvents(svc, [{ type: 'track', event: 'ryw', userId: 'ryw-user' }]);
    const { body } = await listEvents(svc, 'userId=ryw-user');
    expect(body.results.map((e: any) => e.uuid)).toEqual([sent.results[0]!.uuid]);
  });
});

describe('POST /events refuses, storing nothing', () => {
  const cases: Array<[string, unknown, string, string]> = [
    ['a missing type', { events: [{ event: 'x' }] }, '/events/0/type', 'is required'],
    ['an unknown type', { events: [{ type: 'screen' }] }, '/events/0/type', 'must be one of page, track, identify, group'],
    ['properties that are an array', { events: [{ type: 'track', properties: [] }] }, '/events/0/properties', 'must be a JSON object'],
    ['traits that are a string', { events: [{ type: 'identify', traits: 'x' }] }, '/events/0/traits', 'must be a JSON object'],
    ['context that is null', { events: [{ type: 'page', context: null }] }, '/events/0/context', 'must be a JSON object'],
    ['a timestamp that is not ISO 8601', { events: [{ type: 'page', timestamp: 'yesterday' }] }, '/events/0/timestamp', 'ISO 8601'],
    ['an impossible date', { events: [{ type: 'page', timestamp: '2024-02-30T00:00:00Z' }] }, '/events/0/timestamp', 'ISO 8601'],
    ['a userId that is a number', { events: [{ type: 'page', userId: 42 }] }, '/events/0/userId', 'must be a string'],
    ['an empty events array', { events: [] }, '/events', 'must be an array of 1 to 5 events'],
    ['more events than the limit', { events: Array(6).fill({ type: 'page' }) }, '/events', 'must be an array of 1 to 5 events'],
    ['events that is not an array', { events: { type: 'page' } }, '/events', 'must be an array'],
    ['a body without events', {}, '/events', 'is required'],
  ];
  for (const [what, body, pointer, detail] of cases) {
    test(`${what}: 400 naming ${pointer}`, async () => {
      const before = await total();
      const res = await post(body);
      expect(res.status).toBe(400);
      expect(res.type).toBe('application/problem+json');
      expect(res.body.errors).toContainEqual({ pointer, detail: expect.stringContaining(detail) });
      expect(await total()).toBe(before);
    });
  }

  test('a batch with invalid events among valid ones: 400 listing each by index, nothing stored', async () => {
    const before = await total();
    const res = await post({
      events: [{ type: 'track', event: 'ok' }, { type: 'nope' }, { type: 'page' }, { type: 'page', timestamp: 'x' }],
    });
    expect(res.status).toBe(400);
    expect(res.body.errors.map((e: any) => e.pointer)).toEqual(['/events/1/type', '/events/3/timestamp']);
    expect(await total()).toBe(before);
  });

  test('an event over the per-event size: 413 naming it', async () => {
    const before = await total();
    const res = await post({ events: [{ type: 'page' }, { type: 'track', properties: { blob: 'x'.repeat(2000) } }] });
    expect(res.status).toBe(413);
    expect(res.body.errors).toEqual([{ pointer: '/events/1', detail: expect.stringContaining('the limit is 1024') }]);
    expect(await total()).toBe(before);
  });

  test('a body over the size limit: 413 problem+json', async () => {
    const res = await post({ events: [{ type: 'page', properties: { blob: 'x'.repeat(70_000) } }] });
    expect(res.status).toBe(413);
    expect(res.type).toBe('application/problem+json');
    expect(res.body).toMatchObject({ status: 413, title: 'Payload Too Large' });
  });

  test('a body that is not JSON: 415', async () => {
    const res = await svc.request('POST', '/events', { key: svc.publicKey, body: 'type=page', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(res.status).toBe(415);
    expect(res.headers.get('content-type')).toBe('application/problem+json');
    expect(((await res.json()) as any).detail).toContain('application/json');
  });

  test('malformed JSON: 400', async () => {
    const res = await post('{"events": [');
    expect(res.status).toBe(400);
    expect(res.body.detail).toContain('not valid JSON');
  });
});
