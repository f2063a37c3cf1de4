import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { testInProcess } from '../helpers/deno-service';
import { ENGINE_DIR } from '../helpers/engine-dir';
import { uniqueName } from '../helpers/engine-dir';
import { eventually } from '../helpers/eventually';
import { runQueries } from '../helpers/queries';
import { createWorkspace, listEvents, sendEvents, startTestService, type TestService } from '../helpers/test-service';
import { startClickHouseFixture, type ClickHouseFixture } from '../fixtures/clickhouse-http-fixture';

let fixture: ClickHouseFixture;
let svc: TestService;
beforeAll(async () => {
  fixture = await startClickHouseFixture(ENGINE_DIR);
  // The service opens its storage from these settings, as it does in production (and under Deno).
  svc = await startTestService({ CLICKHOUSE_URL: fixture.url, CLICKHOUSE_REQUEST_TIMEOUT_MS: '10000', INGEST_READ_WAIT_MS: '1000' });
});
afterAll(async () => {
  await svc.stop();
  await fixture.stop();
});

describe('the service on the server backend', () => {
  test('stores and lists events through @clickhouse/client', async () => {
    const sent = await sendEvents(svc, [
      { type: 'track', event: 'server-path', userId: 'srv', properties: { plan: 'pro' } },
      { type: 'identify', userId: 'srv', traits: { name: 'Ada' } },
    ]);
    const { status, body } = await listEvents(svc, 'userId=srv&orderByField=type&orderByDirection=asc');
    expect(status).toBe(200);
    expect(body.total).toBe(2);
    expect(body.results.map((e: any) => e.uuid)).toEqual([sent.results[1]!.uuid, sent.results[0]!.uuid]);
    expect(body.results[1].properties).toEqual({ plan: 'pro' });
    expect((await (await svc.request('GET', '/')).json()) as any).toMatchObject({ storage: 'server' });
  });

  test('while the server answers errors, events are kept in the ingest log (201 after INGEST_READ_WAIT_MS), reads answer 503, and the events are stored once when it is back', async () => {
    // A bare 503 (no ClickHouse exception) may come from a proxy after the insert ran: unknown,
    // so the loader repeats the insert with its de-duplication token.
    fixture.setDown(true);
    const res = await svc.request('POST', '/events', { key: svc.publicKey, body: { events: [{ type: 'track', event: 'while-down' }] } });
    expect(res.status).toBe(201);
    const list = await svc.request('GET', '/events', { key: svc.privateKey });
    expect(list.status).toBe(503);
    expect(list.headers.get('retry-after')).toBe('1');
    expect(((await list.json()) as { detail: string }).detail).toContain('not in storage yet');
    fixture.setDown(false);
    await eventually('the unconfirmed insert is repeated', async () => (await listEvents(svc, 'event=while-down')).body.total > 0);
    await sendEvents(svc, [{ type: 'track', event: 'after-recovery' }]);
    expect((await listEvents(svc, 'event=after-recovery')).body.total).toBe(1);
    expect((await listEvents(svc, 'event=while-down')).body.total).toBe(1);
  });

  testInProcess('creates a workspace, stores its events, and deletes it with its database', async () => {
    const created = await createWorkspace(svc, { name: uniqueName('OnServer') });
    await sendEvents(svc, [{ type: 'track', event: 'server-workspace' }], created.publicApiKey);
    expect((await listEvents(svc, 'event=server-workspace', created.privateApiKey)).body.total).toBe(1);
    expect((await svc.request('DELETE', `/workspaces/${created.workspaceId}`, { key: svc.privateKey })).status).toBe(200);
    expect((await listEvents(svc, '', created.privateApiKey)).status).toBe(401);
    const rows = await svc.storage.query('SELECT 1 FROM system.databases WHERE name = {name:String}', { name: created.databaseName });
    expect(rows).toEqual([]);
  });

  test('runs sandboxed SQL in the workspace database through the client (header and settings per query)', async () => {
    const created = await createWorkspace(svc, { name: uniqueName('SqlOnServer') });
    await sendEvents(svc, [{ type: 'track', event: 'sql', userId: 'srv', properties: { n: 7 } }], created.publicApiKey);
    const ok = await runQueries(
      svc,
      ["SELECT userId, JSONExtract(properties, 'n', 'UInt64') AS n, toUInt64('18446744073709551615') AS big FROM events"],
      created.privateApiKey,
    );
    expect(ok.status).toBe(200);
    expect(ok.text).toContain('{"userId":"srv","n":7,"big":18446744073709551615}');
    const other = await runQueries(svc, [`SELECT * FROM ${svc.config.defaultWorkspaceDatabase}.events`], created.privateApiKey);
    expect(other.status).toBe(403);
    const settings = await runQueries(svc, ['SELECT 1 SETTINGS readonly = 0'], created.privateApiKey);
    expect(settings.status).toBe(403);
    const syntax = await runQueries(svc, ['SELEC 1'], created.privateApiKey);
    expect(syntax.status).toBe(400);
    expect(syntax.body.errors[0].detail).toContain('Syntax error');
  });

  test("a dashboard's tiles are answered now, even with ?stale=true: nothing is kept, other processes load and erase events unannounced", async () => {
    const created = await createWorkspace(svc, { name: uniqueName('DashOnServer') });
    const key = created.privateApiKey;
    const call = async (method: string, path: string, body?: unknown) => (await svc.request(method, path, { key, body })).json() as Promise<any>;
    await sendEvents(svc, [{ type: 'track', event: 'kept', userId: 'srv' }], created.publicApiKey);
    const insight = await call('POST', '/insights/saved', { name: 'Count', kind: 'sql', query: "SELECT count() AS n FROM events WHERE event = 'kept'" });
    const dashboard = await call('POST', '/dashboards', { name: 'On a server', tiles: [{ insightId: insight.id, x: 0, y: 0, w: 6, h: 4 }] });
    const tile = async () => {
      const [answer] = (await call('GET', `/dashboards/${dashboard.id}/results?stale=true`)).results;
      return { n: Number(answer.result.results[0].n), stale: answer.stale };
    };
    expect(await tile()).toEqual({ n: 1, stale: false });
    await sendEvents(svc, [{ type: 'track', event: 'kept', userId: 'srv' }], created.publicApiKey);
    expect(await tile()).toEqual({ n: 2, stale: false });
  });
});
