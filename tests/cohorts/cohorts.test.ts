import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { uniqueName } from '../helpers/engine-dir';
import { seededRandom } from '../helpers/seeded-random';
import { createWorkspace, sendEvents, startTestService, type TestService } from '../helpers/test-service';

/**
 * Cohort membership checked differentially: 1,000 generated persons (some anonymous first, then
 * identified; some never identified; traits changed over time), cohorts of trait and behavioural
 * filters, and a plain computation of the same definitions here.
 */

const DAY = 86_400_000;
const PERSONS = 1000;

interface Person {
  personId: string;
  traits: Record<string, unknown>;
  /** Times of each purchase, ms. */
  purchases: number[];
}

function generate(seed: number, now: number) {
  const random = seededRandom(seed);
  const pick = <T>(items: readonly T[]) => items[Math.floor(random() * items.length)]!;
  const events: Record<string, unknown>[] = [];
  const persons: Person[] = [];
  // Away from the 30-day boundary by an hour either side, so the engine's now and ours agree.
  const when = () => {
    const daysAgo = random() * 60;
    return now - (Math.abs(daysAgo - 30) < 0.05 ? daysAgo + 0.1 : daysAgo) * DAY;
  };
  for (let i = 0; i < PERSONS; i++) {
    const userId = `u${i}`;
    const anonymousId = `a${i}`;
    const kind = random();
    const identified = kind > 0.15;
    const anonymousFirst = kind < 0.45;
    const traits: Record<string, unknown> = {};
    const person: Person = { personId: identified ? userId : anonymousId, traits, purchases: [] };
    persons.push(person);
    let t = now - 61 * DAY + Math.floor(random() * DAY);
    if (anonymousFirst || !identified) {
      for (let k = Math.floor(random() * 3); k >= 0; k--) events.push({ type: 'page', anonymousId, timestamp: new Date((t += 1000)).toISOString() });
    }
    if (identified) {
      for (let k = 1 + Math.floor(random() * 3); k > 0; k--) {
        const set: Record<string, unknown> = {};
        if (random() < 0.8) set.plan = pick(['free', 'pro', 'team']);
        if (random() < 0.6) set.seats = Math.floor(random() * 20);
        if (random() < 0.5) set.country = pick(['DE', 'FR', 'US', 'Brazil']);
        if (random() < 0.3) set.email = `${userId}@example.com`;
        Object.assign(traits, set);
        events.push({ type: 'identify', userId, ...(anonymousFirst ? { anonymousId } : {}), traits: set, timestamp: new Date((t += 1000)).toISOString() });
      }
    }
    for (let k = Math.floor(random() * 5); k > 0; k--) {
      const at = when();
      person.purchases.push(at);
      // A purchase before sign-in is sent anonymously and counts for the person once linked.
      const anonymous = !identified || (anonymousFirst && random() < 0.3);
      events.push({ type: 'track', event: 'purchase', ...(anonymous ? { anonymousId } : { userId }), timestamp: new Date(at).toISOString() });
    }
  }
  return { events, persons };
}

/** The filters' meaning, written plainly. */
const text = (v: unknown) => (v === undefined ? '' : typeof v === 'string' ? v : JSON.stringify(v));
const num = (v: unknown) => (typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v)) ? Number(v) : undefined);

const COHORTS: Array<{ filters: unknown[]; member: (p: Person, now: number) => boolean }> = [
  {
    filters: [
      { property: 'plan', operator: 'eq', value: 'pro' },
      { performed: 'purchase', atLeast: 2, withinDays: 30 },
    ],
    member: (p, now) => text(p.traits.plan) === 'pro' && p.purchases.filter((t) => t >= now - 30 * DAY).length >= 2,
  },
  {
    filters: [
      { property: 'seats', operator: 'gte', value: 5 },
      { property: 'country', operator: 'in', value: ['DE', 'FR'] },
    ],
    member: (p) => (num(p.traits.seats) ?? -Infinity) >= 5 && ['DE', 'FR'].includes(text(p.traits.country)),
  },
  { filters: [{ property: 'email', operator: 'is_not_set' }], member: (p) => !('email' in p.traits) },
  { filters: [{ property: 'plan', operator: 'neq', value: 'free' }], member: (p) => text(p.traits.plan) !== 'free' },
  {
    filters: [
      { property: 'country', operator: 'contains', value: 'bra' },
      { property: 'seats', operator: 'lt', value: 10 },
    ],
    member: (p) => text(p.traits.country).toLowerCase().includes('bra') && (num(p.traits.seats) ?? Infinity) < 10,
  },
  { filters: [{ performed: 'purchase', withinDays: 60 }], member: (p, now) => p.purchases.some((t) => t >= now - 60 * DAY) },
  { filters: [{ property: 'email', operator: 'regex', value: '^u[0-9]*7@' }], member: (p) => /^u[0-9]*7@/.test(text(p.traits.email)) },
];

let svc: TestService;
let key: string;
let data: ReturnType<typeof generate>;
let now: number;
beforeAll(async () => {
  svc = await startTestService();
  const workspace = await createWorkspace(svc, { name: uniqueName('cohorts') });
  key = workspace.privateApiKey;
  now = Date.now();
  data = generate(20261125, now);
  for (let i = 0; i < data.events.length; i += 2000) await sendEvents(svc, data.events.slice(i, i + 2000), workspace.publicApiKey);
});
afterAll(() => svc.stop());

async function call(method: string, path: string, body?: unknown) {
  const res = await svc.request(method, path, { key, body });
  return { status: res.status, body: (await res.json()) as any };
}

async function members(cohortId: string): Promise<string[]> {
  const ids: string[] = [];
  for (let offset = 0; ; offset += 1000) {
    const page = await call('GET', `/persons?cohort=${cohortId}&limit=1000&offset=${offset}`);
    expect(page.status).toBe(200);
    ids.push(...page.body.results.map((p: any) => p.personId));
    if (ids.length >= page.body.total) return ids.sort();
  }
}

describe('cohorts', () => {
  test('membership matches a plain computation on 1,000 generated persons', async () => {
    for (const [i, cohort] of COHORTS.entries()) {
      const created = await call('POST', '/cohorts', { name: `cohort ${i}`, filters: cohort.filters });
      expect(created.status).toBe(201);
      const expected = data.persons.filter((p) => cohort.member(p, now)).map((p) => p.personId).sort();
      expect(expected.length).toBeGreaterThan(0);
      expect(created.body.size).toBe(expected.length);
      expect(await members(created.body.id)).toEqual(expected);
    }
    const list = await call('GET', '/cohorts');
    expect(list.body.total).toBe(COHORTS.length);
  });

  test('a cohort is a filter of GET /persons beside others, and can be replaced and deleted', async () => {
    const created = await call('POST', '/cohorts', { name: 'pro', filters: [{ property: 'plan', operator: 'eq', value: 'pro' }] });
    const filters = encodeURIComponent(JSON.stringify([{ cohort: created.body.id }, { property: 'seats', operator: 'gt', value: 10 }]));
    const both = await call('GET', `/persons?filters=${filters}&limit=1000`);
    const expected = data.persons.filter((p) => text(p.traits.plan) === 'pro' && (num(p.traits.seats) ?? -Infinity) > 10).map((p) => p.personId).sort();
    expect(both.body.results.map((p: any) => p.personId).sort()).toEqual(expected);

    const replaced = await call('PUT', `/cohorts/${created.body.id}`, { name: 'team', filters: [{ property: 'plan', operator: 'eq', value: 'team' }] });
    expect(replaced.status).toBe(200);
    expect(replaced.body.size).toBe(data.persons.filter((p) => text(p.traits.plan) === 'team').length);
    expect((await call('DELETE', `/cohorts/${created.body.id}`)).status).toBe(200);
    expect((await call('GET', `/cohorts/${created.body.id}`)).status).toBe(404);
  });

  test('bad definitions get a 400 with a pointer, and change nothing', async () => {
    const before = (await call('GET', '/cohorts')).body.total;
    for (const [filters, pointer] of [
      [[{ property: 'plan', operator: 'between', value: 1 }], '/filters/0'],
      [[{ performed: 'purchase', withinDays: 0 }], '/filters/0'],
      [[{ property: 'seats', operator: 'gt', value: 'many' }], '/filters/0/value'],
      [[], '/filters'],
    ] as const) {
      const res = await call('POST', '/cohorts', { name: 'bad', filters });
      expect(res.status).toBe(400);
      expect(res.body.errors.some((e: any) => e.pointer.startsWith(pointer))).toBe(true);
    }
    expect((await call('GET', '/cohorts')).body.total).toBe(before);
  });
});
