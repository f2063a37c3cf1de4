import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { createHmac } from 'node:crypto';
import { startWebhookReceiver, type WebhookReceiver } from '../fixtures/webhook-receiver';
import { createWebhook } from '../helpers/webhooks';
import { createWorkspace, listEvents, startTestService, type TestService } from '../helpers/test-service';

describe('POST /webhooks/{uuid}/test', () => {
  let svc: TestService;
  let receiver: WebhookReceiver;
  beforeAll(async () => {
    svc = await startTestService({ WEBHOOK_TIMEOUT_MS: '500' });
    receiver = await startWebhookReceiver((n) => (n === 2 ? new Response('secret internals', { status: 500 }) : new Response('ok')));
  });
  afterAll(async () => {
    await svc.stop();
    await receiver.stop();
  });

  test('sends one signed synthetic event of a type and name the webhook takes; it is not stored', async () => {
    const hook = await createWebhook(svc, { url: `${receiver.url}/hook`, eventTypes: ['track'], eventNames: ['signup'] });
    const res = await svc.request('POST', `/webhooks/${hook.uuid}/test`, { key: svc.privateKey });
    expect(res.status).toBe(200);
    const answer = (await res.json()) as any;
    expect(answer).toMatchObject({ delivered: true, statusCode: 200, error: null });
    expect(receiver.requests).toHaveLength(1);
    const sent = receiver.requests[0]!;
    expect(sent.json.data).toEqual([answer.event]);
    expect(answer.event).toMatchObject({ type: 'track', event: 'signup', properties: { test: true } });
    const key = Buffer.from(hook.secret.slice('whsec_'.length), 'base64');
    const signed = `${sent.headers['webhook-id']}.${sent.headers['webhook-timestamp']}.${sent.body}`;
    expect(sent.headers['webhook-signature']).toBe(`v1,${createHmac('sha256', key).update(signed).digest('base64')}`);
    expect((await listEvents(svc, 'event=signup')).body.total).toBe(0);
  });

  test("a failing receiver: its status and a class of failure, never what it sent", async () => {
    const hook = await createWebhook(svc, { url: `${receiver.url}/hook` });
    const answer = (await (await svc.request('POST', `/webhooks/${hook.uuid}/test`, { key: svc.privateKey })).json()) as any;
    expect(answer).toMatchObject({ delivered: false, statusCode: 500, error: 'status 500' });
    expect(JSON.stringify(answer)).not.toContain('secret internals');
    expect(answer.event).toMatchObject({ type: 'track', event: 'webhook.test' });
  });

  test('no answer within WEBHOOK_TIMEOUT_MS, or nothing listening: no status, and the class says which', async () => {
    const silent = await startWebhookReceiver(() => 'never');
    try {
      const hook = await createWebhook(svc, { url: silent.url });
      const answer = (await (await svc.request('POST', `/webhooks/${hook.uuid}/test`, { key: svc.privateKey })).json()) as any;
      expect(answer).toMatchObject({ delivered: false, statusCode: null, error: 'timeout' });
    } finally {
      await silent.stop();
    }
    const closed = await startWebhookReceiver();
    const url = closed.url;
    await closed.stop();
    const hook = await createWebhook(svc, { url });
    const answer = (await (await svc.request('POST', `/webhooks/${hook.uuid}/test`, { key: svc.privateKey })).json()) as any;
    expect(answer).toMatchObject({ delivered: false, statusCode: null, error: 'connection refused' });
  });

  test("another workspace's webhook, or none: 404; a public key: 403", async () => {
    const other = await createWorkspace(svc, { name: 'test-event-other' });
    const theirs = await createWebhook(svc, { url: receiver.url }, other.privateApiKey);
    expect((await svc.request('POST', `/webhooks/${theirs.uuid}/test`, { key: svc.privateKey })).status).toBe(404);
    expect((await svc.request('POST', `/webhooks/${crypto.randomUUID()}/test`, { key: svc.privateKey })).status).toBe(404);
    expect((await svc.request('POST', `/webhooks/${theirs.uuid}/test`, { key: other.publicApiKey })).status).toBe(403);
  });
});
