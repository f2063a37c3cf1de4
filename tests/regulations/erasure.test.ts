import { afterAll, beforeAll, expect } from 'bun:test';
import { SERVED_BY_DENO, testInProcess } from '../helpers/deno-service';
import { rowsOf } from '../helpers/queries';
import { createWorkspace, listEvents, sendEvents, startTestService, type CreatedWorkspace, type TestService } from '../helpers/test-service';
import { regulate, settledRegulation } from './helpers';

const USERS = 1000;
const EVENTS = 100_000;
const ERASED = Array.from({ length: 10 }, (_, i) => `user-${i * 97}`);
/** Events per POST of the ingestion that runs during the erasure. */
const LIVE_BATCH = 50;

let svc: TestService;
let ws: CreatedWorkspace;
beforeAll(async () => {
  svc = await startTestService();
  ws = await createWorkspace(svc, { name: `Erasure ${Date.now()}` });
  if (SERVED_BY_DENO) return;
  // The 100,000 events go straight into the table: the test is about erasing them, not sending them.
  await svc.storage.command(
    `INSERT INTO ${ws.databaseName}.events (uuid, type, event, userId, properties, timestamp, parsedAt)
     SELECT generateUUIDv4(), 'track', 'seed', concat('user-', toString(number % ${USERS})), '{"n":1}',
            now64(6) - toIntervalSecond(number), now64(6)
     FROM numbers(${EVENTS})`,
  );
});
afterAll(() => svc?.stop());

/** Sends batches of other users' events until `until` resolves; answers what was acknowledged and the slowest answer. */
async function ingestUntil(until: Promise<unknown>): Promise<{ events: number; seconds: number; slowestMs: number }> {
  let done = false;
  until.finally(() => (done = true));
  const started = performance.now();
  let events = 0;
  let slowestMs = 0;
  for (let batch = 0; !done; batch++) {
    const t0 = performance.now();
    await sendEvents(svc, Array.from({ length: LIVE_BATCH }, (_, i) => ({ type: 'track', event: 'live', userId: `live-${(batch * LIVE_BATCH + i) % 100}` })), ws.publicApiKey);
    slowestMs = Math.max(slowestMs, performance.now() - t0);
    events += LIVE_BATCH;
  }
  return { events, seconds: (performance.now() - started) / 1000, slowestMs };
}

testInProcess(`DELETE of 10 users among ${EVENTS.toLocaleString('en')} events of ${USERS}: theirs gone, the others unchanged, ingestion going on meanwhile`, async () => {
  const baseline = await ingestUntil(Bun.sleep(1000));
  const erasing = (async () => settledRegulation(svc, ws.privateApiKey, await regulate(svc, ws.privateApiKey, 'DELETE', 'userId', ERASED)))();
  const during = await ingestUntil(erasing);
  const regulation = await erasing;
  expect(regulation.status).toBe('finished');
  expect(regulation.eventsDeleted).toBe(10 * (EVENTS / USERS));
  const rate = (r: { events: number; seconds: number }) => Math.round(r.events / r.seconds);
  console.log(
    `erasure: ${regulation.eventsDeleted} events of 10 users deleted in ${Date.parse(regulation.finishedAt) - Date.parse(regulation.createdAt)} ms; ` +
      `ingestion during it ${during.events} events in ${during.seconds.toFixed(2)} s (${rate(during)}/s, slowest batch ${Math.round(during.slowestMs)} ms), ` +
      `before it ${rate(baseline)}/s (slowest ${Math.round(baseline.slowestMs)} ms)`,
  );
  expect(during.events).toBeGreaterThan(0);

  for (const userId of ERASED) expect((await listEvents(svc, `userId=${userId}`, ws.privateApiKey)).body.total).toBe(0);
  const [counts] = await rowsOf(
    svc,
    `SELECT countIf(userId IN (${ERASED.map((u) => `'${u}'`).join(',')})) AS erased, uniqExactIf(userId, event = 'seed') AS users,
            countIf(event = 'seed') AS seeded, countIf(event = 'live') AS live FROM events`,
    ws.privateApiKey,
  );
  expect(counts).toEqual({ erased: 0, users: USERS - 10, seeded: EVENTS - 10 * (EVENTS / USERS), live: baseline.events + during.events });
  // Nor in an export of the whole table.
  const exported = await svc.request('GET', '/events/export?format=ndjson', { key: ws.privateApiKey });
  const lines = (await exported.text()).split('\n').filter((l) => l);
  expect(lines.length).toBe(counts!.seeded + counts!.live);
  expect(lines.some((l) => ERASED.includes(JSON.parse(l).userId))).toBe(false);
  const [spread] = await rowsOf(svc, "SELECT min(c) AS least, max(c) AS most FROM (SELECT userId, count() AS c FROM events WHERE event = 'seed' GROUP BY userId)", ws.privateApiKey);
  expect(spread).toEqual({ least: EVENTS / USERS, most: EVENTS / USERS });
});
