import { afterAll, expect, test } from 'bun:test';
import { listEvents, sendEvents, startTestService, type TestService } from '../helpers/test-service';
import { regulate, settledRegulation } from './helpers';

const services: TestService[] = [];
afterAll(async () => {
  for (const s of services) await s.stop().catch(() => {});
});

async function metricValue(svc: TestService): Promise<number> {
  const text = await (await svc.request('GET', '/metrics', { key: svc.privateKey })).text();
  const line = text.split('\n').find((l) => l.startsWith(`analytics_events_suppressed_total{workspace="${svc.settings.DEFAULT_WORKSPACE_DATABASE}"}`));
  return line ? Number(line.split(' ').at(-1)) : 0;
}

/** One event of `userId` through POST /events and one through Segment's /v1/track, both acknowledged. */
async function sendBoth(svc: TestService, userId: string, tag: string): Promise<void> {
  await sendEvents(svc, [{ type: 'track', event: tag, userId }]);
  const res = await svc.request('POST', '/v1/track', { key: svc.publicKey, body: { userId, event: tag } });
  expect(res.status).toBe(200);
}

const stored = async (svc: TestService, tag: string) => (await listEvents(svc, `event=${tag}`)).body.total;

test('SUPPRESS drops new events of the ids on both collection routes, across a restart; UNSUPPRESS restores collection', async () => {
  const first = await startTestService();
  services.push(first);
  const id = await regulate(first, first.privateKey, 'SUPPRESS', 'userId', ['quiet']);
  expect((await settledRegulation(first, first.privateKey, id)).status).toBe('finished');
  await sendBoth(first, 'quiet', 'before-restart');
  await sendBoth(first, 'loud', 'before-restart');
  // Only the other user's two events are stored; the suppressed ones are counted.
  expect(await stored(first, 'before-restart')).toBe(2);
  expect(await metricValue(first)).toBe(2);
  await first.stop();

  const second = await startTestService(first.settings);
  services.push(second);
  await sendBoth(second, 'quiet', 'after-restart');
  expect(await stored(second, 'after-restart')).toBe(0);
  expect(await metricValue(second)).toBe(2);

  await settledRegulation(second, second.privateKey, await regulate(second, second.privateKey, 'UNSUPPRESS', 'userId', ['quiet']));
  await sendBoth(second, 'quiet', 'unsuppressed');
  expect(await stored(second, 'unsuppressed')).toBe(2);
});
