import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { uniqueName } from '../helpers/engine-dir';
import { createWorkspace, listEvents, sendEvents, startTestService, type CreatedWorkspace, type TestService } from '../helpers/test-service';

/**
 * An admin key with `X-Workspace-Id` acts on that workspace as its private key would (issue 29:
 * the console's workspace switcher), on every route that reads or changes a workspace's data;
 * unknown ids are 404, any other key with the header 403, and nothing changes without it.
 */
let svc: TestService;
let a: CreatedWorkspace;
let b: CreatedWorkspace;
let defaultId: string;

const TRENDS = { series: [{ event: 'signup' }], dateFrom: '2024-03-01', dateTo: '2024-03-03', interval: 'day' };

beforeAll(async () => {
  svc = await startTestService();
  a = await createWorkspace(svc, { name: uniqueName('HeaderA') });
  b = await createWorkspace(svc, { name: uniqueName('HeaderB') });
  await sendEvents(svc, [
    { type: 'track', event: 'signup', userId: 'a1', timestamp: '2024-03-01T10:00:00Z' },
    { type: 'track', event: 'signup', userId: 'a2', timestamp: '2024-03-02T10:00:00Z' },
    { type: 'identify', userId: 'a1', traits: { plan: 'pro' }, timestamp: '2024-03-01T09:00:00Z' },
  ], a.publicApiKey);
  await sendEvents(svc, [{ type: 'track', event: 'signup', userId: 'b1', timestamp: '2024-03-01T10:00:00Z' }], b.publicApiKey);
  await sendEvents(svc, [{ type: 'track', event: 'default-only', userId: 'd1' }]);
  defaultId = ((await (await svc.request('GET', '/whoami', { key: svc.privateKey })).json()) as any).workspace.workspaceId;
});
afterAll(() => svc.stop());

/** A request with the admin key acting on `workspaceId`. */
const asAdminOn = (workspaceId: string, method: string, path: string, body?: unknown) =>
  svc.request(method, path, { key: svc.privateKey, headers: { 'X-Workspace-Id': workspaceId }, body });

const eventNames = (body: any) => body.results.map((e: any) => e.event).sort();

describe('an admin key with X-Workspace-Id', () => {
  test("reads another workspace's events, and only them", async () => {
    const res = await asAdminOn(a.workspaceId, 'GET', '/events');
    expect(res.status).toBe(200);
    const body = (await res.json()) as any;
    expect(body.total).toBe(3);
    expect(body).toEqual((await listEvents(svc, '', a.privateApiKey)).body);
    const other = (await (await asAdminOn(b.workspaceId, 'GET', '/events')).json()) as any;
    expect(eventNames(other)).toEqual(['signup']);
    expect(other.results[0].userId).toBe('b1');
  });

  test("answers another workspace's insights, SQL and persons as its private key does", async () => {
    const trends = await asAdminOn(a.workspaceId, 'POST', '/insights/trends', TRENDS);
    expect(trends.status).toBe(200);
    const own = await svc.request('POST', '/insights/trends', { key: a.privateApiKey, body: TRENDS });
    expect(await trends.json()).toEqual(await own.json());
    const ofB = (await (await asAdminOn(b.workspaceId, 'POST', '/insights/trends', TRENDS)).json()) as any;
    const ofA = (await (await svc.request('POST', '/insights/trends', { key: a.privateApiKey, body: TRENDS })).json()) as any;
    expect(JSON.stringify(ofB)).not.toEqual(JSON.stringify(ofA));

    const sql = await asAdminOn(a.workspaceId, 'POST', '/queries', { queries: ['SELECT count() AS n FROM events'] });
    expect(sql.status).toBe(200);
    expect(await sql.text()).toContain('"n":3');

    const persons = await asAdminOn(a.workspaceId, 'GET', '/persons');
    expect(persons.status).toBe(200);
    expect(await persons.json()).toEqual(await (await svc.request('GET', '/persons', { key: a.privateApiKey })).json());

    const ch = await fetch(`${svc.url}/clickhouse?query=${encodeURIComponent('SELECT count() FROM events')}`, {
      headers: { authorization: `Bearer ${svc.privateKey}`, 'x-workspace-id': a.workspaceId },
    });
    expect(ch.status).toBe(200);
    expect((await ch.text()).trim()).toBe('3');
  });

  test('manages what belongs to the workspace: sends events, saves cohorts and webhooks there', async () => {
    const sent = await asAdminOn(b.workspaceId, 'POST', '/events', { events: [{ type: 'track', event: 'sent-by-admin', userId: 'b2' }] });
    expect(sent.status).toBe(201);
    expect((await listEvents(svc, 'event=sent-by-admin', b.privateApiKey)).body.total).toBe(1);
    expect((await listEvents(svc, 'event=sent-by-admin')).body.total).toBe(0);

    const cohort = await asAdminOn(b.workspaceId, 'POST', '/cohorts', { name: 'Made by the admin', filters: [{ property: 'plan', operator: 'eq', value: 'pro' }] });
    expect(cohort.status).toBe(201);
    const cohortId = ((await cohort.json()) as any).id;
    expect(cohortId).toBeString();
    const ofB = (await (await svc.request('GET', '/cohorts', { key: b.privateApiKey })).json()) as any;
    expect(ofB.results.map((c: any) => c.id)).toEqual([cohortId]);
    expect(((await (await svc.request('GET', '/cohorts', { key: svc.privateKey })).json()) as any).total).toBe(0);
    expect((await asAdminOn(b.workspaceId, 'DELETE', `/cohorts/${cohortId}`)).status).toBe(200);

    const hook = await asAdminOn(b.workspaceId, 'POST', '/webhooks', { url: 'http://127.0.0.1:9/hook', eventNames: ['never-sent'] });
    expect(hook.status).toBe(200);
    const uuid = ((await hook.json()) as any).uuid;
    expect(uuid).toBeString();
    expect(((await (await svc.request('GET', '/webhooks', { key: b.privateApiKey })).json()) as any).results.map((w: any) => w.uuid)).toEqual([uuid]);
    expect(((await (await svc.request('GET', '/webhooks', { key: svc.privateKey })).json()) as any).total).toBe(0);
    expect((await asAdminOn(b.workspaceId, 'DELETE', `/webhooks/${uuid}`)).status).toBe(200);
  });

  test('stays an admin key: /whoami names the workspace, and workspaces are still managed', async () => {
    const whoami = (await (await asAdminOn(a.workspaceId, 'GET', '/whoami')).json()) as any;
    expect(whoami.kind).toBe('admin');
    expect(whoami.workspace.workspaceId).toBe(a.workspaceId);
    expect((await asAdminOn(a.workspaceId, 'GET', '/workspaces')).status).toBe(200);
    // The default workspace's own id works too, as the header's absence does.
    expect((await asAdminOn(defaultId, 'GET', '/events?event=default-only')).status).toBe(200);
    expect(((await (await asAdminOn(defaultId, 'GET', '/events?event=default-only')).json()) as any).total).toBe(1);
  });

  test('an unknown or deleted workspace: 404 naming the header, on every door', async () => {
    const doomed = await createWorkspace(svc, { name: uniqueName('HeaderGone') });
    await svc.request('DELETE', `/workspaces/${doomed.workspaceId}`, { key: svc.privateKey });
    for (const id of ['no-such-workspace', crypto.randomUUID(), doomed.workspaceId, '']) {
      for (const [method, path, body] of [
        ['GET', '/events', undefined],
        ['POST', '/queries', { queries: ['SELECT 1'] }],
        ['POST', '/insights/trends', TRENDS],
        ['POST', '/events', { events: [{ type: 'track', event: 'lost' }] }],
        ['GET', '/whoami', undefined],
      ] as const) {
        const res = await asAdminOn(id, method, path, body);
        expect(res.status, `${method} ${path} ${id}`).toBe(404);
        expect(((await res.json()) as any).detail).toContain('X-Workspace-Id');
      }
    }
    const ch = await fetch(`${svc.url}/clickhouse?query=SELECT%201`, { headers: { authorization: `Bearer ${svc.privateKey}`, 'x-workspace-id': 'no-such-workspace' } });
    expect(ch.status).toBe(404);
    expect(await ch.text()).toContain('UNKNOWN_DATABASE');
    expect((await listEvents(svc, 'event=lost')).body.total).toBe(0);
  });
});

describe('X-Workspace-Id never widens another key', () => {
  test("a workspace's private key with another workspace's id (or its own): 403, nothing read", async () => {
    for (const id of [b.workspaceId, a.workspaceId, defaultId]) {
      const res = await svc.request('GET', '/events', { key: a.privateApiKey, headers: { 'X-Workspace-Id': id } });
      expect(res.status).toBe(403);
      const problem = (await res.json()) as any;
      expect(problem.detail).toContain('only an admin key');
      expect(problem.results).toBeUndefined();
    }
    const insights = await svc.request('POST', '/insights/trends', { key: a.privateApiKey, body: TRENDS, headers: { 'X-Workspace-Id': b.workspaceId } });
    expect(insights.status).toBe(403);
    const ch = await fetch(`${svc.url}/clickhouse?query=SELECT%201`, { headers: { authorization: `Bearer ${a.privateApiKey}`, 'x-workspace-id': b.workspaceId } });
    expect(ch.status).toBe(403);
    expect(await ch.text()).toContain('ACCESS_DENIED');
  });

  test('a public key with the header: 403 and nothing stored, by header or by writeKey', async () => {
    const headers = { 'X-Workspace-Id': b.workspaceId };
    const byHeader = await svc.request('POST', '/events', { key: a.publicApiKey, headers, body: { events: [{ type: 'track', event: 'smuggled' }] } });
    expect(byHeader.status).toBe(403);
    const segment = await svc.request('POST', '/v1/track', { key: a.publicApiKey, headers, body: { userId: 'x', event: 'smuggled' } });
    expect(segment.status).toBe(403);
    const byWriteKey = await svc.request('POST', '/events', { headers, body: { writeKey: a.publicApiKey, events: [{ type: 'track', event: 'smuggled' }] } });
    expect(byWriteKey.status).toBe(403);
    for (const key of [a.privateApiKey, b.privateApiKey]) expect((await listEvents(svc, 'event=smuggled', key)).body.total).toBe(0);
  });

  test('an unknown key with the header: still 401', async () => {
    const res = await svc.request('GET', '/events', { key: 'sk_nobody_knows_this', headers: { 'X-Workspace-Id': a.workspaceId } });
    expect(res.status).toBe(401);
  });

  test('without the header, isolation is as before', async () => {
    expect((await listEvents(svc, 'event=signup')).body.total).toBe(0);
    expect((await listEvents(svc, 'event=default-only')).body.total).toBe(1);
    expect((await listEvents(svc, 'event=signup', a.privateApiKey)).body.results.map((e: any) => e.userId).sort()).toEqual(['a1', 'a2']);
    expect((await listEvents(svc, 'event=signup', b.privateApiKey)).body.results.map((e: any) => e.userId)).toEqual(['b1']);
    const whoami = (await (await svc.request('GET', '/whoami', { key: svc.privateKey })).json()) as any;
    expect(whoami).toMatchObject({ kind: 'admin', workspace: { workspaceId: defaultId, isDefault: true } });
  });
});
