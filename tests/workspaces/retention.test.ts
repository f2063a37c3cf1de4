import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { testInProcess } from '../helpers/deno-service';
import { uniqueName } from '../helpers/engine-dir';
import { rowsOf } from '../helpers/queries';
import { createWorkspace, listEvents, sendEvents, startTestService, type TestService } from '../helpers/test-service';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({ RETENTION_DAYS: '400' });
});
afterAll(() => svc.stop());

const DAY_MS = 86_400_000;
const daysAgo = (days: number) => new Date(Date.now() - days * DAY_MS).toISOString();
const admin = (method: string, path: string, body?: unknown) => svc.request(method, path, { key: svc.privateKey, body });

describe('retentionDays', () => {
  test('a new workspace takes RETENTION_DAYS, or its own value; answers show it', async () => {
    const inherited = await createWorkspace(svc, { name: uniqueName('Inherit') });
    expect(inherited.retentionDays).toBe(400);
    const own = await createWorkspace(svc, { name: uniqueName('Own'), retentionDays: 0 });
    expect(own.retentionDays).toBe(0);
    const read: any = await (await admin('GET', `/workspaces/${own.workspaceId}`)).json();
    expect(read.retentionDays).toBe(0);
  });

  test('bad values: 400 naming the field, nothing changes', async () => {
    const ws = await createWorkspace(svc, { name: uniqueName('Bad'), retentionDays: 10 });
    for (const retentionDays of [-1, 1.5, '30', 36_501]) {
      const res = await admin('PUT', `/workspaces/${ws.workspaceId}`, { name: ws.name, retentionDays });
      expect(res.status).toBe(400);
      const body: any = await res.json();
      expect(body.errors[0]).toMatchObject({ pointer: '/retentionDays' });
    }
    expect(((await (await admin('GET', `/workspaces/${ws.workspaceId}`)).json()) as any).retentionDays).toBe(10);
  });

  testInProcess('old events disappear from GET /events and SQL once the TTL is applied; recent ones stay', async () => {
    const ws = await createWorkspace(svc, { name: uniqueName('Short') });
    const events = [
      ...[90, 60, 45].map((d, i) => ({ type: 'track', event: 'old', userId: `u${i}`, timestamp: daysAgo(d) })),
      ...[10, 1, 0].map((d, i) => ({ type: 'track', event: 'recent', userId: `u${i}`, timestamp: daysAgo(d) })),
    ];
    await sendEvents(svc, events, ws.publicApiKey);
    // PUT keeps the name and properties given, and changes the period without rewriting the table.
    const res = await admin('PUT', `/workspaces/${ws.workspaceId}`, { name: ws.name, retentionDays: 30 });
    expect(res.status).toBe(200);
    expect(((await res.json()) as any).retentionDays).toBe(30);
    const table = `${ws.databaseName}.events`;
    const tables = await svc.storage.query('SELECT engine_full FROM system.tables WHERE database = {db:String} AND name = {t:String}', {
      db: ws.databaseName,
      t: 'events',
    });
    expect(String(tables[0]?.engine_full)).toContain('TTL timestamp + toIntervalDay(30)');
    // The engine applies TTLs at merges; the test forces one rather than waiting for it (once the
    // events are loaded from the ingest log).
    await svc.buffer.loaded();
    await svc.storage.command(`OPTIMIZE TABLE ${table} FINAL`);
    const listed = await listEvents(svc, '', ws.privateApiKey);
    expect(listed.body.total).toBe(3);
    expect(listed.body.results.map((e: any) => e.event)).toEqual(['recent', 'recent', 'recent']);
    expect(await rowsOf(svc, "SELECT countIf(event = 'old') AS old, countIf(event = 'recent') AS recent FROM events", ws.privateApiKey)).toEqual([
      { old: 0, recent: 3 },
    ]);
    // Back to forever: the TTL goes, new old events stay through a merge.
    await admin('PUT', `/workspaces/${ws.workspaceId}`, { name: ws.name, retentionDays: 0 });
    await sendEvents(svc, [{ type: 'track', event: 'old', timestamp: daysAgo(365) }], ws.publicApiKey);
    await svc.storage.command(`OPTIMIZE TABLE ${table} FINAL`);
    expect((await listEvents(svc, 'event=old', ws.privateApiKey)).body.total).toBe(1);
  });
});
