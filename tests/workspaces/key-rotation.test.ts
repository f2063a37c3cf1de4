import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { startClickHouseFixture, type ClickHouseFixture } from '../fixtures/clickhouse-http-fixture';
import { describeInProcess, SERVED_BY_DENO } from '../helpers/deno-service';
import { ENGINE_DIR, uniqueName } from '../helpers/engine-dir';
import { eventually } from '../helpers/eventually';
import { createWorkspace, listEvents, sendEvents, startTestService, type TestService } from '../helpers/test-service';

/**
 * `POST /workspaces/{workspaceId}/keys`: a new key of a kind, shown once; the workspace's old keys
 * of that kind answer 401 from the next request, here, after a restart and in other processes.
 */
interface Rotated {
  workspaceId: string;
  kind: 'public' | 'private';
  apiKey: string;
  createdAt: string;
  revokedKeys: number;
}

async function rotate(svc: TestService, workspaceId: string, kind: string, key = svc.privateKey): Promise<Response> {
  return svc.request('POST', `/workspaces/${workspaceId}/keys`, { key, body: { kind } });
}

async function rotated(svc: TestService, workspaceId: string, kind: 'public' | 'private'): Promise<Rotated> {
  const res = await rotate(svc, workspaceId, kind);
  if (res.status !== 201) throw new Error(`rotation answered ${res.status}: ${await res.text()}`);
  return (await res.json()) as Rotated;
}

describe('key rotation in one process', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService();
  });
  afterAll(() => svc.stop());

  test('a new private key, shown once; the old one is refused on the very next request', async () => {
    const ws = await createWorkspace(svc, { name: uniqueName('Rotate') });
    await sendEvents(svc, [{ type: 'track', event: 'kept' }], ws.publicApiKey);
    expect((await listEvents(svc, '', ws.privateApiKey)).status).toBe(200);
    const res = await rotate(svc, ws.workspaceId, 'private');
    expect(res.status).toBe(201);
    const answer = (await res.json()) as Rotated;
    expect(answer).toMatchObject({ workspaceId: ws.workspaceId, kind: 'private', revokedKeys: 1 });
    expect(answer.apiKey).toMatch(/^sk_[A-Za-z0-9_-]{32}$/);
    expect(Date.parse(answer.createdAt)).toBeGreaterThan(Date.parse(ws.createdAt));

    const old = await listEvents(svc, '', ws.privateApiKey);
    expect(old.status).toBe(401);
    expect(old.body.detail).toBe('the key is not valid');
    const fresh = await listEvents(svc, 'event=kept', answer.apiKey);
    expect(fresh.status).toBe(200);
    expect(fresh.body.total).toBe(1);
    const whoami = (await (await svc.request('GET', '/whoami', { key: answer.apiKey })).json()) as any;
    expect(whoami).toMatchObject({ kind: 'private', workspace: { workspaceId: ws.workspaceId } });
    // The public key is another kind: untouched.
    await sendEvents(svc, [{ type: 'track', event: 'still-sent' }], ws.publicApiKey);
    // Only the hash is stored: the new key appears nowhere in the metadata (read in the service's own process).
    if (!SERVED_BY_DENO) {
      const rows = await svc.storage.query(`SELECT keyHash FROM \`${svc.config.metaDatabase}\`.api_keys WHERE workspaceId = {id:String}`, { id: ws.workspaceId });
      expect(JSON.stringify(rows)).not.toContain(answer.apiKey);
      expect(rows.map((r) => r.keyHash)).toContain(new Bun.CryptoHasher('sha256').update(answer.apiKey).digest('hex'));
    }
  });

  test('a new public key: the old one is refused by every collection door, the fast path included', async () => {
    const ws = await createWorkspace(svc, { name: uniqueName('RotatePublic') });
    // Known to the collection routes' caches before the rotation.
    await sendEvents(svc, [{ type: 'track', event: 'before' }], ws.publicApiKey);
    const basic = `Basic ${Buffer.from(`${ws.publicApiKey}:`).toString('base64')}`;
    expect((await svc.request('POST', '/v1/track', { headers: { authorization: basic }, body: { userId: 'u', event: 'before' } })).status).toBe(200);

    const answer = await rotated(svc, ws.workspaceId, 'public');
    expect(answer.apiKey).toMatch(/^pk_/);
    expect(answer.revokedKeys).toBe(1);
    const events = { events: [{ type: 'track', event: 'after' }] };
    expect((await svc.request('POST', '/events', { key: ws.publicApiKey, body: events })).status).toBe(401);
    expect((await svc.request('POST', '/events', { body: { ...events, writeKey: ws.publicApiKey } })).status).toBe(401);
    expect((await svc.request('POST', '/v1/track', { headers: { authorization: basic }, body: { userId: 'u', event: 'after' } })).status).toBe(401);
    expect((await svc.request('POST', '/events', { key: answer.apiKey, body: events })).status).toBe(201);
    expect((await listEvents(svc, 'event=after', ws.privateApiKey)).body.total).toBe(1);
  });

  test('rotating twice revokes the key of the first rotation', async () => {
    const ws = await createWorkspace(svc, { name: uniqueName('RotateTwice') });
    const first = await rotated(svc, ws.workspaceId, 'private');
    const second = await rotated(svc, ws.workspaceId, 'private');
    expect(second.revokedKeys).toBe(1);
    for (const key of [ws.privateApiKey, first.apiKey]) expect((await listEvents(svc, '', key)).status).toBe(401);
    expect((await listEvents(svc, '', second.apiKey)).status).toBe(200);
  });

  test("the default workspace: a key of its own; the environment's keys are not touched", async () => {
    const defaultId = ((await (await svc.request('GET', '/whoami', { key: svc.privateKey })).json()) as any).workspace.workspaceId;
    const first = await rotated(svc, defaultId, 'private');
    expect(first.revokedKeys).toBe(0);
    const whoami = (await (await svc.request('GET', '/whoami', { key: first.apiKey })).json()) as any;
    expect(whoami).toMatchObject({ kind: 'private', workspace: { workspaceId: defaultId, isDefault: true } });
    // A private key, not an admin key.
    expect((await svc.request('GET', '/workspaces', { key: first.apiKey })).status).toBe(403);
    const second = await rotated(svc, defaultId, 'private');
    expect(second.revokedKeys).toBe(1);
    expect((await listEvents(svc, '', first.apiKey)).status).toBe(401);
    expect((await listEvents(svc, '', svc.privateKey)).status).toBe(200);
    const pub = await rotated(svc, defaultId, 'public');
    expect(pub.revokedKeys).toBe(0);
    await sendEvents(svc, [{ type: 'track', event: 'env-key' }]);
    await sendEvents(svc, [{ type: 'track', event: 'own-key' }], pub.apiKey);
  });

  test('refusals: unknown workspace 404, a non-admin key 403, a bad body 400; nothing rotated', async () => {
    const ws = await createWorkspace(svc, { name: uniqueName('RotateRefused') });
    const unknown = await rotate(svc, crypto.randomUUID(), 'private');
    expect(unknown.status).toBe(404);
    for (const key of [ws.privateApiKey, ws.publicApiKey]) expect((await rotate(svc, ws.workspaceId, 'private', key)).status).toBe(403);
    // Nor through the header: it never widens a private key.
    const viaHeader = await svc.request('POST', `/workspaces/${ws.workspaceId}/keys`, { key: ws.privateApiKey, headers: { 'X-Workspace-Id': ws.workspaceId }, body: { kind: 'private' } });
    expect(viaHeader.status).toBe(403);
    expect((await svc.request('POST', `/workspaces/${ws.workspaceId}/keys`, { body: { kind: 'private' } })).status).toBe(401);
    for (const body of [{ kind: 'admin' }, {}, { kind: 'private', graceSeconds: 60 }, []]) {
      const res = await svc.request('POST', `/workspaces/${ws.workspaceId}/keys`, { key: svc.privateKey, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
    }
    const invalid = (await (await rotate(svc, ws.workspaceId, 'admin')).json()) as any;
    expect(invalid.errors).toContainEqual(expect.objectContaining({ pointer: '/kind' }));
    expect((await listEvents(svc, '', ws.privateApiKey)).status).toBe(200);
    await sendEvents(svc, [{ type: 'page' }], ws.publicApiKey);
  });

  test('a deleted workspace cannot be rotated (404), and its keys stay revoked', async () => {
    const ws = await createWorkspace(svc, { name: uniqueName('RotateDeleted') });
    expect((await svc.request('DELETE', `/workspaces/${ws.workspaceId}`, { key: svc.privateKey })).status).toBe(200);
    expect((await rotate(svc, ws.workspaceId, 'private')).status).toBe(404);
    expect((await listEvents(svc, '', ws.privateApiKey)).status).toBe(401);
  });
});

describe('key rotation is stored', () => {
  test('after a restart the new key opens the workspace and the old one does not', async () => {
    const before = await startTestService();
    const ws = await createWorkspace(before, { name: uniqueName('RotateDurable') });
    const answer = await rotated(before, ws.workspaceId, 'private');
    await before.stop();
    const after = await startTestService(before.settings);
    try {
      expect((await listEvents(after, '', answer.apiKey)).status).toBe(200);
      expect((await listEvents(after, '', ws.privateApiKey)).status).toBe(401);
      await sendEvents(after, [{ type: 'page' }], ws.publicApiKey);
    } finally {
      await after.stop();
    }
  });
});

describeInProcess('key rotation across processes on one ClickHouse server', () => {
  let fixture: ClickHouseFixture;
  let first: TestService;
  let second: TestService;
  beforeAll(async () => {
    fixture = await startClickHouseFixture(ENGINE_DIR);
    // The full re-read is far away: only the change counter can tell the second process.
    first = await startTestService({ CLICKHOUSE_URL: fixture.url, WORKSPACE_REFRESH_MS: '600000', WORKSPACE_CHANGE_POLL_MS: '100' });
    second = await startTestService({ ...first.settings });
  });
  afterAll(async () => {
    await second?.stop();
    await first?.stop();
    await fixture?.stop();
  });

  test('the other process refuses the old key and takes the new one once the change counter moves', async () => {
    const ws = await createWorkspace(first, { name: uniqueName('RotateShared') });
    await eventually('the second process knows the workspace', async () => (await listEvents(second, '', ws.privateApiKey)).status === 200);
    const answer = await rotated(first, ws.workspaceId, 'private');
    const rotatedAt = performance.now();
    expect((await listEvents(first, '', ws.privateApiKey)).status).toBe(401);
    await eventually('the second process refuses the old key', async () => (await listEvents(second, '', ws.privateApiKey)).status === 401, 5_000);
    const refusedAfter = Math.round(performance.now() - rotatedAt);
    expect((await listEvents(second, '', answer.apiKey)).status).toBe(200);
    console.log(`key rotation: the other process refused the old key ${refusedAfter} ms after the rotation (poll 100 ms)`);
  });
});
