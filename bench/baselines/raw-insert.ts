/**
 * Baseline: the engine alone. Inserts the benchmark's events, as the lines the service inserts
 * (same format, same settings), straight into chDB for `seconds`, `rows` per insert and
 * `concurrency` inserts at a time (each on its own session); prints rows per second. The
 * payloads are built before the clock starts, so only the engine is measured.
 * Usage: bun bench/baselines/raw-insert.ts <dataDir> <seconds> <rows> <concurrency>
 */
import { Session } from 'chdb';
import { acceptEvent } from '../../src/events/event-rows';
import type { EventDTO } from '../../src/events/model';
import { MonotonicClock } from '../../src/monotonic-clock';
import { plainTarget } from '../../src/storage/migrations/runner';
import { workspaceMigrations } from '../../src/storage/migrations/workspace';
import { INSERT_SETTINGS } from '../../src/storage/storage';
import { mixEvent } from '../lib/event-mix';

const [dataDir, seconds, rowsPerInsert, concurrency] = process.argv.slice(2).map((a, i) => (i === 0 ? a : Number(a))) as [string, number, number, number];
const PAYLOADS = 8;

const sessions = Array.from({ length: concurrency }, () => new Session(dataDir));
const session = sessions[0]!;
await session.queryAsync('CREATE DATABASE IF NOT EXISTS raw');
for (const m of workspaceMigrations) for (const sql of m.statements(plainTarget('raw'))) await session.queryAsync(sql);

const clock = new MonotonicClock();
const payloads = Array.from({ length: PAYLOADS }, (_, p) => {
  let body = '';
  for (let i = 0; i < rowsPerInsert; i++) body += acceptEvent(mixEvent(p * rowsPerInsert + i) as EventDTO, clock.next(), 'raw').json + '\n';
  return Buffer.from(body);
});

const started = performance.now();
let rows = 0;
await Promise.all(
  sessions.map(async (s, n) => {
    for (let k = n; performance.now() - started < seconds * 1000; k++) {
      await s.insert({ table: 'raw.events', format: 'JSONEachRow', values: payloads[k % PAYLOADS]!, settings: INSERT_SETTINGS });
      rows += rowsPerInsert;
    }
  }),
);
const elapsed = (performance.now() - started) / 1000;
for (const s of sessions) s.close();
console.log(JSON.stringify({ rowsPerSecond: rows / elapsed }));
