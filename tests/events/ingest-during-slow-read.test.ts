import { afterAll, beforeAll, expect } from 'bun:test';
import { testInProcess } from '../helpers/deno-service';
import { sendEvents, startTestService, type TestService } from '../helpers/test-service';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(() => svc.stop());

testInProcess('POST /events completes while a slow read is still running on the engine', async () => {
  const finished: string[] = [];
  // About two seconds of engine time on a read session: one row per block, each sleeping.
  const slow = svc.storage
    .query('SELECT sum(sleepEachRow(0.05)) AS s FROM numbers(40) SETTINGS max_block_size = 1', {}, 'read')
    .then(() => finished.push('slow read'));
  await Bun.sleep(50); // let the read reach the engine before the insert is sent
  await sendEvents(svc, [{ type: 'track', event: 'during-slow-read' }]);
  finished.push('insert');
  await slow;
  expect(finished).toEqual(['insert', 'slow read']);
});
