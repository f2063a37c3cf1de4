import { afterAll, beforeAll, expect } from 'bun:test';
import { testInProcess } from '../helpers/deno-service';
import { eventually } from '../helpers/eventually';
import { runQueries } from '../helpers/queries';
import { listEvents, sendEvents, startTestService, type TestService } from '../helpers/test-service';

/** About two seconds of engine time: 40 rows, each sleeping 50 ms. */
const SLOW = 'SELECT sum(sleepEachRow(0.05)) AS s FROM numbers(40)';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({ QUERY_CONCURRENCY: '1', QUERY_QUEUE_MAX: '0' });
});
afterAll(() => svc.stop());

/** Resolves once the engine reports the slow statement as running. */
async function slowStatementRunning(): Promise<void> {
  await eventually('the slow statement is running', async () => {
    const rows = await svc.storage.query("SELECT count() AS n FROM system.processes WHERE query LIKE '%sleepEachRow(0.05)%' AND query NOT LIKE '%system.processes%'");
    return Number(rows[0]!.n) > 0;
  });
}

testInProcess('POST /events and GET /events complete while a long statement is still running', async () => {
  const finished: string[] = [];
  const slow = runQueries(svc, [SLOW]).then((res) => {
    expect(res.status).toBe(200);
    finished.push('statement');
  });
  await slowStatementRunning();
  await sendEvents(svc, [{ type: 'track', event: 'during-statement' }]);
  finished.push('insert');
  const { body } = await listEvents(svc, 'event=during-statement');
  expect(body.total).toBe(1);
  finished.push('listing');
  await slow;
  expect(finished).toEqual(['insert', 'listing', 'statement']);
});

testInProcess('when every sandbox is busy and the queue is full, a statement is shed with 503 and Retry-After', async () => {
  const slow = runQueries(svc, [SLOW]);
  await slowStatementRunning();
  const res = await svc.request('POST', '/queries', { key: svc.privateKey, body: { queries: ['SELECT 1'] } });
  expect(res.status).toBe(503);
  expect(res.headers.get('retry-after')).toBe('1');
  expect(((await res.json()) as any).detail).toContain('too many queries are waiting');
  expect((await slow).status).toBe(200);
  // Once the sandbox is free again, statements run.
  expect((await runQueries(svc, ['SELECT 1 AS one'])).body.results[0].results).toEqual([{ one: 1 }]);
});
