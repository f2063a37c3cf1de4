import { describe, expect, test } from 'bun:test';
import { describeInProcess } from '../helpers/deno-service';
import { uniqueName } from '../helpers/engine-dir';
import { eventually } from '../helpers/eventually';
import { createWorkspace, listEvents, sendEvents, startTestService } from '../helpers/test-service';
import { createWebhook } from '../helpers/webhooks';
import { freePort, startWebhookReceiver } from '../fixtures/webhook-receiver';

/** A receiver that is down keeps a delivery retrying, holding the queue, for as long as a test runs. */
const PATIENT = { WEBHOOK_RETRY_SCHEDULE: Array(50).fill('100ms').join(','), WEBHOOK_BLOCKING_RETRIES: '50' };

describe('webhook delivery across a restart', () => {
  test('events accepted while the receiver was down arrive after a restart, none missing', async () => {
    const port = await freePort();
    const first = await startTestService(PATIENT);
    await createWebhook(first, { url: `http://127.0.0.1:${port}/hook` });
    const sent: string[] = [];
    for (let i = 0; i < 3; i++) {
      const { results } = await sendEvents(first, Array.from({ length: 10 }, (_, j) => ({ type: 'track', event: 'while-down', properties: { i, j } })));
      sent.push(...results.map((e) => String(e.uuid)));
    }
    await first.stop();

    const second = await startTestService(first.settings);
    const receiver = await startWebhookReceiver(undefined, port);
    try {
      await eventually('every event sent while the receiver was down has arrived', async () => {
        const got = new Set(receiver.events().map((e) => e.uuid));
        return sent.every((u) => got.has(u));
      });
      // In acceptance order, counting each uuid where it first arrived (a resend may repeat one).
      const firstArrivals = [...new Set(receiver.events().map((e) => e.uuid))];
      expect(firstArrivals).toEqual(sent);
    } finally {
      await second.stop();
      await receiver.stop();
    }
  });
});

describeInProcess('a receiver that never answers', () => {
  test('delays neither POST /events nor another webhook, and its backlog in memory stays bounded', async () => {
    const svc = await startTestService({ ...PATIENT, WEBHOOK_TIMEOUT_MS: '60000', WEBHOOK_BUFFER_EVENTS: '20' });
    const silent = await startWebhookReceiver(() => 'never');
    const healthy = await startWebhookReceiver();
    try {
      const ws = await createWorkspace(svc, { name: uniqueName('Silent') });
      const stuck = await createWebhook(svc, { url: silent.url }, ws.privateApiKey);
      await createWebhook(svc, { url: healthy.url }, ws.privateApiKey);
      const finished: string[] = [];
      // A tripwire: a second request at the silent receiver would show up in the order below.
      silent.waitFor(2).then(() => finished.push('second request at the silent receiver'));
      await sendEvents(svc, [{ type: 'track', event: 'first' }], ws.publicApiKey);
      finished.push('POST /events');
      await healthy.waitFor(1);
      finished.push('other webhook delivered');
      expect(silent.requests).toHaveLength(1);

      // Many more events while the silent receiver holds its first request open.
      for (let i = 0; i < 10; i++) {
        await sendEvents(svc, Array.from({ length: 20 }, () => ({ type: 'track', event: 'more' })), ws.publicApiKey);
        finished.push('POST /events');
        expect(svc.webhooks.buffered(stuck.uuid)).toBeLessThanOrEqual(2 * 20);
      }
      await healthy.waitFor(201);
      finished.push('other webhook delivered');
      expect(finished).toEqual(['POST /events', 'other webhook delivered', ...Array(10).fill('POST /events'), 'other webhook delivered']);
      expect(silent.requests).toHaveLength(1);
      expect((await listEvents(svc, 'limit=0', ws.privateApiKey)).body.total).toBe(201);
    } finally {
      await svc.stop();
      await silent.stop();
      await healthy.stop();
    }
  });
});

describeInProcess('several processes on one ClickHouse', () => {
  test('only the delivering process delivers, events accepted by the other included, each once', async () => {
    // As processes sharing a ClickHouse server answer (INGEST_ACK=auto): once the events are in the engine.
    const accepting = await startTestService({ WEBHOOK_DELIVERY: 'false', INGEST_ACK: 'loaded' });
    const delivering = await startTestService({ ...accepting.settings, WEBHOOK_DELIVERY: 'true', WEBHOOK_SETTLE_MS: '200', WORKSPACE_REFRESH_MS: '100' });
    const receiver = await startWebhookReceiver();
    try {
      // Created through the process that does not deliver; the other picks it up on refresh.
      await createWebhook(accepting, { url: receiver.url });
      await eventually('the delivering process runs the webhook', async () => delivering.webhooks.list(delivering.store.defaultWorkspace.workspaceId).length === 1);
      const sent: string[] = [];
      for (const svc of [accepting, delivering, accepting, delivering]) {
        const { results } = await sendEvents(svc, Array.from({ length: 5 }, () => ({ type: 'track', event: 'shared' })));
        sent.push(...results.map((e) => String(e.uuid)));
      }
      await receiver.waitFor(sent.length);
      const got = receiver.events().map((e) => e.uuid);
      expect(new Set(got)).toEqual(new Set(sent));
      expect(got).toHaveLength(sent.length);
    } finally {
      await delivering.stop();
      await accepting.stop();
      await receiver.stop();
    }
  });
});
