/**
 * The cost of cross-process messageId de-duplication (docs/scaling.md): the look-up a process
 * on a shared server makes for the ids of each insert that it has not seen, timed on the engine
 * alone over an events table (the service's own schema) holding `rows` events with a messageId,
 * all within the window, for 1, 100 and 1000 new ids.
 * Usage: bun bench/dedup-lookup.ts <empty dataDir> [rows=2000000]
 */
import { Session } from 'chdb';
import { plainTarget } from '../src/storage/migrations/runner';
import { workspaceMigrations } from '../src/storage/migrations/workspace';

const [dataDir, rowsArg] = process.argv.slice(2);
if (!dataDir) throw new Error('usage: bun bench/dedup-lookup.ts <empty dataDir> [rows]');
const rows = Number(rowsArg ?? 2_000_000);
const INSERTS = 20;
const RUNS = 5;

const session = new Session(dataDir);
session.query('CREATE DATABASE IF NOT EXISTS dedup');
for (const m of workspaceMigrations) for (const sql of m.statements(plainTarget('dedup'))) session.query(sql);
// Spread over the last hours, in inserts of the service's size range, then merged.
for (let i = 0; i < INSERTS; i++) {
  const from = (i * rows) / INSERTS;
  session.query(
    `INSERT INTO dedup.events (uuid, type, messageId, event, userId, timestamp, parsedAt)
     SELECT generateUUIDv4(), 'track', concat('m-', toString(number)), 'e', toString(number % 10000),
       now64(6) - toIntervalSecond(intDiv(${rows} - number, 50)), now64(6) - toIntervalSecond(intDiv(${rows} - number, 50))
     FROM numbers(${from}, ${rows / INSERTS})`,
  );
}
session.query('OPTIMIZE TABLE dedup.events FINAL');
for (const ids of [1, 100, 1000]) {
  const list = Array.from({ length: ids }, (_, i) => `'new-${i}-${crypto.randomUUID()}'`).join(',');
  // The statement of RecentMessageIds.storedBefore on a shared server.
  const sql = `SELECT DISTINCT messageId FROM dedup.events WHERE messageId IN (${list}) AND parsedAt >= now64(6) - INTERVAL 1 DAY`;
  session.query(sql);
  const started = performance.now();
  for (let run = 0; run < RUNS; run++) session.query(sql);
  console.log(`${rows} events in the window, ${ids} new ids: ${((performance.now() - started) / RUNS).toFixed(1)} ms a look-up`);
}
session.close();
