/**
 * The visit builder with several processes on one ClickHouse server (src/web-analytics/visits/):
 * two builders over one engine, each with its own lease of the same name, as two processes would
 * be. Only the holder builds, so each visit is stored once, however both are told of loads; an
 * erasure through the other deletes the erased keys' visits at once.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { Lease } from '../../src/coordination/lease';
import { silentLogger } from '../../src/log';
import { EmbeddedStorage } from '../../src/storage/embedded';
import { metaMigrations } from '../../src/storage/migrations/meta';
import { MigrationRunner } from '../../src/storage/migrations/runner';
import { workspaceMigrations } from '../../src/storage/migrations/workspace';
import { identifier } from '../../src/storage/storage';
import { VisitBuilder } from '../../src/web-analytics/visits/visit-builder';
import { ENGINE_DIR, uniqueName } from '../helpers/engine-dir';
import { eventually } from '../helpers/eventually';

let storage: EmbeddedStorage;
let meta: string;
let database: string;
const builders: VisitBuilder[] = [];
const leases: Lease[] = [];

beforeAll(async () => {
  storage = new EmbeddedStorage(ENGINE_DIR, 2);
  meta = uniqueName('meta_visit_lease');
  database = uniqueName('visit_lease');
  const migrations = new MigrationRunner(storage, meta, '', silentLogger);
  await migrations.bootstrap();
  await migrations.apply(meta, metaMigrations);
  await migrations.apply(database, workspaceMigrations);
  for (let i = 0; i < 2; i++) {
    const election = new Lease(storage, { metaDatabase: meta, name: 'visit-builder', leaseMs: 1500, cluster: false }, silentLogger);
    leases.push(election);
    const builder = new VisitBuilder(storage, silentLogger, { sessionTimeoutMinutes: 30, election, databases: () => [database] });
    await builder.start();
    builders.push(builder);
  }
});
afterAll(async () => {
  await Promise.all(builders.map((b) => b.stop()));
  await storage.close();
});

/** Page views of `devices` devices, `each` a visit of three a minute apart, arrived two minutes ago. */
async function pageViews(devices: number): Promise<void> {
  await storage.command(
    `INSERT INTO ${identifier(database)}.events (uuid, type, anonymousId, context, timestamp, parsedAt)
     SELECT generateUUIDv4(), 'page', concat('device-', toString(intDiv(number, 3))), '{"page":{"path":"/"}}',
       now64(6) - INTERVAL 1 HOUR + toIntervalMinute(number % 3), now64(6) - INTERVAL 2 MINUTE + toIntervalMicrosecond(number)
     FROM numbers({n:UInt32})`,
    { n: devices * 3 },
  );
}

const stored = async () => (await storage.query(`SELECT sum(sign) AS visits, uniqExact(visitKey) AS keys FROM ${identifier(database)}.visits`))[0] as { visits: number; keys: number };

test('only the holder of the lease builds: each visit is stored once, told of loads by both', async () => {
  await eventually('one of the two holds the lease', async () => leases.some((l) => l.holds()));
  await pageViews(50);
  for (const b of builders) b.changed(database);
  await eventually('the visits are built', async () => Number((await stored()).visits) === 50, 15_000);
  for (const b of builders) b.changed(database);
  await Bun.sleep(1500);
  // A visit built again (a new holder looks back from where the last one came to) leaves a
  // cancelled copy beside it, never a second visit.
  expect(await stored()).toMatchObject({ visits: 50, keys: 50 });
  const [most] = await storage.query(`SELECT max(n) AS n FROM (SELECT sum(sign) AS n FROM ${identifier(database)}.visits GROUP BY visitKey, start)`);
  expect(most).toEqual({ n: 1 });
  expect(await Promise.all(builders.map((b) => b.built(database)))).toEqual([true, true]);
});

test("an erasure through either deletes the erased keys' visits", async () => {
  await storage.command(`DELETE FROM ${identifier(database)}.events WHERE anonymousId IN ('device-1', 'device-2')`);
  for (const b of builders) await b.erased(database, ['device-1', 'device-2']);
  await eventually('the erased visits are gone', async () => Number((await stored()).visits) === 48, 15_000);
  const keys = await storage.query(`SELECT visitKey FROM ${identifier(database)}.visits WHERE visitKey IN ('device-1', 'device-2') GROUP BY visitKey HAVING sum(sign) > 0`);
  expect(keys).toEqual([]);
});
