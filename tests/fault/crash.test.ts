/**
 * SIGKILL mid-stream, at four moments, restarting on the same DATA_DIR each time: every event
 * that got a 201 is stored, no request is stored in part, and the webhook delivers every stored
 * event after the last restart, first arrivals in acceptance order.
 */
import { expect, test } from 'bun:test';
import { startWebhookReceiver } from '../fixtures/webhook-receiver';
import {
  api,
  drive,
  firstArrivalsInOrder,
  mergeOutcomes,
  report,
  scaled,
  scenarioDir,
  startService,
  statusSummary,
  storedByTag,
  storedUuids,
  undeliveredCount,
  verify,
  waitUntil,
  type DriveOptions,
  type Outcomes,
} from './harness';

const SETTINGS = {
  // Retries come quickly, and all of them hold later events back, so order is kept throughout.
  WEBHOOK_RETRY_SCHEDULE: '100ms,200ms,500ms,1s,1s,1s,1s,1s,1s,1s',
  WEBHOOK_BLOCKING_RETRIES: '10',
};

interface Moment {
  name: string;
  load: DriveOptions;
  /** Killed once this holds (or after 5 s of waiting for it). */
  killWhen(outcomes: Outcomes): boolean;
  /** The receiver answers slowly, so a delivery is in flight. */
  slowReceiver?: boolean;
}

test('SIGKILL during a flush, between flushes, mid-stream and during a delivery loses no acknowledged event', async () => {
  const dir = scenarioDir('crash');
  let slow = false;
  let open = 0;
  const receiver = await startWebhookReceiver(async () => {
    open++;
    if (slow) await Bun.sleep(300);
    open--;
    return new Response('ok');
  });
  const moments: Moment[] = [
    { name: 'during a batched flush', load: { connections: 16, eventsPerRequest: 500 }, killWhen: (o) => o.inFlight > 0 },
    { name: 'between flushes', load: { connections: 2, eventsPerRequest: 10, pauseMs: 30 }, killWhen: (o) => o.inFlight === 0 },
    { name: 'single events mid-stream', load: { connections: 32, eventsPerRequest: 1 }, killWhen: (o) => o.inFlight > 0 },
    { name: 'during a webhook delivery', load: { connections: 4, eventsPerRequest: 20, pauseMs: 5 }, killWhen: () => open > 0, slowReceiver: true },
  ];

  let port: number | undefined;
  const rounds: Outcomes[] = [];
  for (const [i, moment] of moments.entries()) {
    const svc = await startService(dir, SETTINGS, port);
    port = svc.port;
    if (i === 0) await api(svc.url, 'POST', '/webhooks', { url: receiver.url, enableBatching: true, eventNames: ['fault'] });
    slow = moment.slowReceiver ?? false;
    const load = drive(svc.url, { ...moment.load, keepUuids: true });
    await Bun.sleep(scaled(3000, 1000));
    const reached = await waitUntil(() => moment.killWhen(load.outcomes), 5000, 1);
    await svc.kill();
    const outcomes = await load.stop();
    rounds.push(outcomes);
    report(`crash ${moment.name}`, { killedAtTheMoment: String(reached), answers: statusSummary(outcomes) });
  }
  slow = false;

  const svc = await startService(dir, SETTINGS, port);
  const all = mergeOutcomes(rounds);
  const verdict = verify(all, await storedByTag(svc.url));
  const stored = await storedUuids(svc.url);
  const storedSet = new Set(stored);
  const ackedUuidsMissing = [...all.uuids.values()].flat().filter((uuid) => !storedSet.has(uuid)).length;
  await waitUntil(() => new Set(receiver.events().map((e) => e.uuid)).size >= stored.length, 60_000);
  const arrivals = receiver.events().map((e) => e.uuid as string);
  const undelivered = undeliveredCount(stored, arrivals);
  report('crash', { ...verdict, ackedUuidsMissing, storedEvents: stored.length, webhookArrivals: arrivals.length, undelivered });

  expect(verdict.acknowledged).toBeGreaterThan(0);
  expect(verdict).toMatchObject({ lost: 0, partial: 0, duplicated: 0, storedDespiteRefusal: 0 });
  expect(ackedUuidsMissing).toBe(0);
  expect(undelivered).toBe(0);
  expect(firstArrivalsInOrder(arrivals, stored)).toBe(true);
  await svc.terminate();
  await receiver.stop();
}, 300_000);
