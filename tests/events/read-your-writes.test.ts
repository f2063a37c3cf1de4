/**
 * Read-your-writes over the ingest log: the loader is told to wait ten minutes (and to gather a
 * million rows) before a load of its own accord, so only the reads' barrier can make an event
 * acknowledged a moment ago visible. Many clients at once each send an event and read it back at
 * once, through GET /events and POST /queries.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { startTestService, type TestService } from '../helpers/test-service';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({ INGEST_LOAD_MAX_AGE_MS: '600000', INGEST_FLUSH_ROWS: '1000000' });
});
afterAll(() => svc.stop());

const CLIENTS = 16;
const ROUNDS = 8;

test('an event acknowledged with 201 is seen by a read sent right after, under concurrent load', async () => {
  let reads = 0;
  const client = async (c: number) => {
    for (let round = 0; round < ROUNDS; round++) {
      const res = await svc.request('POST', '/events', { key: svc.publicKey, body: { events: [{ type: 'track', event: 'ryw', userId: `c${c}`, properties: { round } }] } });
      expect(res.status).toBe(201);
      const uuid = ((await res.json()) as { results: Array<{ uuid: string }> }).results[0]!.uuid;
      const listed = await svc.request('GET', `/events?uuid=${uuid}`, { key: svc.privateKey });
      expect(((await listed.json()) as { total: number }).total).toBe(1);
      const counted = await svc.request('POST', '/queries', { key: svc.privateKey, body: { queries: [`SELECT count() AS n FROM events WHERE userId = 'c${c}'`] } });
      const rows = ((await counted.json()) as { results: Array<{ results: Array<{ n: number }> }> }).results[0]!.results;
      expect(Number(rows[0]!.n)).toBe(round + 1);
      reads += 2;
    }
  };
  await Promise.all(Array.from({ length: CLIENTS }, (_, c) => client(c)));
  expect(reads).toBe(CLIENTS * ROUNDS * 2);
});

test('without a read, an acknowledged event waits in the log (the loader is not what made the reads see them)', async () => {
  const waiting = async () => {
    const text = await (await svc.request('GET', '/metrics', { key: svc.privateKey })).text();
    return Number(/^analytics_ingest_queue_events (\d+)/m.exec(text)![1]);
  };
  expect((await svc.request('POST', '/events', { key: svc.publicKey, body: { events: [{ type: 'track', event: 'unread' }] } })).status).toBe(201);
  expect(await waiting()).toBe(1);
  expect(((await (await svc.request('GET', '/events?event=unread', { key: svc.privateKey })).json()) as { total: number }).total).toBe(1);
  expect(await waiting()).toBe(0);
});
