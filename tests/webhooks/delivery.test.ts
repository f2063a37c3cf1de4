import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { createHmac } from 'node:crypto';
import { testInProcess } from '../helpers/deno-service';
import { uniqueName } from '../helpers/engine-dir';
import { createWorkspace, listEvents, sendEvents, startTestService, type CreatedWorkspace, type TestService } from '../helpers/test-service';
import { createWebhook, deliveriesOf } from '../helpers/webhooks';
import { startWebhookReceiver, type WebhookReceiver } from '../fixtures/webhook-receiver';

let svc: TestService;
const receivers: WebhookReceiver[] = [];
beforeAll(async () => {
  svc = await startTestService({
    WEBHOOK_RETRY_SCHEDULE: '50ms,50ms,50ms,50ms,50ms,50ms',
    WEBHOOK_BLOCKING_RETRIES: '2',
    WEBHOOK_BATCH_SIZE: '10',
  });
});
afterAll(async () => {
  await svc.stop();
  await Promise.all(receivers.map((r) => r.stop()));
});

async function receiver(answer?: Parameters<typeof startWebhookReceiver>[0]): Promise<WebhookReceiver> {
  const r = await startWebhookReceiver(answer);
  receivers.push(r);
  return r;
}

/** Each test has a workspace of its own, so its events reach only its own webhooks. */
const room = () => createWorkspace(svc, { name: uniqueName('Delivery') });
const send = (ws: CreatedWorkspace, events: unknown[]) => sendEvents(svc, events, ws.publicApiKey);

describe('matching', () => {
  test('by eventTypes and eventNames, with * as wildcard', async () => {
    const ws = await room();
    const cases = {
      all: { eventTypes: ['*'], eventNames: ['*'] },
      tracks: { eventTypes: ['track'] },
      signups: { eventNames: ['signup'] },
      pickedPairs: { eventTypes: ['track', 'page'], eventNames: ['signup', 'home'] },
      people: { eventTypes: ['identify', 'group'] },
    };
    const hooks: Record<string, WebhookReceiver> = {};
    for (const [name, filter] of Object.entries(cases)) {
      hooks[name] = await receiver();
      await createWebhook(svc, { url: `${hooks[name]!.url}/${name}`, ...filter }, ws.privateApiKey);
    }
    const { results } = await send(ws, [
      { type: 'track', event: 'signup' },
      { type: 'track', event: 'buy' },
      { type: 'page', event: 'home' },
      { type: 'page', event: 'pricing' },
      { type: 'identify', userId: 'u1' },
      { type: 'group', groupId: 'g1' },
      { type: 'track', event: 'signup' },
      { type: 'identify', userId: 'u2' },
    ]);
    const uuid = (i: number) => results[i]!.uuid;
    const expected: Record<string, unknown[]> = {
      all: [0, 1, 2, 3, 4, 5, 6, 7].map(uuid),
      tracks: [0, 1, 6].map(uuid),
      signups: [0, 6].map(uuid),
      pickedPairs: [0, 2, 6].map(uuid),
      people: [4, 5, 7].map(uuid),
    };
    for (const [name, uuids] of Object.entries(expected)) {
      // Each list ends with the last event of its kind sent, so a wrong extra would show within it.
      await hooks[name]!.waitFor(uuids.length);
      expect(hooks[name]!.events().map((e) => e.uuid)).toEqual(uuids);
    }
  });
});

describe('payloads', () => {
  test('without batching one event per request; with batching up to WEBHOOK_BATCH_SIZE (10)', async () => {
    const ws = await room();
    const single = await receiver();
    const batched = await receiver();
    await createWebhook(svc, { url: single.url }, ws.privateApiKey);
    await createWebhook(svc, { url: batched.url, enableBatching: true }, ws.privateApiKey);
    const { results } = await send(ws, Array.from({ length: 25 }, (_, i) => ({ type: 'track', event: 'batch', properties: { i } })));
    await single.waitFor(25);
    await batched.waitFor(3);
    expect(single.requests.map((r) => r.json.data.length)).toEqual(Array(25).fill(1));
    expect(batched.requests.map((r) => r.json.data.length)).toEqual([10, 10, 5]);
    expect(batched.events().map((e) => e.uuid)).toEqual(results.map((e) => e.uuid));
  });

  test('{ data: [Event] } with the same event objects as GET /events', async () => {
    const ws = await room();
    const r = await receiver();
    await createWebhook(svc, { url: r.url }, ws.privateApiKey);
    await send(ws, [
      { type: 'track', event: 'full', userId: 'u1', anonymousId: 'a1', groupId: 'g1', instanceId: 'i1', properties: { plan: 'pro' }, context: { ip: '203.0.113.7' }, traits: { x: 1 }, timestamp: '2024-05-01T12:00:00.123456Z' },
    ]);
    await r.waitFor(1);
    const listed = await listEvents(svc, 'event=full', ws.privateApiKey);
    expect(r.requests[0]!.json).toEqual({ data: listed.body.results });
    expect(r.requests[0]!.headers['content-type']).toBe('application/json');
  });

  test('flatten: one level of keys joined with _, as Trench, numbers exact', async () => {
    const ws = await room();
    const r = await receiver();
    await createWebhook(svc, { url: r.url, flatten: true }, ws.privateApiKey);
    const body = '{"events":[{"type":"track","event":"flat","properties":{"plan":"pro","tags":["a","b"],"nested":{"deep":true},"empty":{},"none":[],"id":18446744073709551615}}]}';
    const res = await svc.request('POST', '/events', { key: ws.publicApiKey, body });
    const sent = ((await res.json()) as any).results[0];
    await r.waitFor(1);
    expect(r.requests[0]!.json).toEqual({
      data_0_uuid: sent.uuid,
      data_0_type: 'track',
      data_0_event: 'flat',
      data_0_properties_plan: 'pro',
      data_0_properties_tags_0: 'a',
      data_0_properties_tags_1: 'b',
      data_0_properties_nested_deep: true,
      data_0_properties_empty: {},
      data_0_properties_none: [],
      data_0_properties_id: 18446744073709551615,
      data_0_timestamp: sent.timestamp,
      data_0_parsedAt: sent.parsedAt,
    });
    expect(r.requests[0]!.body).toContain('"data_0_properties_id":18446744073709551615');
  });

  test('Standard Webhooks headers; the signature verifies with the secret', async () => {
    const ws = await room();
    const r = await receiver();
    const hook = await createWebhook(svc, { url: r.url }, ws.privateApiKey);
    const { results } = await send(ws, [{ type: 'track', event: 'signed' }]);
    await r.waitFor(1);
    const { headers, body } = r.requests[0]!;
    expect(headers['webhook-id']).toBe(`msg_${results[0]!.uuid}`);
    expect(Math.abs(Number(headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(300);
    const key = Buffer.from(hook.secret.slice('whsec_'.length), 'base64');
    const expected = createHmac('sha256', key).update(`${headers['webhook-id']}.${headers['webhook-timestamp']}.${body}`).digest('base64');
    expect(headers['webhook-signature']).toBe(`v1,${expected}`);
    // A signature made with another secret does not match.
    const wrong = createHmac('sha256', Buffer.alloc(32)).update(`${headers['webhook-id']}.${headers['webhook-timestamp']}.${body}`).digest('base64');
    expect(headers['webhook-signature']).not.toBe(`v1,${wrong}`);
  });
});

describe('retries', () => {
  test('500 twice then 200: three attempts of the same delivery, with the same webhook-id', async () => {
    const ws = await room();
    const r = await receiver((n) => (n <= 2 ? new Response('busy', { status: 500 }) : new Response('ok')));
    await createWebhook(svc, { url: r.url }, ws.privateApiKey);
    const { results } = await send(ws, [{ type: 'track', event: 'flaky' }]);
    await r.waitFor(3);
    expect(r.requests.map((q) => q.headers['webhook-id'])).toEqual(Array(3).fill(`msg_${results[0]!.uuid}`));
    expect(r.requests.map((q) => q.json.data[0].uuid)).toEqual(Array(3).fill(results[0]!.uuid));
  });

  test('a 400 is not retried: the delivery is recorded as failed and the next event goes out', async () => {
    const ws = await room();
    const r = await receiver((n) => (n === 1 ? new Response('bad payload', { status: 400 }) : new Response('ok')));
    const hook = await createWebhook(svc, { url: r.url }, ws.privateApiKey);
    const { results } = await send(ws, [{ type: 'track', event: 'rejected' }, { type: 'track', event: 'accepted' }]);
    await r.waitFor(2);
    expect(r.requests.map((q) => q.json.data[0].uuid)).toEqual([results[0]!.uuid, results[1]!.uuid]);
    const page = await deliveriesOf(svc, hook.uuid, '', ws.privateApiKey);
    expect(page.total).toBe(1);
    expect(page.results[0]).toMatchObject({
      id: `msg_${results[0]!.uuid}`,
      status: 'failed',
      eventUuids: [results[0]!.uuid],
      attempts: 1,
      lastStatusCode: 400,
      lastError: 'status 400',
      nextAttemptAt: null,
      holdsQueue: false,
    });
    expect((await deliveriesOf(svc, hook.uuid, 'status=retrying', ws.privateApiKey)).total).toBe(0);
  });

  test("Retry-After is honoured over the schedule's 50 ms: the delivery waits an hour, holding the queue", async () => {
    const ws = await room();
    const r = await receiver(() => new Response('slow down', { status: 429, headers: { 'retry-after': '3600' } }));
    const hook = await createWebhook(svc, { url: r.url }, ws.privateApiKey);
    const { results } = await send(ws, [{ type: 'track', event: 'throttled' }, { type: 'track', event: 'behind' }]);
    await r.waitFor(1);
    let page: any;
    do page = await deliveriesOf(svc, hook.uuid, '', ws.privateApiKey);
    while (page.results.length === 0);
    expect(page.results[0]).toMatchObject({ status: 'retrying', attempts: 1, lastStatusCode: 429, holdsQueue: true, eventUuids: [results[0]!.uuid] });
    expect(Date.parse(page.results[0].nextAttemptAt) - Date.now()).toBeGreaterThan(59 * 60_000);
    expect(r.requests).toHaveLength(1);
  });

  test('after the blocking retries a failing delivery is set aside, the queue moves on, and it is retried to the end', async () => {
    const ws = await room();
    const r = await receiver((_n, json) => (json.data[0].event === 'stuck' ? new Response('nope', { status: 503 }) : new Response('ok')));
    const hook = await createWebhook(svc, { url: r.url }, ws.privateApiKey);
    const { results } = await send(ws, [{ type: 'track', event: 'stuck' }, { type: 'track', event: 'next' }]);
    // 1 attempt + 6 retries of the stuck event, and the next event once.
    await r.waitFor(8);
    const events = r.requests.map((q) => q.json.data[0].event);
    // Three attempts hold the queue (the first and two blocking retries); then the next event goes.
    expect(events.slice(0, 4)).toEqual(['stuck', 'stuck', 'stuck', 'next']);
    expect(events.filter((e) => e === 'stuck')).toHaveLength(7);
    let page: any;
    do page = await deliveriesOf(svc, hook.uuid, 'status=failed', ws.privateApiKey);
    while (page.results.length === 0);
    expect(page.results[0]).toMatchObject({ status: 'failed', attempts: 7, lastStatusCode: 503, eventUuids: [results[0]!.uuid], holdsQueue: false });
  });
});

describe('order and stopping', () => {
  test('a burst of 1,000 events arrives in acceptance order, each once', async () => {
    const ws = await room();
    const r = await receiver();
    await createWebhook(svc, { url: r.url }, ws.privateApiKey);
    await Promise.all(
      Array.from({ length: 20 }, (_, batch) => send(ws, Array.from({ length: 50 }, (_, i) => ({ type: 'track', event: 'burst', properties: { batch, i } })))),
    );
    await r.waitFor(1000);
    const accepted = (await listEvents(svc, 'event=burst&orderByField=parsedAt&orderByDirection=asc&limit=1000', ws.privateApiKey)).body;
    expect(accepted.total).toBe(1000);
    expect(r.events().map((e) => e.uuid)).toEqual(accepted.results.map((e: any) => e.uuid));
    // Within each request, its events kept the order they were sent in.
    const received = r.events();
    for (let batch = 0; batch < 20; batch++) {
      expect(received.filter((e) => e.properties.batch === batch).map((e) => e.properties.i)).toEqual(Array.from({ length: 50 }, (_, i) => i));
    }
  });

  test('deleting a webhook stops its deliveries', async () => {
    const ws = await room();
    const doomed = await receiver();
    const control = await receiver();
    const hook = await createWebhook(svc, { url: doomed.url }, ws.privateApiKey);
    await send(ws, [{ type: 'track', event: 'before-delete' }]);
    await doomed.waitFor(1);
    expect((await svc.request('DELETE', `/webhooks/${hook.uuid}`, { key: ws.privateApiKey })).status).toBe(200);
    await createWebhook(svc, { url: control.url }, ws.privateApiKey);
    await send(ws, [{ type: 'track', event: 'after-delete' }]);
    await control.waitFor(1);
    expect(doomed.requests).toHaveLength(1);
  });

  testInProcess('deleting its workspace stops a webhook, even one busy retrying', async () => {
    const ws = await room();
    const failing = await receiver(() => new Response('down', { status: 500 }));
    await createWebhook(svc, { url: failing.url }, ws.privateApiKey);
    await send(ws, [{ type: 'track', event: 'orphan' }]);
    await failing.waitFor(2);
    expect((await svc.request('DELETE', `/workspaces/${ws.workspaceId}`, { key: svc.privateKey })).status).toBe(200);
    const attempts = failing.requests.length;
    expect(svc.webhooks.list(ws.workspaceId)).toEqual([]);
    // Another workspace's delivery comes and goes; meanwhile a running actor would have retried.
    const other = await room();
    const control = await receiver();
    await createWebhook(svc, { url: control.url }, other.privateApiKey);
    await send(other, Array.from({ length: 5 }, () => ({ type: 'track', event: 'control' })));
    await control.waitFor(5);
    expect(failing.requests).toHaveLength(attempts);
  });
});
