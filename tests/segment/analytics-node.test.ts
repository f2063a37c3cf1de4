import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { Analytics } from '@segment/analytics-node';
import { uniqueName } from '../helpers/engine-dir';
import { rowsOf } from '../helpers/queries';
import { listEvents, startTestService, type TestService } from '../helpers/test-service';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(() => svc.stop());

/** Segment's own Node SDK, pointed at the service; every error it meets is kept. */
function segmentClient(on: TestService) {
  const analytics = new Analytics({ writeKey: on.publicKey, host: on.url, flushAt: 50, flushInterval: 60_000, maxRetries: 1 });
  const errors: unknown[] = [];
  analytics.on('error', (err) => errors.push(err));
  return { analytics, errors };
}

describe('@segment/analytics-node against the service', () => {
  test('track, identify, page, screen, group and alias, then flush: every call stored with its fields', async () => {
    const { analytics, errors } = segmentClient(svc);
    const userId = uniqueName('sdk_user');
    analytics.identify({ userId, traits: { email: 'ada@example.com', plan: 'pro' } });
    analytics.track({ userId, event: 'Order Completed', properties: { revenue: 42.5, items: 3 }, context: { ip: '203.0.113.7' } });
    analytics.page({ userId, category: 'Docs', name: 'Pricing', properties: { path: '/pricing' } });
    analytics.screen({ userId, name: 'Home', properties: { variant: 'b' } });
    analytics.group({ userId, groupId: 'acme', traits: { seats: 12 } });
    analytics.alias({ userId, previousId: 'anon-42' });
    await analytics.closeAndFlush({ timeout: 30_000 });
    expect(errors).toEqual([]);

    const { body } = await listEvents(svc, `userId=${userId}&orderByField=parsedAt&orderByDirection=asc`);
    const byType = Object.fromEntries((body.results as Array<Record<string, any>>).map((e) => [e.type, e]));
    expect(Object.keys(byType).sort()).toEqual(['alias', 'group', 'identify', 'page', 'screen', 'track']);
    expect(byType.identify.traits).toEqual({ email: 'ada@example.com', plan: 'pro' });
    expect(byType.track.event).toBe('Order Completed');
    expect(byType.track.properties).toEqual({ revenue: 42.5, items: 3 });
    expect(byType.track.context.ip).toBe('203.0.113.7');
    expect(byType.track.context.library.name).toBe('@segment/analytics-node');
    expect(byType.page.properties).toEqual({ path: '/pricing', name: 'Pricing', category: 'Docs' });
    expect(byType.screen.properties).toEqual({ variant: 'b', name: 'Home' });
    expect(byType.group.groupId).toBe('acme');
    expect(byType.group.traits).toEqual({ seats: 12 });
    expect(byType.alias.properties).toEqual({ previousId: 'anon-42' });
    for (const e of body.results) expect(e.messageId).toEqual(expect.any(String));

    const rows = await rowsOf(
      svc,
      `SELECT type, JSONExtract(properties, 'revenue', 'Float64') AS revenue FROM events WHERE userId = '${userId}' AND type IN ('track', 'screen', 'alias') ORDER BY type`,
    );
    expect(rows).toEqual([
      { type: 'alias', revenue: 0 },
      { type: 'screen', revenue: 0 },
      { type: 'track', revenue: 42.5 },
    ]);
  });

  test('the same batch sent twice with the same messageIds is stored once, also after a restart', async () => {
    const before = await startTestService();
    const userId = uniqueName('sdk_user');
    const batch = {
      batch: Array.from({ length: 5 }, (_, i) => ({ type: 'track', userId, event: 'Retried', messageId: `${userId}-${i}`, properties: { i } })),
      sentAt: new Date().toISOString(),
    };
    const send = (on: TestService) =>
      fetch(`${on.url}/v1/batch`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Basic ${btoa(`${on.publicKey}:`)}` },
        body: JSON.stringify(batch),
      });
    expect((await send(before)).status).toBe(200);
    expect((await send(before)).status).toBe(200);
    expect((await listEvents(before, `userId=${userId}`)).body.total).toBe(5);
    await before.stop();
    const after = await startTestService(before.settings);
    try {
      expect((await send(after)).status).toBe(200);
      const { body } = await listEvents(after, `userId=${userId}&orderByField=parsedAt&orderByDirection=asc`);
      expect(body.total).toBe(5);
      expect(body.results.map((e: any) => e.properties.i)).toEqual([0, 1, 2, 3, 4]);
    } finally {
      await after.stop();
    }
  });
});
