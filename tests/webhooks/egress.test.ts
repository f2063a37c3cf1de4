/**
 * The egress policy end to end: webhooks to internal addresses are refused when registered, in
 * every spelling, and again when connecting, against the address the connection would use (a
 * name that resolves elsewhere at delivery time: DNS rebinding). A test resolver plays the name
 * server, so the answer can change between registration and delivery.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { startWebhookReceiver, type WebhookReceiver } from '../fixtures/webhook-receiver';
import { describeInProcess } from '../helpers/deno-service';
import { eventually } from '../helpers/eventually';
import { createWebhook, deliveriesOf } from '../helpers/webhooks';
import { sendEvents, startTestService, type TestService } from '../helpers/test-service';

/** Refused at registration whatever resolves what: the address, or the name, is internal by itself. */
const REFUSED: Array<[string, string]> = [
  ['loopback', 'http://127.0.0.1:8080/hook'],
  ['loopback, decimal', 'http://2130706433/hook'],
  ['loopback, hexadecimal', 'http://0x7f000001/hook'],
  ['loopback, octal', 'http://0177.0.0.1/hook'],
  ['loopback, short form', 'http://127.1/hook'],
  ['loopback, elsewhere in 127/8', 'http://127.8.9.10/hook'],
  ['localhost', 'http://localhost:4000/hook'],
  ['localhost with a final dot, in capitals', 'http://LOCALHOST./hook'],
  ['a subdomain of localhost', 'http://app.localhost/hook'],
  ['IPv6 loopback', 'http://[::1]/hook'],
  ['IPv4-mapped IPv6 loopback', 'http://[::ffff:127.0.0.1]/hook'],
  ['IPv4-mapped IPv6 loopback, long form', 'http://[0:0:0:0:0:ffff:7f00:1]/hook'],
  ['NAT64 of loopback', 'http://[64:ff9b::7f00:1]/hook'],
  ['unspecified', 'http://0.0.0.0:4000/hook'],
  ['unspecified, as 0', 'http://0/hook'],
  ['IPv6 unspecified', 'http://[::]/hook'],
  ['cloud metadata', 'http://169.254.169.254/latest/meta-data/'],
  ['cloud metadata, decimal', 'http://2852039166/latest/meta-data/'],
  ["Google's metadata name", 'http://metadata.google.internal/computeMetadata/v1/'],
  ['private 10/8', 'http://10.0.0.1/hook'],
  ['private 172.16/12', 'http://172.16.5.4/hook'],
  ['private 192.168/16', 'https://192.168.1.1/hook'],
  ['carrier-grade NAT', 'http://100.64.0.1/hook'],
  ['unique-local IPv6', 'http://[fd00::1]/hook'],
  ['link-local IPv6', 'http://[fe80::1]/hook'],
  ['multicast', 'http://224.0.0.1/hook'],
  ['IPv6 multicast', 'http://[ff02::1]/hook'],
  ['broadcast', 'http://255.255.255.255/hook'],
  ['user info', 'https://user:secret@hooks.example.com/hook'],
];

describe('webhook URLs refused at registration', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService({ EGRESS_ALLOWLIST: '', WEBHOOK_DELIVERY: 'false' });
  });
  afterAll(() => svc.stop());

  for (const [what, url] of REFUSED) {
    test(`${what}: ${url} → 400 naming the reason`, async () => {
      const res = await svc.request('POST', '/webhooks', { key: svc.privateKey, body: { url } });
      const body = (await res.json()) as any;
      expect(res.status).toBe(400);
      expect(body.detail).toStartWith('the webhook url is not allowed: ');
      expect(body.errors).toEqual([{ pointer: '/url', detail: expect.any(String) }]);
      if (what === 'user info') expect(body.detail).not.toContain('secret');
      // An internal target is refused by the policy, which the operator's setting opens: the answer names it.
      if (what !== 'user info') expect(body.errors[0].detail).toContain("unless the service's EGRESS_ALLOWLIST setting lists them");
    });
  }

  test('a loopback receiver: the refusal says which setting allows it', async () => {
    const res = await svc.request('POST', '/webhooks', { key: svc.privateKey, body: { url: 'http://127.0.0.1:9000/hook' } });
    expect(res.status).toBe(400);
    expect(((await res.json()) as any).detail).toBe(
      "the webhook url is not allowed: 127.0.0.1, a loopback address: internal addresses are refused unless the service's EGRESS_ALLOWLIST setting lists them",
    );
  });

  test('nothing refused was registered', async () => {
    const res = await svc.request('GET', '/webhooks', { key: svc.privateKey });
    expect(((await res.json()) as any).total).toBe(0);
  });

  test('a public address is accepted', async () => {
    await createWebhook(svc, { url: 'https://93.184.216.34/hook' });
  });
});

/** A name server whose answers the test sets, name by name; it records every question. */
function testResolver(answers: Record<string, string[]>) {
  const asked: string[] = [];
  return {
    answers,
    asked,
    resolve: async (host: string) => {
      asked.push(host);
      const found = answers[host];
      if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
      return found;
    },
  };
}

describeInProcess('webhook connections checked at connect time', () => {
  const resolver = testResolver({ 'internal.example': ['10.1.2.3'], 'rebind.example': ['93.184.216.34'], 'hooks.internal': ['127.0.0.1'] });
  let svc: TestService;
  let receiver: WebhookReceiver;
  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    svc = await startTestService(
      { EGRESS_ALLOWLIST: 'hooks.internal', WEBHOOK_RETRY_SCHEDULE: '50ms', WEBHOOK_BLOCKING_RETRIES: '1' },
      undefined,
      undefined,
      resolver,
    );
  });
  afterAll(async () => {
    await svc.stop();
    await receiver.stop();
  });

  test('a name that resolves to a private address is refused at registration', async () => {
    const res = await svc.request('POST', '/webhooks', { key: svc.privateKey, body: { url: 'https://internal.example/hook' } });
    expect(res.status).toBe(400);
    expect(((await res.json()) as any).detail).toContain('internal.example resolves to 10.1.2.3, a private address');
  });

  test('a name that resolves to loopback only at delivery time: refused at connect, the delivery fails as "blocked address", nothing reaches the listener', async () => {
    const hook = await createWebhook(svc, { url: `http://rebind.example:${receiver.port}/hook` });
    // The name server changes its answer after registration: DNS rebinding.
    resolver.answers['rebind.example'] = ['127.0.0.1'];
    const asked = resolver.asked.length;
    const [event] = (await sendEvents(svc, [{ type: 'track', event: 'rebound' }])).results;
    await eventually('the delivery is recorded as failed', async () => (await deliveriesOf(svc, hook.uuid, 'status=failed')).total === 1);
    const failed = (await deliveriesOf(svc, hook.uuid, 'status=failed')).results[0];
    expect(failed).toMatchObject({ eventUuids: [event!.uuid], status: 'failed', attempts: 1, lastStatusCode: null, lastError: 'blocked address' });
    expect(resolver.asked.slice(asked)).toContain('rebind.example');
    expect(receiver.requests).toEqual([]);
  });

  test('a name on the allowlist reaches a loopback receiver', async () => {
    await createWebhook(svc, { url: `http://hooks.internal:${receiver.port}/allowed` });
    const [event] = (await sendEvents(svc, [{ type: 'track', event: 'allowed' }])).results;
    await eventually('the receiver got the event', async () => receiver.events().some((e) => e.uuid === event!.uuid));
    expect(receiver.requests.every((r) => r.path === '/allowed' && r.headers.host === `hooks.internal:${receiver.port}`)).toBe(true);
  });
});

describe("what a receiver answers never comes back", () => {
  let svc: TestService;
  let receiver: WebhookReceiver;
  const SECRET = 'secret_token=do-not-echo-me';
  beforeAll(async () => {
    receiver = await startWebhookReceiver(() => new Response(`internal page: ${SECRET}`, { status: 500 }));
    svc = await startTestService({ EGRESS_ALLOWLIST: '127.0.0.1/32', WEBHOOK_RETRY_SCHEDULE: '50ms,50ms', WEBHOOK_BLOCKING_RETRIES: '0' });
  });
  afterAll(async () => {
    await svc.stop();
    await receiver.stop();
  });

  test("a receiver's 500 body appears in no answer: the delivery says status 500", async () => {
    const hook = await createWebhook(svc, { url: `${receiver.url}/hook` });
    await sendEvents(svc, [{ type: 'track', event: 'fails' }]);
    await eventually('the delivery failed for good', async () => (await deliveriesOf(svc, hook.uuid, 'status=failed')).total === 1);
    for (const path of [`/webhooks/${hook.uuid}/deliveries`, '/webhooks', '/events']) {
      const res = await svc.request('GET', path, { key: svc.privateKey });
      expect(await res.text()).not.toContain('do-not-echo-me');
    }
    const page = await deliveriesOf(svc, hook.uuid);
    expect(page.results[0]).toMatchObject({ lastStatusCode: 500, lastError: 'status 500', attempts: 3 });
    expect(receiver.requests.length).toBe(3);
  });
});
