import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { Analytics } from '@segment/analytics-node';
import RudderAnalytics from '@rudderstack/rudder-sdk-node';
import { describeInProcess } from '../helpers/deno-service';
import { uniqueName } from '../helpers/engine-dir';
import { createWorkspace, listEvents, sendEvents, startTestService, type TestService } from '../helpers/test-service';
import { regulate, settledRegulation } from '../regulations/helpers';
import { createHmac } from 'node:crypto';
import { startWebhookReceiver } from '../fixtures/webhook-receiver';
import { eventually } from '../helpers/eventually';
import { createWebhook } from '../helpers/webhooks';

/**
 * Tracking plans on the real service: Segment's and RudderStack's plan formats (written as their
 * public documentation shows them) imported and exported as native; events from the real SDKs
 * breaking each rule kind (missing required, wrong type, unknown property, enum, pattern) in each
 * mode (record, drop, quarantine); the quarantine across a restart and replayed after a fix; bad
 * plans refused with precise problems.
 */

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(() => svc.stop());

const call = async (method: string, path: string, body?: unknown) => {
  const res = await svc.request(method, path, { key: svc.privateKey, body });
  return { status: res.status, type: res.headers.get('content-type'), body: (await res.json()) as any };
};
const putPlan = (format: string, plan: unknown, mode: string) => call('PUT', '/tracking-plan', { format, plan, mode });
const eventsOf = async (userId: string) => ((await listEvents(svc, `userId=${userId}`)).body.results as any[]).map((e) => e.event ?? `$${e.type}`).sort();
const violations = async (event?: string) => {
  const res = await call('GET', `/violations${event ? `?event=${encodeURIComponent(event)}` : ''}`);
  expect(res.status).toBe(200);
  return (res.body.results as any[]).map(({ event, path, kind, expected, actual, count, examples }) => ({ event, path, kind, expected, actual, count, examples }));
};

/** Segment's Config API tracking plan (rules.events[] with a JSON Schema of the whole event, rules.identify), as its docs write one. */
const SEGMENT_PLAN = {
  display_name: 'Checkout',
  rules: {
    events: [
      {
        name: 'Order Completed',
        version: 1,
        rules: {
          $schema: 'http://json-schema.org/draft-07/schema#',
          type: 'object',
          properties: {
            properties: {
              type: 'object',
              properties: {
                order_id: { type: 'string', pattern: '^ord_[0-9]+$' },
                revenue: { type: 'number' },
                currency: { type: 'string', enum: ['USD', 'EUR'] },
              },
              required: ['order_id', 'revenue'],
              additionalProperties: false,
            },
          },
          required: ['properties'],
        },
      },
    ],
    identify: {
      $schema: 'http://json-schema.org/draft-07/schema#',
      type: 'object',
      properties: { traits: { type: 'object', properties: { email: { type: 'string' } }, required: ['email'] } },
    },
  },
};

/** RudderStack's tracking plan (its Tracking Plan API's rules.events[], each with an eventType and a JSON Schema of the event). */
const RUDDERSTACK_PLAN = {
  name: 'Product Plan',
  rules: {
    events: [
      {
        name: 'Product Viewed',
        description: 'A product page was viewed',
        eventType: 'track',
        rules: {
          $schema: 'http://json-schema.org/draft-07/schema#',
          type: 'object',
          properties: {
            properties: {
              type: 'object',
              properties: { sku: { type: 'string', pattern: '^SKU-' }, price: { type: 'number' }, color: { type: 'string', enum: ['red', 'blue'] } },
              required: ['sku'],
              additionalProperties: false,
            },
          },
        },
      },
      { name: '', eventType: 'page', rules: { type: 'object', properties: { properties: { type: 'object' } } } },
    ],
  },
};

const EVERY_KIND = [
  { kind: 'required', path: 'properties.order_id', expected: 'present', actual: 'absent' },
  { kind: 'type', path: 'properties.revenue', expected: 'number', actual: 'string' },
  { kind: 'additionalProperties', path: 'properties.coupon', expected: 'no such property', actual: 'string' },
  { kind: 'enum', path: 'properties.currency', expected: 'one of ["USD","EUR"]', actual: 'string' },
  { kind: 'pattern', path: 'properties.order_id', expected: 'matches ^ord_[0-9]+$', actual: 'string' },
];

describe('tracking plans', () => {
  test("Segment's plan, record mode: analytics-node's events breaking each rule kind are stored and every violation counted", async () => {
    const put = await putPlan('segment', SEGMENT_PLAN, 'record');
    expect(put.status).toBe(200);
    expect(put.body.version).toBe(1);
    const got = await call('GET', '/tracking-plan');
    expect(got.body).toEqual({
      format: 'native',
      mode: 'record',
      sources: {},
      announce: false,
      version: 1,
      importedFrom: 'segment',
      createdAt: expect.any(String),
      plan: { events: { 'Order Completed': SEGMENT_PLAN.rules.events[0]!.rules.properties.properties }, identify: SEGMENT_PLAN.rules.identify.properties.traits },
    });

    const userId = uniqueName('seg');
    const analytics = new Analytics({ writeKey: svc.publicKey, host: svc.url, flushAt: 50, flushInterval: 60_000, maxRetries: 1 });
    analytics.track({ userId, event: 'Order Completed', properties: { revenue: 10 } }); // required
    analytics.track({ userId, event: 'Order Completed', properties: { order_id: 'ord_1', revenue: '10' } }); // type
    analytics.track({ userId, event: 'Order Completed', properties: { order_id: 'ord_2', revenue: 1, coupon: 'X' } }); // unknown property
    analytics.track({ userId, event: 'Order Completed', properties: { order_id: 'ord_3', revenue: 1, currency: 'GBP' } }); // enum
    analytics.track({ userId, event: 'Order Completed', properties: { order_id: 'x-1', revenue: 1 } }); // pattern
    analytics.track({ userId, event: 'Order Completed', properties: { order_id: 'ord_4', revenue: 2, currency: 'EUR' } }); // keeps the plan
    analytics.track({ userId, event: 'Unplanned', properties: { anything: 1 } }); // not in the plan
    analytics.identify({ userId, traits: { name: 'Ada' } }); // identify without its required email
    await analytics.closeAndFlush({ timeout: 30_000 });

    expect(await eventsOf(userId)).toEqual(['$identify', ...Array(6).fill('Order Completed'), 'Unplanned']);
    const found = await violations();
    expect(found).toEqual(
      expect.arrayContaining([
        ...EVERY_KIND.map((v) => ({ event: 'Order Completed', ...v, count: 1, examples: v.kind === 'enum' ? ['"GBP"'] : v.kind === 'pattern' ? ['"x-1"'] : [] })),
        { event: '$identify', path: 'traits.email', kind: 'required', expected: 'present', actual: 'absent', count: 1, examples: [] },
      ]),
    );
    expect(found).toHaveLength(6);
    expect(await violations('$identify')).toHaveLength(1);
    const today = new Date().toISOString().slice(0, 10);
    const identify = (await call('GET', `/violations?event=%24identify&dateFrom=${today}&dateTo=${today}`)).body.results[0];
    expect(identify).toMatchObject({ count: 1, days: [{ day: today, count: 1 }], firstSeen: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/) });
    expect((await call('GET', '/violations?dateTo=2000-01-01')).body.results).toEqual([]);
    const metrics = await (await svc.request('GET', '/metrics', { key: svc.privateKey })).text();
    expect(metrics).toMatch(/analytics_tracking_plan_events_total\{workspace="[^"]+",outcome="recorded"\} 6/);
    expect(metrics).toMatch(/analytics_tracking_plan_violations_total\{workspace="[^"]+",kind="required"\} 2/);
  });

  test("Segment's Public API list of rules imports as the same native plan", async () => {
    const rules = [
      { type: 'TRACK', key: 'Order Completed', version: 1, jsonSchema: SEGMENT_PLAN.rules.events[0]!.rules },
      { type: 'IDENTIFY', key: '', version: 1, jsonSchema: SEGMENT_PLAN.rules.identify },
      { type: 'PAGE', key: 'Home', version: 1, jsonSchema: { type: 'object' } },
    ];
    const put = await putPlan('segment', { rules }, 'record');
    expect(put.status).toBe(200);
    expect(put.body.ignored).toEqual(['/rules/2 (PAGE)']);
    expect(put.body.plan).toEqual({ events: { 'Order Completed': SEGMENT_PLAN.rules.events[0]!.rules.properties.properties }, identify: SEGMENT_PLAN.rules.identify.properties.traits });
  });

  test("RudderStack's plan, drop mode: rudder-sdk-node's violating events are answered as usual, counted, and not stored", async () => {
    const put = await putPlan('rudderstack', RUDDERSTACK_PLAN, 'drop');
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ version: 3, mode: 'drop', importedFrom: 'rudderstack', ignored: ['/rules/events/1 (page)'] });
    expect(Object.keys(put.body.plan.events)).toEqual(['Product Viewed']);

    const userId = uniqueName('rudder');
    const errors: unknown[] = [];
    const client = new RudderAnalytics(svc.publicKey, { dataPlaneUrl: svc.url, flushAt: 100, flushInterval: 60_000, logLevel: 'error', errorHandler: (err: unknown) => errors.push(err) } as never);
    client.track({ userId, event: 'Product Viewed', properties: { price: 3 } }); // required
    client.track({ userId, event: 'Product Viewed', properties: { sku: 'SKU-1', price: '3' } }); // type
    client.track({ userId, event: 'Product Viewed', properties: { sku: 'SKU-2', size: 'M' } }); // unknown property
    client.track({ userId, event: 'Product Viewed', properties: { sku: 'SKU-3', color: 'green' } }); // enum
    client.track({ userId, event: 'Product Viewed', properties: { sku: 'sku-4' } }); // pattern
    client.track({ userId, event: 'Product Viewed', properties: { sku: 'SKU-5', color: 'red' } }); // keeps the plan
    await client.flush();
    expect(errors).toEqual([]);
    expect(await eventsOf(userId)).toEqual(['Product Viewed']);
    const stored = (await listEvents(svc, `userId=${userId}`)).body.results[0];
    expect(stored.properties).toEqual({ sku: 'SKU-5', color: 'red' });
    expect((await violations('Product Viewed')).map(({ kind, path }) => `${kind} ${path}`).sort()).toEqual(
      ['additionalProperties properties.size', 'enum properties.color', 'pattern properties.sku', 'required properties.sku', 'type properties.price'].sort(),
    );
  });

  test('quarantine mode: violating events are kept apart, survive a restart, and a replay after the fix stores those that now pass', async () => {
    const plan = { events: { Signup: { type: 'object', properties: { plan: { type: 'string', enum: ['free', 'pro'] }, seats: { type: 'integer' } }, required: ['plan'] } } };
    expect((await putPlan('native', plan, 'quarantine')).status).toBe(200);
    const userId = uniqueName('quarantine');
    const sent = await sendEvents(svc, [
      { type: 'track', userId, event: 'Signup', properties: { plan: 'team' }, messageId: `${userId}-team` },
      { type: 'track', userId, event: 'Signup', properties: { plan: 'pro', seats: 'many' } },
      { type: 'track', userId, event: 'Signup', properties: { plan: 'free' } },
    ]);
    // An SDK's retry of a quarantined event (its messageId again) is one event in quarantine.
    await sendEvents(svc, [{ type: 'track', userId, event: 'Signup', properties: { plan: 'team' }, messageId: `${userId}-team` }]);
    // The sender sees every event answered, as collection always answers.
    expect(sent.results).toHaveLength(3);
    expect(await eventsOf(userId)).toEqual(['Signup']);
    const listed = await call('GET', '/quarantine');
    expect(listed.status).toBe(200);
    expect(listed.body.total).toBe(2);
    expect(listed.body.results.map((q: any) => q.event.properties).sort((a: any, b: any) => a.plan.localeCompare(b.plan))).toEqual([{ plan: 'pro', seats: 'many' }, { plan: 'team' }]);
    expect(listed.body.results.find((q: any) => q.event.properties.plan === 'team').violations).toEqual([{ event: 'Signup', path: 'properties.plan', kind: 'enum', expected: 'one of ["free","pro"]', actual: 'string', example: '"team"' }]);

    // A restart on the same data: nothing quarantined is lost, and the plan is still enforced.
    const settings = svc.settings;
    await svc.stop();
    svc = await startTestService(settings);
    expect((await call('GET', '/quarantine')).body.total).toBe(2);
    expect((await call('GET', '/tracking-plan')).body.mode).toBe('quarantine');

    // The plan is fixed for one of them (team is a plan now); seats stays an integer.
    const fixed = { events: { Signup: { ...plan.events.Signup, properties: { ...plan.events.Signup.properties, plan: { type: 'string', enum: ['free', 'pro', 'team'] } } } } };
    expect((await putPlan('native', fixed, 'quarantine')).body.version).toBe(5);
    const replay = await call('POST', '/quarantine/replay');
    expect(replay.body).toEqual({ replayed: 1, remaining: 1 });
    expect(await eventsOf(userId)).toEqual(['Signup', 'Signup']);
    const left = await call('GET', '/quarantine');
    expect(left.body.results.map((q: any) => q.event.properties)).toEqual([{ plan: 'pro', seats: 'many' }]);
  });

  test("an erasure deletes the subject's quarantined events and clears the violations' example values", async () => {
    expect((await putPlan('native', { events: { Paid: { type: 'object', properties: { email: { type: 'string', pattern: '@' } } } } }, 'quarantine')).status).toBe(200);
    const erased = uniqueName('erased');
    const kept = uniqueName('kept');
    await sendEvents(svc, [
      { type: 'track', userId: erased, event: 'Paid', properties: { email: 'ada-at-example.com' } },
      { type: 'track', userId: kept, event: 'Paid', properties: { email: 'bob-at-example.com' } },
    ]);
    expect((await violations('Paid'))[0]!.examples).toEqual(['"ada-at-example.com"', '"bob-at-example.com"']);
    const id = await regulate(svc, svc.privateKey, 'DELETE', 'userId', [erased]);
    expect((await settledRegulation(svc, svc.privateKey, id)).status).toBe('finished');
    const left = (await call('GET', '/quarantine?limit=1000')).body.results.filter((q: any) => q.event.event === 'Paid');
    expect(left.map((q: any) => q.event.userId)).toEqual([kept]);
    expect(await violations('Paid')).toEqual([{ event: 'Paid', path: 'properties.email', kind: 'pattern', expected: 'matches @', actual: 'string', count: 2, examples: [] }]);
  });

  test('with announce, each new kind of violation is stored once as a $tracking_plan_violation event, which a webhook receives signed', async () => {
    const receiver = await startWebhookReceiver();
    try {
      const hook = await createWebhook(svc, { url: `${receiver.url}/hook`, eventNames: ['$tracking_plan_violation'] });
      const put = await call('PUT', '/tracking-plan', { format: 'native', plan: { events: { Rated: { type: 'object', properties: { stars: { type: 'integer' } }, required: ['stars'] } } }, mode: 'record', announce: true });
      expect(put.body).toMatchObject({ announce: true });
      const userId = uniqueName('announce');
      // Two kinds (a wrong type, a missing property), the first sent twice: two announcements.
      await sendEvents(svc, [
        { type: 'track', userId, event: 'Rated', properties: { stars: 'five' } },
        { type: 'track', userId, event: 'Rated', properties: { stars: 'four' } },
        { type: 'track', userId, event: 'Rated', properties: {} },
      ]);
      await violations('Rated');
      await sendEvents(svc, [{ type: 'track', userId, event: 'Rated', properties: { stars: 'three' } }]);
      await violations('Rated');
      const announced = () => receiver.requests.flatMap((r) => r.json.data ?? [r.json]).filter((e: any) => e.event === '$tracking_plan_violation');
      await eventually('both announcements are delivered', async () => announced().length >= 2);
      expect(announced().map((e: any) => e.properties).sort((a: any, b: any) => a.kind.localeCompare(b.kind))).toEqual([
        { event: 'Rated', path: 'properties.stars', kind: 'required', expected: 'present', actual: 'absent', planVersion: put.body.version },
        { event: 'Rated', path: 'properties.stars', kind: 'type', expected: 'integer', actual: 'string', planVersion: put.body.version },
      ]);
      const sent = receiver.requests[0]!;
      const key = Buffer.from(hook.secret.slice('whsec_'.length), 'base64');
      expect(sent.headers['webhook-signature']).toBe(`v1,${createHmac('sha256', key).update(`${sent.headers['webhook-id']}.${sent.headers['webhook-timestamp']}.${sent.body}`).digest('base64')}`);
      expect((await listEvents(svc, 'event=%24tracking_plan_violation')).body.total).toBe(2);
    } finally {
      await receiver.stop();
    }
  });

  test("a door's own mode: Plausible's events dropped while POST /events records", async () => {
    const domain = `${uniqueName('plan-site').toLowerCase().replace(/_/g, '-')}.example`;
    const ws = await createWorkspace(svc, { name: uniqueName('plan-doors'), siteDomains: [domain] });
    const plan = { events: { Signup: { type: 'object', required: ['plan'] } } };
    const put = await svc.request('PUT', '/tracking-plan', { key: ws.privateApiKey, body: { format: 'native', plan, mode: 'record', sources: { plausible: 'drop' } } });
    expect(put.status).toBe(200);
    expect(((await put.json()) as any).sources).toEqual({ plausible: 'drop' });
    const chrome = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
    const plausible = await fetch(`${svc.url}/api/event`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain', 'user-agent': chrome, 'x-forwarded-for': '8.8.8.8' },
      body: JSON.stringify({ name: 'Signup', url: `https://${domain}/join`, domain, props: { source: 'ad' } }),
    });
    expect(plausible.status).toBe(202);
    await sendEvents(svc, [{ type: 'track', userId: 'u1', event: 'Signup', properties: { source: 'ad' } }], ws.publicApiKey);
    const stored = (await listEvents(svc, 'event=Signup', ws.privateApiKey)).body.results as any[];
    expect(stored.map((e) => e.context?.library?.name ?? 'POST /events')).toEqual(['POST /events']);
    const counted = ((await (await svc.request('GET', '/violations', { key: ws.privateApiKey })).json()) as any).results;
    expect(counted.map((v: any) => [v.path, v.kind, v.count])).toEqual([['properties.plan', 'required', 2]]);
    // Imports take the import door's mode: quarantined, and counted apart from repeats.
    const modes = await svc.request('PUT', '/tracking-plan', { key: ws.privateApiKey, body: { format: 'native', plan, mode: 'record', sources: { import: 'quarantine' } } });
    expect(modes.status).toBe(200);
    const ndjson = [{ type: 'track', userId: 'u2', event: 'Signup', properties: {} }, { type: 'track', userId: 'u2', event: 'Signup', properties: { plan: 'pro' } }].map((e) => JSON.stringify(e)).join('\n');
    const imported = await svc.request('POST', '/events/import', { key: ws.privateApiKey, body: ndjson, headers: { 'content-type': 'application/x-ndjson' } });
    expect(await imported.json()).toMatchObject({ stored: 1, heldBack: 1, duplicates: 0, errorCount: 0 });
    expect(((await (await svc.request('GET', '/quarantine', { key: ws.privateApiKey })).json()) as any).total).toBe(1);
    const badDoor = await svc.request('PUT', '/tracking-plan', { key: ws.privateApiKey, body: { format: 'native', plan, mode: 'record', sources: { tracker: 'drop' } } });
    expect(badDoor.status).toBe(400);
    expect(((await badDoor.json()) as any).errors).toEqual([{ pointer: '/sources/tracker', detail: 'is not a known field' }]);
  });

  test('bad plans get 400 naming each problem, and change nothing', async () => {
    const before = (await call('GET', '/tracking-plan')).body.version;
    const cases: Array<[string, unknown, string, string[]]> = [
      ['native', { events: [] }, 'record', ['/plan/events']],
      ['native', { events: { A: 'x' }, extra: 1 }, 'record', ['/plan/extra', '/plan/events/A']],
      ['native', { events: { 'a/b': { type: 'nonsense' } } }, 'record', ['/plan/events/a~1b']],
      // A pattern that repeats a repetition takes exponential time on a crafted value: refused.
      ['native', { events: { R: { properties: { id: { type: 'string', pattern: '^(a+)+$' } } } } }, 'record', ['/plan/events/R']],
      ['segment', { rules: { events: [{ rules: {} }] } }, 'record', ['/plan/rules/events/0']],
      ['segment', {}, 'record', ['/plan/rules']],
      ['rudderstack', { rules: { events: [{ name: 'A', rules: { properties: { properties: 3 } } }] } }, 'record', ['/plan/rules/events/0/rules/properties/properties']],
    ];
    for (const [format, plan, mode, pointers] of cases) {
      const res = await putPlan(format, plan, mode);
      expect(res.status).toBe(400);
      expect(res.type).toContain('application/problem+json');
      expect(res.body.errors.map((e: any) => e.pointer).sort()).toEqual(pointers.sort());
    }
    const redos = await putPlan('native', { events: { R: { properties: { id: { type: 'string', pattern: '^(a+)+$' } } } } }, 'record');
    expect(redos.body.errors[0].detail).toContain('repeats a repetition');
    const badMode = await putPlan('native', { events: {} }, 'block');
    expect(badMode.status).toBe(400);
    expect(JSON.stringify(badMode.body)).toContain('must be record, drop or quarantine');
    expect((await call('GET', '/tracking-plan')).body.version).toBe(before);
  });
});

describeInProcess('several processes on one ClickHouse', () => {
  test('a plan set through one process is enforced by another after its refresh', async () => {
    const first = await startTestService({ INGEST_ACK: 'loaded' });
    const second = await startTestService({ ...first.settings, WORKSPACE_REFRESH_MS: '100' });
    try {
      const put = await first.request('PUT', '/tracking-plan', { key: first.privateKey, body: { format: 'native', plan: { events: { Shared: { type: 'object', required: ['x'] } } }, mode: 'drop' } });
      expect(put.status).toBe(200);
      await eventually('the second process counts a violation of the plan', async () => {
        await sendEvents(second, [{ type: 'track', userId: uniqueName('early'), event: 'Shared', properties: {} }]);
        const res = await second.request('GET', '/violations?event=Shared', { key: second.privateKey });
        return ((await res.json()) as any).results.length > 0;
      });
      const userId = uniqueName('late');
      await sendEvents(second, [{ type: 'track', userId, event: 'Shared', properties: {} }]);
      expect((await listEvents(first, `userId=${userId}`)).body.total).toBe(0);
    } finally {
      await second.stop();
      await first.stop();
    }
  });
});
