import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { testInProcess } from '../helpers/deno-service';
import { uniqueName } from '../helpers/engine-dir';
import { createWorkspace, startTestService, type CreatedWorkspace, type TestService } from '../helpers/test-service';
import { createWebhook } from '../helpers/webhooks';

let svc: TestService;
let room: CreatedWorkspace;
beforeAll(async () => {
  // Deliveries are not under test here: nothing listens at these URLs.
  svc = await startTestService({ WEBHOOK_DELIVERY: 'false' });
  room = await createWorkspace(svc, { name: uniqueName('Hooks') });
});
afterAll(() => svc.stop());

const request = (method: string, path: string, body?: unknown, key = room.privateApiKey) => svc.request(method, path, { key, body });

describe('POST /webhooks', () => {
  test('with only a url: the interface defaults, a uuid, createdAt and a secret shown once', async () => {
    const created = await createWebhook(svc, { url: 'https://example.com/hook' }, room.privateApiKey);
    expect(created).toMatchObject({ url: 'https://example.com/hook', enableBatching: false, eventTypes: ['*'], eventNames: ['*'], flatten: false });
    expect(created.uuid).toMatch(/^[0-9a-f-]{36}$/);
    expect(Date.parse(created.createdAt)).not.toBeNaN();
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(created.secret.slice(6), 'base64')).toHaveLength(32);
    const listed = (await (await request('GET', '/webhooks')).json()) as any;
    const { secret: _secret, ...webhook } = created;
    expect(listed.results).toContainEqual(webhook);
    expect(JSON.stringify(listed)).not.toContain(created.secret);
  });

  test('with every field', async () => {
    const input = { url: 'http://127.0.0.1:9/in', enableBatching: true, eventTypes: ['track', 'page'], eventNames: ['signup', 'home'], flatten: true };
    const created = await createWebhook(svc, input, room.privateApiKey);
    expect(created).toMatchObject(input);
  });

  const invalid: Array<[string, unknown, string, string]> = [
    ['no url', {}, '/url', 'is required'],
    ['a relative url', { url: '/hooks' }, '/url', 'absolute http:// or https:// URL'],
    ['an ftp url', { url: 'ftp://example.com/x' }, '/url', 'absolute http:// or https:// URL'],
    ['a url that is not a URL', { url: 'not a url' }, '/url', 'absolute http:// or https:// URL'],
    ['a url of 3000 characters', { url: `https://example.com/${'x'.repeat(3000)}` }, '/url', 'absolute http:// or https:// URL'],
    ['an unknown event type', { url: 'https://example.com', eventTypes: ['pageview'] }, '/eventTypes/0', 'must be one of page, track, identify, group, screen, alias or *'],
    ['no event types', { url: 'https://example.com', eventTypes: [] }, '/eventTypes', 'must be 1 to 100'],
    ['event types that are not a list', { url: 'https://example.com', eventTypes: 'track' }, '/eventTypes', 'must be 1 to 100'],
    ['an empty event name', { url: 'https://example.com', eventNames: [''] }, '/eventNames/0', ''],
    ['no event names', { url: 'https://example.com', eventNames: [] }, '/eventNames', 'must be 1 to 100 event names'],
    ['enableBatching that is a string', { url: 'https://example.com', enableBatching: 'yes' }, '/enableBatching', 'must be true or false'],
    ['flatten that is a number', { url: 'https://example.com', flatten: 1 }, '/flatten', 'must be true or false'],
    ['an unknown field', { url: 'https://example.com', secret: 'mine' }, '/secret', 'is not a known field'],
  ];
  for (const [what, body, pointer, detail] of invalid) {
    test(`${what}: 400 naming ${pointer}`, async () => {
      const before = ((await (await request('GET', '/webhooks')).json()) as any).total;
      const res = await request('POST', '/webhooks', body);
      expect(res.status).toBe(400);
      const problem = (await res.json()) as any;
      expect(problem.errors.map((e: any) => e.pointer)).toContain(pointer);
      expect(problem.errors.find((e: any) => e.pointer === pointer).detail).toContain(detail);
      expect(((await (await request('GET', '/webhooks')).json()) as any).total).toBe(before);
    });
  }
});

describe('workspace scoping and keys', () => {
  test("a workspace sees only its own webhooks, and cannot delete another's", async () => {
    const other = await createWorkspace(svc, { name: uniqueName('OtherHooks') });
    const theirs = await createWebhook(svc, { url: 'https://example.com/theirs' }, other.privateApiKey);
    const mine = ((await (await request('GET', '/webhooks')).json()) as any).results.map((w: any) => w.uuid);
    expect(mine).not.toContain(theirs.uuid);
    expect((await request('DELETE', `/webhooks/${theirs.uuid}`)).status).toBe(404);
    const still = ((await (await request('GET', '/webhooks', undefined, other.privateApiKey)).json()) as any).results;
    expect(still.map((w: any) => w.uuid)).toContain(theirs.uuid);
  });

  test('a public key gets 403 on every webhook route; no key gets 401', async () => {
    const hook = await createWebhook(svc, { url: 'https://example.com/keys' }, room.privateApiKey);
    for (const [method, path, body] of [
      ['GET', '/webhooks', undefined],
      ['POST', '/webhooks', { url: 'https://example.com' }],
      ['DELETE', `/webhooks/${hook.uuid}`, undefined],
      ['GET', `/webhooks/${hook.uuid}/deliveries`, undefined],
    ] as const) {
      expect((await request(method, path, body, room.publicApiKey)).status).toBe(403);
      expect((await svc.request(method, path, { body })).status).toBe(401);
    }
  });
});

describe('DELETE /webhooks/{uuid}', () => {
  test('answers the deleted webhook; then it is gone; unknown uuids are 404', async () => {
    const hook = await createWebhook(svc, { url: 'https://example.com/gone' }, room.privateApiKey);
    const res = await request('DELETE', `/webhooks/${hook.uuid}`);
    expect(res.status).toBe(200);
    expect(((await res.json()) as any).uuid).toBe(hook.uuid);
    const listed = ((await (await request('GET', '/webhooks')).json()) as any).results.map((w: any) => w.uuid);
    expect(listed).not.toContain(hook.uuid);
    expect((await request('DELETE', `/webhooks/${hook.uuid}`)).status).toBe(404);
    expect((await request('DELETE', '/webhooks/not-a-uuid')).status).toBe(404);
    expect((await request('GET', `/webhooks/${hook.uuid}/deliveries`)).status).toBe(404);
  });

  testInProcess('webhooks survive a restart; deleted ones stay deleted', async () => {
    const kept = await createWebhook(svc, { url: 'https://example.com/kept' }, room.privateApiKey);
    const dropped = await createWebhook(svc, { url: 'https://example.com/dropped' }, room.privateApiKey);
    await request('DELETE', `/webhooks/${dropped.uuid}`);
    const again = await startTestService(svc.settings);
    try {
      const listed = ((await (await again.request('GET', '/webhooks', { key: room.privateApiKey })).json()) as any).results.map((w: any) => w.uuid);
      expect(listed).toContain(kept.uuid);
      expect(listed).not.toContain(dropped.uuid);
    } finally {
      await again.stop();
    }
  });
});

describe('GET /webhooks/{uuid}/deliveries', () => {
  test('is empty for a webhook with no troubled delivery; refuses an unknown status', async () => {
    const hook = await createWebhook(svc, { url: 'https://example.com/quiet' }, room.privateApiKey);
    const res = await request('GET', `/webhooks/${hook.uuid}/deliveries`);
    expect(await res.json()).toEqual({ results: [], limit: 1000, offset: 0, total: 0 });
    const bad = await request('GET', `/webhooks/${hook.uuid}/deliveries?status=lost`);
    expect(bad.status).toBe(400);
  });
});
