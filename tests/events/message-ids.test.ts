import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { createWorkspace, listEvents, sendEvents, startTestService, type TestService } from '../helpers/test-service';
import { uniqueName } from '../helpers/engine-dir';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(() => svc.stop());

const track = (messageId: string, extra: Record<string, unknown> = {}) => ({ type: 'track', event: 'dedup', messageId, ...extra });

async function stored(on: TestService, messageId: string, key = on.privateKey): Promise<number> {
  const { status, body } = await listEvents(on, `messageId=${encodeURIComponent(messageId)}`, key);
  expect(status).toBe(200);
  return body.total;
}

describe('de-duplication by messageId', () => {
  test('a repeat is acknowledged with the uuid of the stored copy, and not stored again', async () => {
    const id = uniqueName('msg');
    const first = await sendEvents(svc, [track(id, { properties: { n: 1 } })]);
    const again = await sendEvents(svc, [track(id, { properties: { n: 2 } })]);
    expect(again.results[0]!.uuid).toBe(first.results[0]!.uuid);
    expect(first.results[0]!.messageId).toBe(id);
    expect(await stored(svc, id)).toBe(1);
    const { body } = await listEvents(svc, `messageId=${id}`);
    expect(body.results[0].properties).toEqual({ n: 1 });
  });

  test('repeats within one batch, and in many concurrent requests, are stored once', async () => {
    const inBatch = uniqueName('msg');
    await sendEvents(svc, [track(inBatch), track(inBatch), track(inBatch)]);
    expect(await stored(svc, inBatch)).toBe(1);
    const concurrent = uniqueName('msg');
    const answers = await Promise.all(Array.from({ length: 20 }, () => sendEvents(svc, [track(concurrent), track(uniqueName('msg'))])));
    expect(new Set(answers.map((a) => a.results[0]!.uuid)).size).toBe(1);
    expect(await stored(svc, concurrent)).toBe(1);
  });

  test('events without a messageId are never taken for repeats', async () => {
    const tag = uniqueName('no_msg');
    await sendEvents(svc, [{ type: 'track', event: tag }, { type: 'track', event: tag }]);
    await sendEvents(svc, [{ type: 'track', event: tag }]);
    expect((await listEvents(svc, `event=${tag}`)).body.total).toBe(3);
  });

  test('each workspace has its own messageIds', async () => {
    const other = await createWorkspace(svc, { name: uniqueName('dedup') });
    const id = uniqueName('msg');
    const here = await sendEvents(svc, [track(id)]);
    const there = await sendEvents(svc, [track(id)], other.publicApiKey);
    expect(there.results[0]!.uuid).not.toBe(here.results[0]!.uuid);
    expect(await stored(svc, id)).toBe(1);
    expect(await stored(svc, id, other.privateApiKey)).toBe(1);
  });

  test('a messageId that is empty, not a string or over 200 characters is refused', async () => {
    for (const messageId of ['', 42, 'x'.repeat(201)]) {
      const res = await svc.request('POST', '/events', { key: svc.publicKey, body: { events: [{ type: 'track', event: 'dedup', messageId }] } });
      expect(res.status).toBe(400);
      expect(((await res.json()) as { errors: unknown }).errors).toEqual([{ pointer: '/events/0/messageId', detail: 'must be a string of 1 to 200 characters' }]);
    }
  });

  test('repeats are recognised after a restart, and beyond what memory holds', async () => {
    // Memory holds 2 ids: the others are found in the table, by its index.
    const before = await startTestService({ DEDUP_MAX_MESSAGE_IDS: '2' });
    const ids = Array.from({ length: 6 }, () => uniqueName('msg'));
    await sendEvents(before, ids.map((id) => track(id)));
    await sendEvents(before, ids.map((id) => track(id)));
    await before.stop();
    for (const [i, max] of ['2', '1000'].entries()) {
      const after = await startTestService({ ...before.settings, DEDUP_MAX_MESSAGE_IDS: max });
      try {
        const answer = await sendEvents(after, [...ids, uniqueName('msg')].map((id) => track(id)));
        expect(answer.results).toHaveLength(7);
        for (const id of ids) expect(await stored(after, id)).toBe(1);
        // One new message per restart besides the repeats.
        expect((await listEvents(after, 'event=dedup')).body.total).toBe(ids.length + i + 1);
      } finally {
        await after.stop();
      }
    }
  });
});
