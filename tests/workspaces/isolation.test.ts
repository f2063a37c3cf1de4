import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { uniqueName } from '../helpers/engine-dir';
import { createWorkspace, listEvents, sendEvents, startTestService, type CreatedWorkspace, type TestService } from '../helpers/test-service';

/** Two workspaces get the very same events; each key must only ever see its own copies. */
const EVENTS = [
  {
    type: 'track', event: 'purchase', userId: 'u1', anonymousId: 'a1', groupId: 'g1', instanceId: 'i1',
    properties: { plan: 'pro', count: 3 }, context: { locale: 'en-US' }, timestamp: '2024-03-01T10:00:00Z',
  },
  { type: 'identify', userId: 'u1', traits: { email: 'u1@example.com' }, timestamp: '2024-03-02T10:00:00Z' },
  { type: 'group', userId: 'u2', groupId: 'g1', traits: { name: 'Acme' }, timestamp: '2024-03-03T10:00:00Z' },
  { type: 'page', event: 'home', anonymousId: 'a2', instanceId: 'i2', context: { locale: 'de-DE' }, timestamp: '2024-03-04T10:00:00Z' },
];

const FILTERS = [
  '',
  'event=purchase',
  'userId=u1',
  'groupId=g1',
  'anonymousId=a1',
  'instanceId=i1',
  'type=identify',
  'startDate=2024-03-02',
  'endDate=2024-03-02',
  'startDate=2024-03-01&endDate=2024-03-04',
  'properties.plan=pro',
  'properties.count=3',
  'traits.email=u1%40example.com',
  'traits.name=Acme',
  'context.locale=de-DE',
  'type=track&userId=u1&properties.plan=pro',
  'orderByField=userId&orderByDirection=asc',
  'limit=2&offset=1',
];

let svc: TestService;
const rooms: Record<'A' | 'B', { workspace: CreatedWorkspace; uuids: Set<string> }> = {} as never;

beforeAll(async () => {
  svc = await startTestService();
  for (const label of ['A', 'B'] as const) {
    const workspace = await createWorkspace(svc, { name: uniqueName(`Room${label}`) });
    const sent = await sendEvents(svc, EVENTS, workspace.publicApiKey);
    rooms[label] = { workspace, uuids: new Set(sent.results.map((e) => String(e.uuid))) };
  }
});
afterAll(() => svc.stop());

describe('workspace isolation on GET /events', () => {
  for (const [reader, other] of [['A', 'B'], ['B', 'A']] as const) {
    for (const filter of FILTERS) {
      test(`${reader}'s private key never sees ${other}'s events: ${filter || '(no filter)'}`, async () => {
        const { status, body } = await listEvents(svc, filter, rooms[reader].workspace.privateApiKey);
        expect(status).toBe(200);
        // Each filter matches something, so an empty answer cannot pass by accident.
        expect(body.total).toBeGreaterThan(0);
        for (const e of body.results) {
          expect(rooms[reader].uuids.has(e.uuid)).toBe(true);
          expect(rooms[other].uuids.has(e.uuid)).toBe(false);
        }
        // Both rooms hold the same events, so each sees the same count.
        const mirror = await listEvents(svc, filter, rooms[other].workspace.privateApiKey);
        expect(mirror.body.total).toBe(body.total);
      });
    }

    test(`${reader}'s private key finds none of ${other}'s events by uuid`, async () => {
      for (const uuid of rooms[other].uuids) {
        const { body } = await listEvents(svc, `uuid=${uuid}`, rooms[reader].workspace.privateApiKey);
        expect(body.total).toBe(0);
      }
    });
  }

  test('the admin key (default workspace) sees neither', async () => {
    const { body } = await listEvents(svc, 'userId=u1');
    expect(body.total).toBe(0);
  });
});
