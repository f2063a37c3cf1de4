import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { Analytics } from '@segment/analytics-node';
import { UNKNOWN_CATALOG_ENTRY } from '../../src/catalog/problems';
import { identifier } from '../../src/storage/storage';
import { uniqueName } from '../helpers/engine-dir';
import { testInProcess } from '../helpers/deno-service';
import { eventually } from '../helpers/eventually';
import { rowsOf } from '../helpers/queries';
import { createWorkspace, sendEvents, startTestService, type CreatedWorkspace, type TestService } from '../helpers/test-service';
import { regulate, settledRegulation } from '../regulations/helpers';
import { catalogOf as catalogOfService, DAY, DAY0, expectAgreement as expectAgreementOn, randomLog, storedEvents as storedEventsOf } from './catalog-agreement';
import { referenceCatalog } from './catalog-reference';

/**
 * The event catalog on the real service: what it observed of a seeded random log (sent through
 * POST /events and through @segment/analytics-node) against a plain computation over the stored
 * events, across a restart and an upgrade (the catalog built from events stored before it); its
 * curated fields; bad input; its table read through SQL.
 */

let svc: TestService;
let a: CreatedWorkspace;
let b: CreatedWorkspace;

async function call(key: string, method: string, path: string, body?: unknown) {
  const res = await svc.request(method, path, { key, body });
  return { status: res.status, type: res.headers.get('content-type'), body: (await res.json()) as any };
}
const catalogOf = (key: string, what: 'events' | 'properties', query = '') => catalogOfService(svc, key, what, query);
const expectAgreement = (ws: CreatedWorkspace) => expectAgreementOn(svc, ws);
const storedEvents = (key: string) => storedEventsOf(svc, key);

beforeAll(async () => {
  svc = await startTestService();
  a = await createWorkspace(svc, { name: uniqueName('catalog-a') });
  b = await createWorkspace(svc, { name: uniqueName('catalog-b') });
  const log = randomLog(42, 600);
  for (let i = 0; i < log.length; i += 150) await sendEvents(svc, log.slice(i, i + 150), a.publicApiKey);
  // Segment's door, from Segment's own SDK: its library names itself in context.library.
  const analytics = new Analytics({ writeKey: a.publicApiKey, host: svc.url, flushAt: 20, flushInterval: 60_000, maxRetries: 1 });
  for (let i = 0; i < 30; i++) analytics.track({ userId: `s${i % 3}`, event: 'Order Completed', properties: { revenue: i, currency: 'EUR' }, timestamp: new Date(DAY0 + i * 60_000) });
  await analytics.closeAndFlush({ timeout: 30_000 });
});
afterAll(() => svc?.stop());

describe('the discovered catalog', () => {
  test('agrees with a plain computation over the stored events: types and their counts, volume, first and last seen, SDKs, examples', async () => {
    await expectAgreement(a);
    const events = await catalogOf(a.privateApiKey, 'events');
    expect(events.find((e) => e.name === 'Order Completed').libraries).toContain('@segment/analytics-node');
    const plan = (await catalogOf(a.privateApiKey, 'properties', '&search=PLAN')).map((p) => [p.source, p.name]);
    expect(plan).toEqual([['properties', 'plan']]);
    expect((await catalogOf(a.privateApiKey, 'properties')).find((p) => p.name === 'plan').types.map((t: any) => t.type).sort()).toEqual(['boolean', 'number', 'string']);
    // Another workspace's catalog holds none of it.
    expect(await catalogOf(b.privateApiKey, 'events')).toEqual([]);
  });

  test('filters by event, source and days', async () => {
    const onPages = await catalogOf(a.privateApiKey, 'properties', '&event=%24pageview&source=properties');
    expect(onPages.map((p) => p.name).sort()).toEqual(['path', 'title']);
    const day = new Date(DAY0).toISOString().slice(0, 10);
    const reference = referenceCatalog((await storedEvents(a.privateApiKey)).filter((e) => e.timestamp.startsWith(day)));
    const oneDay = await catalogOf(a.privateApiKey, 'events', `&dateFrom=${day}&dateTo=${day}`);
    expect(Object.fromEntries(oneDay.map((e) => [e.name, e.volume]))).toEqual(Object.fromEntries(reference.events.map((e) => [e.name, e.volume])));
  });

  test("is a table of the workspace's own that SQL reads", async () => {
    const rows = await rowsOf(svc, "SELECT event, sum(events) AS n FROM catalog WHERE kind = 'event' GROUP BY event ORDER BY event", a.privateApiKey);
    const events = await catalogOf(a.privateApiKey, 'events');
    expect(rows.map((r) => [r.event, Number(r.n)])).toEqual(events.map((e) => [e.name, e.volume]).sort((x, y) => (x[0] < y[0] ? -1 : 1)));
  });
});

describe('the curated catalog', () => {
  test('curated fields round trip, a patch keeps the fields it does not name, and hidden ones filter', async () => {
    const patched = await call(a.privateApiKey, 'PATCH', '/catalog/events/signup', { displayName: 'Sign-up', description: 'A new account', tags: ['growth', 'core'], owner: 'team-growth', verified: true });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ name: 'signup', displayName: 'Sign-up', description: 'A new account', tags: ['growth', 'core'], owner: 'team-growth', verified: true, hidden: false });
    const hidden = await call(a.privateApiKey, 'PATCH', '/catalog/events/signup', { hidden: true, displayName: null });
    expect(hidden.body).toMatchObject({ displayName: null, description: 'A new account', tags: ['growth', 'core'], owner: 'team-growth', verified: true, hidden: true });
    expect((await catalogOf(a.privateApiKey, 'events', '&hidden=true')).map((e) => e.name)).toEqual(['signup']);
    expect((await catalogOf(a.privateApiKey, 'events', '&hidden=false')).map((e) => e.name)).not.toContain('signup');

    const trait = await call(a.privateApiKey, 'PATCH', '/catalog/properties/address.city?source=traits', { description: 'Where they live', hidden: true });
    expect(trait.status).toBe(200);
    expect(trait.body).toMatchObject({ name: 'address.city', source: 'traits', description: 'Where they live', hidden: true, verified: false });
    const listed = (await catalogOf(a.privateApiKey, 'properties', '&hidden=true')).map((p) => [p.source, p.name]);
    expect(listed).toEqual([['traits', 'address.city']]);
    // The other workspace sees none of it.
    expect((await call(b.privateApiKey, 'PATCH', '/catalog/events/signup', { hidden: true })).status).toBe(404);
  });

  test('bad input is a 4xx with a precise message and changes nothing', async () => {
    const before = [await catalogOf(a.privateApiKey, 'events'), await catalogOf(a.privateApiKey, 'properties')];
    const cases: Array<[string, string, unknown, number, RegExp]> = [
      ['PATCH', '/catalog/events/purchase', {}, 400, /at least one curated field/],
      ['PATCH', '/catalog/events/purchase', { tags: 'x' }, 400, /tags/],
      ['PATCH', '/catalog/events/purchase', { tags: ['a', 'a'] }, 400, /distinct tags/],
      ['PATCH', '/catalog/events/purchase', { colour: 'red' }, 400, /colour/],
      ['PATCH', '/catalog/events/purchase', { verified: 'yes' }, 400, /verified/],
      ['PATCH', '/catalog/properties/plan', { displayName: 'Plan' }, 400, /displayName/],
      ['PATCH', '/catalog/properties/plan?source=body', { hidden: true }, 400, /properties, traits, context/],
      ['GET', '/catalog/events?hidden=maybe', undefined, 400, /true or false/],
      ['GET', '/catalog/properties?dateFrom=yesterday', undefined, 400, /YYYY-MM-DD/],
    ];
    for (const [method, path, body, status, message] of cases) {
      const res = await call(a.privateApiKey, method, path, body);
      expect([path, res.status, res.type]).toEqual([path, status, 'application/problem+json']);
      expect(JSON.stringify(res.body)).toMatch(message);
    }
    const unknown = await call(a.privateApiKey, 'PATCH', '/catalog/events/never-sent', { hidden: true });
    expect([unknown.status, unknown.body.type]).toEqual([404, UNKNOWN_CATALOG_ENTRY]);
    expect((await call(a.privateApiKey, 'PATCH', '/catalog/properties/plan?source=traits', { hidden: true })).status).toBe(404);
    expect((await call(a.publicApiKey, 'GET', '/catalog/events')).status).toBe(403);
    expect([await catalogOf(a.privateApiKey, 'events'), await catalogOf(a.privateApiKey, 'properties')]).toEqual(before);
  });
});

describe('an erasure', () => {
  test("leaves none of the erased person's values among the examples", async () => {
    const e = await createWorkspace(svc, { name: uniqueName('catalog-erasure') });
    await sendEvents(svc, [
      { type: 'identify', userId: 'erased-user', traits: { email: 'erased@example.com' }, timestamp: new Date(DAY0).toISOString() },
      { type: 'identify', userId: 'kept-user', traits: { email: 'kept@example.com' }, timestamp: new Date(DAY0 + 1000).toISOString() },
    ], e.publicApiKey);
    const examples = async () => (await catalogOf(e.privateApiKey, 'properties', '&source=traits')).find((p) => p.name === 'email')!.examples as string[];
    // Examples are JSON text, as the values were sent.
    expect((await examples()).sort()).toEqual(['"erased@example.com"', '"kept@example.com"']);
    const id = await regulate(svc, e.privateApiKey, 'DELETE', 'userId', ['erased-user']);
    expect((await settledRegulation(svc, e.privateApiKey, id)).status).toBe('finished');
    expect(await examples()).not.toContain('"erased@example.com"');
    // Later events bring examples again.
    await sendEvents(svc, [{ type: 'identify', userId: 'new-user', traits: { email: 'new@example.com' }, timestamp: new Date(DAY0 + 2000).toISOString() }], e.publicApiKey);
    expect(await examples()).toEqual(['"new@example.com"']);
  });
});

describe('a deleted workspace', () => {
  // Reads the metadata and the engine's tables in the service's own process.
  testInProcess('takes its catalog and its curated fields with it', async () => {
    const c = await createWorkspace(svc, { name: uniqueName('catalog-gone') });
    await sendEvents(svc, randomLog(3, 20), c.publicApiKey);
    expect((await call(c.privateApiKey, 'PATCH', '/catalog/events/signup', { owner: 'someone' })).status).toBe(200);
    const live = async () => {
      const [row] = await svc.storage.query(`SELECT count() AS n FROM ${identifier(svc.config.metaDatabase)}.catalog_definitions FINAL WHERE workspaceId = {id:String} AND isDeleted = 0`, { id: c.workspaceId });
      return Number(row!.n);
    };
    expect(await live()).toBe(1);
    expect((await svc.request('DELETE', `/workspaces/${c.workspaceId}`, { key: svc.privateKey })).status).toBe(200);
    expect(await live()).toBe(0);
    const [tables] = await svc.storage.query("SELECT count() AS n FROM system.tables WHERE database = {db:String} AND name = 'catalog'", { db: c.databaseName });
    expect(Number(tables!.n)).toBe(0);
    // The other workspace keeps its own.
    expect((await catalogOf(a.privateApiKey, 'events', '&hidden=true')).map((e) => e.name)).toEqual(['signup']);
  });
});

describe('across restarts', () => {
  // Drops the catalog's tables in the service's own process, as an older release's directory would lack them.
  testInProcess('a restart counts nothing twice, and an upgrade builds the catalog of the events stored before it', async () => {
    const settings = svc.settings;
    await svc.stop();
    svc = await startTestService(settings);
    await expectAgreement(a);
    const curated = (await catalogOf(a.privateApiKey, 'events', '&hidden=true')).map((e) => e.name);
    expect(curated).toEqual(['signup']);

    // An upgrade: the workspace's catalog as if it had never been made.
    const db = identifier(a.databaseName);
    await svc.storage.command(`DROP TABLE ${db}.catalog SYNC`);
    await svc.storage.command(`DROP TABLE ${db}.catalog_progress SYNC`);
    await svc.storage.command(`DELETE FROM ${identifier(settings.META_DATABASE!)}.schema_migrations WHERE database = {database:String} AND version = 9`, { database: a.databaseName });
    await svc.stop();
    svc = await startTestService(settings);
    await eventually('the catalog of stored events is built', async () => (await svc.storage.query(`SELECT historyThrough >= historyEnd AS done FROM ${db}.catalog_progress FINAL`))[0]?.done == 1, 60_000);
    await expectAgreement(a);
    // Events after the upgrade are the loader's: counted once.
    await sendEvents(svc, randomLog(7, 100), a.publicApiKey);
    await expectAgreement(a);
  }, 120_000);
});
