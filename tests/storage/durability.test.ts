import { expect } from 'bun:test';
import { testInProcess } from '../helpers/deno-service';
import { createWorkspace, startTestService } from '../helpers/test-service';

/** The fsync settings of `database.events`, as the engine reports them. */
async function fsyncSettings(storage: { query(sql: string, params: Record<string, string>): Promise<Array<Record<string, unknown>>> }, database: string) {
  const [row] = await storage.query("SELECT engine_full FROM system.tables WHERE database = {db:String} AND name = 'events'", { db: database });
  const settings = String(row!.engine_full);
  return { afterInsert: /fsync_after_insert = (\d)/.exec(settings)?.[1], partDirectory: /fsync_part_directory = (\d)/.exec(settings)?.[1] };
}

testInProcess('INGEST_FSYNC sets the events tables of every workspace, at start and at creation, and back', async () => {
  const svc = await startTestService({ INGEST_FSYNC: 'true' });
  const created = await createWorkspace(svc, { name: 'durable' });
  for (const db of [svc.config.defaultWorkspaceDatabase, created.databaseName]) {
    expect(await fsyncSettings(svc.storage, db)).toEqual({ afterInsert: '1', partDirectory: '1' });
  }
  await svc.stop();
  // A restart with the default turns it off again.
  const restarted = await startTestService({ ...svc.settings, INGEST_FSYNC: 'false' });
  for (const db of [svc.config.defaultWorkspaceDatabase, created.databaseName]) {
    expect(await fsyncSettings(restarted.storage, db)).toEqual({ afterInsert: '0', partDirectory: '0' });
  }
  await restarted.stop();
});
