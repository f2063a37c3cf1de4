import { afterAll, beforeAll, expect, test } from 'bun:test';
import { startWebhookReceiver, type WebhookReceiver } from '../fixtures/webhook-receiver';
import { sendEvents, startTestService, type TestService } from '../helpers/test-service';
import { createWebhook } from '../helpers/webhooks';
import { regulate, settledRegulation } from './helpers';

let svc: TestService;
let receiver: WebhookReceiver;
/** Releases the receiver's first answer: until then the webhook's later events wait in memory. */
const firstAnswer = Promise.withResolvers<void>();
beforeAll(async () => {
  svc = await startTestService();
  receiver = await startWebhookReceiver((n) => (n === 1 ? firstAnswer.promise.then(() => new Response('ok')) : new Response('ok')));
});
afterAll(async () => {
  firstAnswer.resolve();
  await svc?.stop();
  await receiver?.stop();
});

test('a DELETE drops the erased subjects\' webhook events that were not sent yet', async () => {
  await createWebhook(svc, { url: receiver.url });
  await sendEvents(svc, [{ type: 'track', event: 'first', userId: 'keep' }]);
  await receiver.waitFor(1);
  // Held behind the first delivery, in the webhook's memory.
  await sendEvents(svc, [
    { type: 'track', event: 'erased', userId: 'forget-me' },
    { type: 'track', event: 'kept', userId: 'keep' },
    { type: 'track', event: 'erased', userId: 'forget-me' },
  ]);
  const regulation = await settledRegulation(svc, svc.privateKey, await regulate(svc, svc.privateKey, 'DELETE', 'userId', ['forget-me']));
  expect(regulation).toMatchObject({ status: 'finished', eventsDeleted: 2 });
  firstAnswer.resolve();
  await receiver.waitFor(2);
  // A later event shows the queue has moved past where the erased ones were.
  await sendEvents(svc, [{ type: 'track', event: 'last', userId: 'keep' }]);
  await receiver.waitFor(3);
  expect(receiver.events().map((e) => e.event)).toEqual(['first', 'kept', 'last']);
});
