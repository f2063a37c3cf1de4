import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { Value } from '@sinclair/typebox/value';
import { GroupsPage } from '../../src/persons/model';
import { uniqueName } from '../helpers/engine-dir';
import { seededRandom } from '../helpers/seeded-random';
import { createWorkspace, sendEvents, startTestService, type CreatedWorkspace, type TestService } from '../helpers/test-service';

let svc: TestService;
let ws: CreatedWorkspace;

interface Seeded {
  type: string;
  event?: string;
  userId?: string;
  anonymousId?: string;
  groupId?: string;
  traits?: Record<string, unknown>;
  timestamp: string;
}

/**
 * Two weeks of a small B2B site: 30 persons in 6 companies, some browsing anonymously first (their
 * anonymousId linked to their userId by a later identify), group calls naming each company, and
 * events of persons who are in no company.
 */
function seed(): Seeded[] {
  const random = seededRandom(41);
  const start = Date.parse('2026-11-01T00:00:00Z');
  const at = () => new Date(start + Math.floor(random() * 14 * 86_400_000)).toISOString();
  const events: Seeded[] = [];
  for (let p = 0; p < 30; p++) {
    const userId = `user-${p}`;
    const groupId = p < 26 ? `company-${p % 6}` : undefined;
    if (p % 3 === 0) {
      const anonymousId = `anon-${p}`;
      events.push({ type: 'track', event: 'Viewed Pricing', anonymousId, ...(groupId ? { groupId } : {}), timestamp: '2026-10-31T12:00:00.000Z' });
      events.push({ type: 'identify', userId, anonymousId, traits: { email: `${userId}@example.com` }, timestamp: at() });
    }
    for (let i = 0, n = 1 + Math.floor(random() * 5); i < n; i++) events.push({ type: 'track', event: 'Used Feature', userId, ...(groupId ? { groupId } : {}), timestamp: at() });
    if (groupId && p < 6) events.push({ type: 'group', userId, groupId, traits: { name: `Company ${p}`, plan: p % 2 ? 'pro' : 'free' }, timestamp: at() });
  }
  return events;
}

/** The groups as a plain computation over the seeded events: persons by the identity rules (anonymousIds linked by identify). */
function expectedGroups(events: readonly Seeded[]) {
  const personOfAnon = new Map(events.filter((e) => e.userId && e.anonymousId).map((e) => [e.anonymousId!, e.userId!]));
  const groups = new Map<string, { persons: Set<string>; eventCount: number; firstSeen: number; lastSeen: number; traits: Record<string, unknown> }>();
  for (const e of events) {
    if (!e.groupId) continue;
    const group = groups.get(e.groupId) ?? { persons: new Set(), eventCount: 0, firstSeen: Infinity, lastSeen: -Infinity, traits: {} };
    group.persons.add(e.userId ?? personOfAnon.get(e.anonymousId!) ?? e.anonymousId!);
    group.eventCount += 1;
    group.firstSeen = Math.min(group.firstSeen, Date.parse(e.timestamp));
    group.lastSeen = Math.max(group.lastSeen, Date.parse(e.timestamp));
    if (e.type === 'group') Object.assign(group.traits, e.traits);
    groups.set(e.groupId, group);
  }
  return [...groups.entries()]
    .map(([groupId, g]) => ({ groupId, personCount: g.persons.size, eventCount: g.eventCount, firstSeen: g.firstSeen, lastSeen: g.lastSeen, traits: g.traits }))
    .sort((a, b) => b.lastSeen - a.lastSeen || (a.groupId < b.groupId ? -1 : 1));
}

const events = seed();

beforeAll(async () => {
  svc = await startTestService();
  ws = await createWorkspace(svc, { name: uniqueName('groups') });
  await sendEvents(svc, events, ws.publicApiKey);
});
afterAll(() => svc.stop());

const get = async (path: string, key = ws.privateApiKey) => {
  const res = await svc.request('GET', path, { key });
  return { status: res.status, type: res.headers.get('content-type'), body: (await res.json()) as any };
};

/** A Group of the answer in the plain computation's terms (times as instants). */
const plain = (g: any) => ({ groupId: g.groupId, personCount: g.personCount, eventCount: g.eventCount, firstSeen: Date.parse(g.firstSeen), lastSeen: Date.parse(g.lastSeen), traits: g.traits });

describe('GET /groups', () => {
  test('lists every group, most recently seen first, with its persons, events and last seen as computed from the events', async () => {
    const expected = expectedGroups(events);
    expect(expected.length).toBe(6);
    const { status, body } = await get('/groups');
    expect(status).toBe(200);
    expect(Value.Check(GroupsPage, body)).toBe(true);
    expect(body.total).toBe(6);
    expect(body.results.map(plain)).toEqual(expected);
  });

  test('pages as GET /persons does, the total on every page', async () => {
    const expected = expectedGroups(events).map((g) => g.groupId);
    const first = await get('/groups?limit=4');
    const second = await get('/groups?limit=4&offset=4');
    expect(first.body).toMatchObject({ limit: 4, offset: 0, total: 6 });
    expect(second.body).toMatchObject({ limit: 4, offset: 4, total: 6 });
    expect([...first.body.results, ...second.body.results].map((g: any) => g.groupId)).toEqual(expected);
    expect((await get('/groups?limit=0')).body).toMatchObject({ results: [], total: 6 });
    expect((await get('/groups?offset=10')).body).toMatchObject({ results: [], total: 6 });
  });

  test("searches ids and traits; personId answers a person's companies, an anonymous visit included", async () => {
    expect((await get('/groups?search=COMPANY 3')).body.results.map((g: any) => g.groupId)).toEqual(['company-3']);
    expect((await get(`/groups?search=${encodeURIComponent('"plan":"pro"')}`)).body.results.map((g: any) => g.groupId).sort()).toEqual(['company-1', 'company-3', 'company-5']);
    expect((await get('/groups?personId=user-9')).body.results.map((g: any) => g.groupId)).toEqual(['company-3']);
    expect((await get('/groups?personId=user-27')).body).toMatchObject({ results: [], total: 0 });
  });

  test('refuses unknown or malformed parameters with a precise problem, and keeps to the key\'s workspace', async () => {
    const bad = await get('/groups?limit=many');
    expect(bad.status).toBe(400);
    expect(bad.type).toContain('application/problem+json');
    expect(JSON.stringify(bad.body)).toContain('limit');
    expect((await get('/groups?type=company')).status).toBe(400);
    expect((await get(`/groups?search=`)).status).toBe(400);
    expect((await get('/groups')).body.total).toBe(6);
    expect((await get('/groups?search=company-', svc.privateKey)).body.total).toBe(0);
  });
});

describe('names beside the ids of the persons behind a point', () => {
  test("a funnel step's persons and a group's carry their latest name and email traits", async () => {
    const res = await svc.request('POST', '/insights/funnels/persons', {
      key: ws.privateApiKey,
      body: { query: { steps: [{ event: 'Viewed Pricing' }, { event: 'Used Feature' }], dateFrom: '2026-10-30', dateTo: '2026-11-20', window: { value: 30, unit: 'day' } }, step: 1 },
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as any;
    const anonymousFirst = events.filter((e) => e.type === 'identify').map((e) => e.userId!).sort();
    expect(body.results).toEqual(anonymousFirst.map((personId) => ({ personId, email: `${personId}@example.com` })));
    const groups = await svc.request('POST', '/insights/trends/persons', {
      key: ws.privateApiKey,
      body: { query: { series: [{ event: 'Viewed Pricing', math: 'groups' }], dateFrom: '2026-10-31', dateTo: '2026-10-31', interval: 'day', timezone: 'UTC' }, series: 0, label: '2026-10-31' },
    });
    const named = ((await groups.json()) as any).results.map((g: any) => [g.groupId, g.name]);
    // Pricing was viewed (anonymously) in companies 0 and 3, both named by group calls.
    expect(named).toEqual([['company-0', 'Company 0'], ['company-3', 'Company 3']]);
  });
});
