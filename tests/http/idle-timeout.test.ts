import { afterAll, beforeAll, expect, test } from 'bun:test';
import { startTestService, type TestService } from '../helpers/test-service';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({ HTTP_IDLE_TIMEOUT_MS: '1000' });
});
afterAll(() => svc.stop());

test('a request handled for longer than HTTP_IDLE_TIMEOUT_MS gets its answer, not a reset', async () => {
  const res = await svc.request('POST', '/queries', { key: svc.privateKey, body: { queries: ['SELECT sleepEachRow(1) FROM numbers(3)'] } });
  expect(res.status).toBe(200);
  expect(((await res.json()) as any).results[0].results).toHaveLength(3);
});
