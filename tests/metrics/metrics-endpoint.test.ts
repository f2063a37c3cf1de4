import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { startWebhookReceiver, type WebhookReceiver } from '../fixtures/webhook-receiver';
import { eventually } from '../helpers/eventually';
import { parseExposition, sampleValue, type Family } from '../helpers/exposition';
import { uniqueName } from '../helpers/engine-dir';
import { createWorkspace, listEvents, sendEvents, startTestService, type TestService } from '../helpers/test-service';
import { createWebhook } from '../helpers/webhooks';

const METRICS_TOKEN = 'metrics-token-for-tests';

let svc: TestService;
let workspace: string;
beforeAll(async () => {
  // A long retry schedule: a failed delivery stays pending for the whole test.
  svc = await startTestService({ METRICS_TOKEN, WEBHOOK_RETRY_SCHEDULE: '1h' });
  workspace = svc.config.defaultWorkspaceDatabase;
});
afterAll(() => svc.stop());

/** GET /metrics with the admin key; fails unless it answers valid exposition text. */
async function scrape(): Promise<Map<string, Family>> {
  const res = await svc.request('GET', '/metrics', { key: svc.privateKey });
  expect(res.status).toBe(200);
  return parseExposition(await res.text());
}

/** The value of one sample in a fresh scrape. */
async function current(name: string, labels: Record<string, string> = {}): Promise<number> {
  return sampleValue(await scrape(), name, labels);
}

describe('GET /metrics access', () => {
  test('without a key: 401 with WWW-Authenticate', async () => {
    const res = await svc.request('GET', '/metrics');
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toContain('Bearer');
  });

  test('an unknown key: 401', async () => {
    expect((await svc.request('GET', '/metrics', { key: 'not-a-key-we-know' })).status).toBe(401);
  });

  test('a public key: 403', async () => {
    expect((await svc.request('GET', '/metrics', { key: svc.publicKey })).status).toBe(403);
  });

  for (const [who, key] of [
    ['the admin key', () => svc.privateKey],
    ['METRICS_TOKEN', () => METRICS_TOKEN],
  ] as const) {
    test(`${who}: 200, Prometheus text format 0.0.4`, async () => {
      const res = await svc.request('GET', '/metrics', { key: key() });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
      expect(parseExposition(await res.text()).size).toBeGreaterThan(0);
    });
  }

  test('METRICS_TOKEN opens /metrics only', async () => {
    expect((await svc.request('GET', '/events', { key: METRICS_TOKEN })).status).toBe(401);
  });
});

describe('counters move', () => {
  test('accepted events grow by the number sent, per workspace; each insert is in the flush histograms', async () => {
    const before = await scrape();
    await sendEvents(svc, [{ type: 'track', event: 'a' }, { type: 'page' }, { type: 'identify', userId: 'u1' }]);
    // A read waits for the events to be loaded into the engine (the inserts the histograms count).
    expect((await listEvents(svc)).status).toBe(200);
    const after = await scrape();
    const delta = (name: string, labels: Record<string, string> = {}) => sampleValue(after, name, labels) - sampleValue(before, name, labels);
    expect(delta('analytics_events_accepted_total', { workspace })).toBe(3);
    expect(delta('analytics_ingest_flush_rows_count')).toBeGreaterThanOrEqual(1);
    expect(delta('analytics_ingest_flush_rows_sum')).toBeGreaterThanOrEqual(3);
    expect(delta('analytics_ingest_flush_duration_seconds_count')).toBe(delta('analytics_ingest_flush_rows_count'));
    expect(sampleValue(after, 'analytics_ingest_queue_events')).toBeGreaterThanOrEqual(0);
  });

  test('a 400 counts the events of the refused batch as rejected, by workspace and status', async () => {
    const rejected = { workspace, status: '400' };
    const before = await current('analytics_events_rejected_total', rejected);
    const res = await svc.request('POST', '/events', { key: svc.publicKey, body: { events: [{ type: 'track' }, { type: 'nope' }] } });
    expect(res.status).toBe(400);
    // Counted once the answer has gone out.
    await eventually('2 rejected events counted', async () => (await current('analytics_events_rejected_total', rejected)) === before + 2);
  });

  test('the Segment routes count their calls as accepted and rejected too', async () => {
    const before = await scrape();
    const segment = (body: unknown) =>
      fetch(`${svc.url}/v1/batch`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${svc.publicKey}` }, body: JSON.stringify(body) });
    expect((await segment({ batch: [{ type: 'screen', userId: 'u1' }, { type: 'alias', userId: 'u1', previousId: 'a1' }] })).status).toBe(200);
    expect((await segment({ batch: [{ type: 'track', userId: 'u1' }] })).status).toBe(400);
    expect(sampleValue(await scrape(), 'analytics_events_accepted_total', { workspace }) - sampleValue(before, 'analytics_events_accepted_total', { workspace })).toBe(2);
    const rejected = { workspace, status: '400' };
    await eventually('1 rejected call counted', async () => (await current('analytics_events_rejected_total', rejected)) === sampleValue(before, 'analytics_events_rejected_total', rejected) + 1);
  });

  test('a page of an origin its workspace does not allow: counted as rejected (403) for that workspace', async () => {
    const ws = await createWorkspace(svc, { name: uniqueName('metrics_origins'), allowedOrigins: ['https://shop.example'] });
    const rejected = { workspace: ws.databaseName, status: '403' };
    const res = await fetch(`${svc.url}/events`, {
      method: 'POST',
      headers: { origin: 'https://elsewhere.example', authorization: `Bearer ${ws.publicApiKey}`, 'content-type': 'text/plain' },
      body: JSON.stringify({ events: [{ type: 'page' }, { type: 'page' }] }),
    });
    expect(res.status).toBe(403);
    await eventually('2 rejected events counted', async () => (await current('analytics_events_rejected_total', rejected)) === 2);
  });

  test('a request without a valid key is not charged to any workspace', async () => {
    const before = await scrape();
    expect((await svc.request('POST', '/events', { body: { events: [{ type: 'track' }] } })).status).toBe(401);
    const unauthorized = { method: 'POST', route: '/events', status: '401' };
    const seen = sampleValue(before, 'analytics_http_requests_total', unauthorized);
    await eventually('the 401 counted as a request', async () => (await current('analytics_http_requests_total', unauthorized)) === seen + 1);
    const rejectedFamily = (await scrape()).get('analytics_events_rejected_total')!;
    expect(rejectedFamily.samples.filter((s) => s.labels.status === '401')).toEqual([]);
  });

  test('HTTP requests by method, route pattern and status; unknown paths share one label', async () => {
    const created = { method: 'POST', route: '/events', status: '201' };
    const unmatched = { method: 'GET', route: 'unmatched', status: '404' };
    const before = await scrape();
    await sendEvents(svc, [{ type: 'track', event: 'http' }]);
    expect((await svc.request('GET', '/no/such/path')).status).toBe(404);
    expect((await svc.request('GET', '/another/missing/path')).status).toBe(404);
    const want = (labels: Record<string, string>, n: number) => sampleValue(before, 'analytics_http_requests_total', labels) + n;
    await eventually('the requests counted', async () => {
      const now = await scrape();
      return (
        sampleValue(now, 'analytics_http_requests_total', created) === want(created, 1) &&
        sampleValue(now, 'analytics_http_requests_total', unmatched) === want(unmatched, 2) &&
        sampleValue(now, 'analytics_http_request_duration_seconds_count', unmatched) === want(unmatched, 2)
      );
    });
    const routes = new Set((await scrape()).get('analytics_http_requests_total')!.samples.map((s) => s.labels.route));
    expect([...routes].filter((r) => r!.includes('missing') || r!.includes('such'))).toEqual([]);
  });

  test('query durations by outcome', async () => {
    const before = await scrape();
    const ok = await svc.request('POST', '/queries', { key: svc.privateKey, body: { queries: ['SELECT count() FROM events'] } });
    expect(ok.status).toBe(200);
    const failed = await svc.request('POST', '/queries', { key: svc.privateKey, body: { queries: ['SELECT no_such_column FROM events'] } });
    expect(failed.status).toBe(400);
    const after = await scrape();
    const delta = (outcome: string) =>
      sampleValue(after, 'analytics_query_duration_seconds_count', { outcome }) - sampleValue(before, 'analytics_query_duration_seconds_count', { outcome });
    expect(delta('ok')).toBe(1);
    expect(delta('error')).toBe(1);
  });
});

test("workspaces whose visits are being built: none once a workspace's events are built", async () => {
  await sendEvents(svc, [{ type: 'page', anonymousId: 'visit-gauge', context: { page: { path: '/' } } }]);
  // A read of visits builds at once what it waits for; a build nobody waits for may come only
  // 8x the last build's time later, beyond this wait on a loaded machine (CI failed it so).
  const read = await svc.request('POST', '/api/v2/query', { key: svc.privateKey, body: { site_id: 'any.example', metrics: ['visits'], date_range: 'all' } });
  expect(read.status).toBe(200);
  await eventually('every workspace built', async () => sampleValue(await scrape(), 'analytics_visit_builds_pending') === 0);
});

describe('webhook deliveries', () => {
  const receivers: WebhookReceiver[] = [];
  afterAll(() => Promise.all(receivers.map((r) => r.stop())));

  test('attempts by outcome, and the deliveries waiting for a retry', async () => {
    const answering = async (status: number) => {
      const receiver = await startWebhookReceiver(() => new Response('', { status }));
      receivers.push(receiver);
      await createWebhook(svc, { url: receiver.url, eventTypes: ['track'], eventNames: ['hooked'] });
    };
    await answering(200);
    await answering(503);
    await answering(410);
    await sendEvents(svc, [{ type: 'track', event: 'hooked' }]);
    await eventually('one attempt of each outcome, one retry pending', async () => {
      const now = await scrape();
      const attempts = (outcome: string) => sampleValue(now, 'analytics_webhook_attempts_total', { outcome });
      return attempts('delivered') === 1 && attempts('retry') === 1 && attempts('failed') === 1 && sampleValue(now, 'analytics_webhook_retries_pending') === 1;
    });
  });
});

test('after all of the above the whole output is still valid, with every metric docs/api/metrics.md lists', async () => {
  const families = await scrape();
  expect([...families.keys()].sort()).toEqual([
    'analytics_catalog_batches_missed',
    'analytics_events_accepted_total',
    'analytics_events_rejected_total',
    'analytics_events_suppressed_total',
    'analytics_heap_collection_seconds_total',
    'analytics_heap_collections_total',
    'analytics_http_request_duration_seconds',
    'analytics_http_requests_total',
    'analytics_ingest_flush_duration_seconds',
    'analytics_ingest_flush_rows',
    'analytics_ingest_load_lag_seconds',
    'analytics_ingest_log_bytes',
    'analytics_ingest_queue_events',
    'analytics_plausible_events_dropped_total',
    'analytics_query_duration_seconds',
    'analytics_rate_limited_total',
    'analytics_request_bodies_shed_total',
    'analytics_request_body_bytes_in_flight',
    'analytics_tracking_plan_events_total',
    'analytics_tracking_plan_violations_total',
    'analytics_visit_builds_pending',
    'analytics_webhook_attempts_total',
    'analytics_webhook_retries_pending',
  ]);
});
