import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { Analytics } from '@segment/analytics-node';
import { uniqueName } from '../helpers/engine-dir';
import { runQueries } from '../helpers/queries';
import { createWorkspace, sendEvents, startTestService, type TestService } from '../helpers/test-service';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(() => svc.stop());

const get = async (path: string, key = svc.privateKey) => {
  const res = await svc.request('GET', path, { key });
  return { status: res.status, body: (await res.json()) as any };
};

describe('persons through @segment/analytics-node', () => {
  test('anonymous pages, then identify and alias, then track: one person with every id and the traits', async () => {
    const analytics = new Analytics({ writeKey: svc.publicKey, host: svc.url, flushAt: 50, flushInterval: 60_000, maxRetries: 1 });
    const errors: unknown[] = [];
    analytics.on('error', (err) => errors.push(err));
    const anonymousId = uniqueName('sdk_anon');
    const userId = uniqueName('sdk_user');
    const newUserId = uniqueName('sdk_user_new');
    const t0 = Date.now() - 60_000;
    analytics.page({ anonymousId, name: 'Home', timestamp: new Date(t0) });
    analytics.page({ anonymousId, name: 'Pricing', timestamp: new Date(t0 + 1000) });
    analytics.identify({ userId, anonymousId, traits: { email: 'ada@example.com', plan: 'free' }, timestamp: new Date(t0 + 2000) });
    analytics.identify({ userId, traits: { plan: 'pro' }, timestamp: new Date(t0 + 3000) });
    analytics.alias({ userId: newUserId, previousId: userId, timestamp: new Date(t0 + 4000) });
    analytics.track({ userId: newUserId, event: 'Order Completed', properties: { revenue: 42 }, timestamp: new Date(t0 + 5000) });
    analytics.group({ userId: newUserId, groupId: `${newUserId}-acme`, traits: { seats: 12 }, timestamp: new Date(t0 + 6000) });
    await analytics.closeAndFlush({ timeout: 30_000 });
    expect(errors).toEqual([]);

    const { status, body } = await get(`/persons/${encodeURIComponent(newUserId)}`);
    expect(status).toBe(200);
    expect(body).toMatchObject({
      personId: newUserId,
      userId: newUserId,
      userIds: [userId, newUserId].sort(),
      anonymousIds: [anonymousId],
      traits: { email: 'ada@example.com', plan: 'pro' },
      eventCount: 7,
    });

    const events = await get(`/persons/${encodeURIComponent(newUserId)}/events?limit=3`);
    expect(events.status).toBe(200);
    expect(events.body.total).toBe(7);
    expect(events.body.results.map((e: any) => e.type)).toEqual(['group', 'track', 'alias']);
    const rest = await get(`/persons/${encodeURIComponent(newUserId)}/events?limit=10&offset=3`);
    expect(rest.body.results.map((e: any) => e.type)).toEqual(['identify', 'identify', 'page', 'page']);
    // First and last seen are the person's oldest and newest events, as stored (the service
    // corrects the SDK's timestamps by its clock's offset, per batch it sends).
    expect(body.lastSeen).toBe(events.body.results[0].timestamp);
    expect(body.firstSeen).toBe(rest.body.results.at(-1).timestamp);

    const group = await get(`/groups/${encodeURIComponent(`${newUserId}-acme`)}`);
    expect(group.status).toBe(200);
    expect(group.body).toMatchObject({ groupId: `${newUserId}-acme`, traits: { seats: 12 }, eventCount: 1, personCount: 1 });

    // The earlier ids are not persons of their own any more.
    expect((await get(`/persons/${encodeURIComponent(userId)}`)).status).toBe(404);
    expect((await get(`/persons/${encodeURIComponent(anonymousId)}`)).status).toBe(404);
  });
});

describe('GET /persons', () => {
  test('searches ids and traits, filters on traits, pages with the total', async () => {
    const tag = uniqueName('list');
    await sendEvents(
      svc,
      [1, 2, 3, 4, 5].map((i) => ({ type: 'identify', userId: `${tag}-${i}`, traits: { plan: i % 2 ? 'pro' : 'free', seats: i, tag }, timestamp: new Date(Date.now() - i * 1000).toISOString() })),
    );
    const byTag = await get(`/persons?search=${tag}&limit=2`);
    expect(byTag.status).toBe(200);
    expect(byTag.body.total).toBe(5);
    expect(byTag.body.results.map((p: any) => p.personId)).toEqual([`${tag}-1`, `${tag}-2`]);
    // A page of none still says how many there are (a count for a badge).
    expect((await get(`/persons?search=${tag}&limit=0`)).body).toMatchObject({ results: [], total: 5 });
    const filters = JSON.stringify([
      { property: 'tag', operator: 'eq', value: tag },
      { property: 'plan', operator: 'eq', value: 'pro' },
      { property: 'seats', operator: 'gte', value: 3 },
    ]);
    const pro = await get(`/persons?filters=${encodeURIComponent(filters)}`);
    expect(pro.body.results.map((p: any) => p.personId)).toEqual([`${tag}-3`, `${tag}-5`]);
    expect(pro.body.total).toBe(2);
  });

  test('refuses a malformed filter list with a pointer to the problem', async () => {
    const bad = await get(`/persons?filters=${encodeURIComponent(JSON.stringify([{ property: 'plan', operator: 'like', value: 'x' }]))}`);
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0]).toMatchObject({ parameter: 'filters' });
    expect((await get('/persons?filters=not-json')).status).toBe(400);
    const list = await get(`/persons?filters=${encodeURIComponent(JSON.stringify([{ property: 'plan', operator: 'in', value: 'x' }]))}`);
    expect(list.status).toBe(400);
    expect(list.body.errors[0].pointer).toBe('/0/value');
    const cohort = await get('/persons?cohort=no-such-cohort');
    expect(cohort.status).toBe(400);
  });

  test("another workspace's persons are not reachable", async () => {
    const other = await createWorkspace(svc, { name: uniqueName('persons_other') });
    const tag = uniqueName('private_person');
    await sendEvents(svc, [{ type: 'identify', userId: tag, traits: { secret: 'x' } }]);
    expect((await get(`/persons/${tag}`)).status).toBe(200);
    expect((await get(`/persons/${tag}`, other.privateApiKey)).status).toBe(404);
    expect((await get(`/persons?search=${tag}`, other.privateApiKey)).body.total).toBe(0);
    const { status } = await runQueries(svc, [`SELECT count() FROM ${svc.config.defaultWorkspaceDatabase}.persons`], other.privateApiKey);
    expect(status).toBe(403);
  });
});
