import { describe, expect, test } from 'bun:test';
import { describeInProcess } from '../helpers/deno-service';
import { uniqueName } from '../helpers/engine-dir';
import { eventually } from '../helpers/eventually';
import { jsonLines } from '../../src/storage/storage';
import { createWorkspace, listEvents, sendEvents, startTestService } from '../helpers/test-service';

describe('workspaces across restarts', () => {
  test('workspaces, their keys and their events survive a restart', async () => {
    const before = await startTestService();
    const created = await createWorkspace(before, { name: uniqueName('Durable'), properties: { keep: true } });
    const sent = await sendEvents(before, [{ type: 'track', event: 'durable' }], created.publicApiKey);
    const workspacesBefore = await (await before.request('GET', '/workspaces', { key: before.privateKey })).json();
    await before.stop();

    const after = await startTestService(before.settings);
    try {
      expect(await (await after.request('GET', '/workspaces', { key: after.privateKey })).json()).toEqual(workspacesBefore);
      const { status, body } = await listEvents(after, 'event=durable', created.privateApiKey);
      expect(status).toBe(200);
      expect(body.results.map((e: any) => e.uuid)).toEqual([sent.results[0]!.uuid]);
      await sendEvents(after, [{ type: 'page' }], created.publicApiKey);
    } finally {
      await after.stop();
    }
  });
});

describeInProcess('several processes on one ClickHouse', () => {
  test('a workspace created in one is usable in another after its refresh; a deletion revokes it in both', async () => {
    // As processes sharing a ClickHouse server answer: once the events are in the engine.
    const first = await startTestService({ INGEST_ACK: 'loaded' });
    const second = await startTestService({ ...first.settings, WORKSPACE_REFRESH_MS: '100' });
    try {
      const created = await createWorkspace(first, { name: uniqueName('Shared') });
      await eventually('the second process accepts the new public key', async () => {
        const res = await second.request('POST', '/events', { key: created.publicApiKey, body: { events: [{ type: 'page', event: 'via-second' }] } });
        return res.status === 201;
      });
      expect((await listEvents(first, 'event=via-second', created.privateApiKey)).body.total).toBeGreaterThan(0);

      expect((await first.request('DELETE', `/workspaces/${created.workspaceId}`, { key: first.privateKey })).status).toBe(200);
      expect((await listEvents(first, '', created.privateApiKey)).status).toBe(401);
      await eventually('the second process refuses the deleted workspace\'s key', async () => (await listEvents(second, '', created.privateApiKey)).status === 401);
    } finally {
      await second.stop();
      await first.stop();
    }
  });

  test('a database left behind by an interrupted deletion is dropped by the next refresh', async () => {
    const svc = await startTestService();
    try {
      const created = await createWorkspace(svc, { name: uniqueName('Leftover') });
      // What a process that stopped between recording the deletion and dropping the database leaves.
      await svc.storage.insert(svc.config.metaDatabase, 'workspaces', jsonLines([
        {
          workspaceId: created.workspaceId,
          name: created.name,
          databaseName: created.databaseName,
          isDefault: false,
          properties: '',
          createdAt: '2024-01-01 00:00:00.000000',
          version: Number.MAX_SAFE_INTEGER,
          isDeleted: 1,
        },
      ]));
      await svc.store.refresh();
      const rows = await svc.storage.query('SELECT 1 FROM system.databases WHERE name = {name:String}', { name: created.databaseName });
      expect(rows).toEqual([]);
      expect((await listEvents(svc, '', created.privateApiKey)).status).toBe(401);
    } finally {
      await svc.stop();
    }
  });
});
