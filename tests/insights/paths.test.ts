import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { Value } from '@sinclair/typebox/value';
import { PathsAnswer } from '../../src/insights/model';
import { DAY, HOUR, isBot, randomLog, resolvePersons, serviceWith, type LogEvent, type Sent } from './event-log';

/**
 * Paths against a plain computation of the same definition (docs/api/insights.md) on a seeded
 * random log, and hand-made cases with known edges.
 */

interface PathsRequest {
  start?: string;
  end?: string;
  steps?: number;
  include?: string[];
  exclude?: string[];
  limit?: number;
  aggregateBy?: 'person' | 'group';
  filters?: unknown[];
}

interface Edge {
  source: string;
  target: string;
  value: number;
}

/** A page event's node is its path, a track event's its name; identify and group calls are none. */
const nodeOf = (e: LogEvent) => (e.type === 'page' ? String(e.properties?.path ?? '') : e.type === 'track' ? (e.event ?? '') : '');

/** The reference: the edges of every actor's path among `events` between `from` and `to` (ms, inclusive), a crawler's left out. */
function reference(events: readonly Sent[], q: PathsRequest, from: number, to: number, keep: (e: Sent) => boolean = () => true): Edge[] {
  const steps = q.steps ?? 5;
  const endpoint = q.start ?? q.end;
  const include = q.include?.length ? new Set([...q.include, ...(endpoint ? [endpoint] : [])]) : undefined;
  const byActor = new Map<string, Sent[]>();
  for (const e of events) {
    const actor = q.aggregateBy === 'group' ? (e.groupId ?? '') : e.personId;
    const node = nodeOf(e);
    if (actor === '' || node === '' || isBot(e) || e.at < from || e.at > to || !keep(e)) continue;
    if ((include && !include.has(node)) || q.exclude?.includes(node)) continue;
    byActor.set(actor, [...(byActor.get(actor) ?? []), e]);
  }
  const counts = new Map<string, number>();
  for (const list of byActor.values()) {
    list.sort((a, b) => a.at - b.at || a.index - b.index);
    const nodes = list.map(nodeOf).filter((n, i, all) => i === 0 || n !== all[i - 1]);
    let path: string[];
    if (q.start !== undefined) {
      const at = nodes.indexOf(q.start);
      if (at < 0) continue;
      path = nodes.slice(at, at + steps);
    } else if (q.end !== undefined) {
      const at = nodes.indexOf(q.end);
      if (at < 0) continue;
      path = nodes.slice(Math.max(0, at + 1 - steps), at + 1);
    } else path = nodes.slice(0, steps);
    for (let i = 0; i + 1 < path.length; i++) {
      const key = `${i + 1}_${path[i]}\u0000${i + 2}_${path[i + 1]}`;
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
  }
  const edges = [...counts].map(([key, value]) => {
    const [source, target] = key.split('\u0000') as [string, string];
    return { source, target, value };
  });
  const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  edges.sort((a, b) => b.value - a.value || byText(a.source, b.source) || byText(a.target, b.target));
  return edges.slice(0, q.limit ?? 50);
}

// The random log spans the change to summer time in Europe/Paris (2025-03-30); the hand-made
// cases are each on a day of their own in January, asked for that day alone.
const LOG_FROM = Date.parse('2025-03-20T00:00:00Z');
const LOG_TO = Date.parse('2025-04-05T00:00:00Z');
const log = randomLog({ seed: 20251125, from: LOG_FROM, to: LOG_TO, persons: 400 });

const day = (n: number) => `2025-01-${String(n).padStart(2, '0')}`;
const at = (n: number, minute: number) => `${day(n)}T10:${String(minute).padStart(2, '0')}:00.000Z`;
const page = (ids: Partial<LogEvent>, path: string, timestamp: string): LogEvent => ({ type: 'page', ...ids, properties: { path }, timestamp });
const track = (ids: Partial<LogEvent>, event: string, timestamp: string): LogEvent => ({ type: 'track', ...ids, event, timestamp });

const handMade: LogEvent[] = [
  // Day 1: three persons /pricing → signup → purchase (one of them browsing anonymously, then
  // identified), one person /pricing → /docs.
  page({ anonymousId: 'a1' }, '/pricing', at(1, 0)),
  { type: 'identify', userId: 'u1', anonymousId: 'a1', traits: {}, timestamp: at(1, 1) },
  track({ userId: 'u1' }, 'signup', at(1, 2)),
  track({ userId: 'u1' }, 'purchase', at(1, 3)),
  ...['u2', 'u3'].flatMap((userId) => [page({ userId }, '/pricing', at(1, 0)), track({ userId }, 'signup', at(1, 1)), track({ userId }, 'purchase', at(1, 2))]),
  page({ userId: 'u4' }, '/pricing', at(1, 0)),
  page({ userId: 'u4' }, '/docs', at(1, 5)),
  // Day 2: repeats collapse (only consecutive ones); a group call is no node.
  page({ userId: 'r1' }, '/pricing', at(2, 0)),
  page({ userId: 'r1' }, '/pricing', at(2, 1)),
  { type: 'group', userId: 'r1', groupId: 'acme', traits: {}, timestamp: at(2, 2) },
  track({ userId: 'r1' }, 'signup', at(2, 3)),
  track({ userId: 'r1' }, 'signup', at(2, 4)),
  page({ userId: 'r1' }, '/pricing', at(2, 5)),
  // Day 3: a path of seven nodes, cut by steps; from the first /pricing; up to the first purchase.
  ...['/', 'invite', '/pricing', '/docs', '/pricing', 'purchase', 'upgrade'].map((node, i) => (node.startsWith('/') ? page({ userId: 's1' }, node, at(3, i)) : track({ userId: 's1' }, node, at(3, i)))),
  track({ userId: 's1' }, 'purchase', at(3, 30)),
  // Day 4: equal timestamps keep the order they were sent in.
  track({ userId: 't1' }, 'signup', at(4, 0)),
  track({ userId: 't1' }, 'purchase', at(4, 0)),
  track({ userId: 't1' }, 'invite', at(4, 0)),
];

let ctx: Awaited<ReturnType<typeof serviceWith>>;

beforeAll(async () => {
  ctx = await serviceWith([...log, ...resolvePersons(handMade)]);
});
afterAll(async () => {
  await ctx?.svc.stop();
});

async function paths(body: unknown): Promise<Edge[]> {
  const res = await ctx.insight('paths', body);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  expect(Value.Check(PathsAnswer, res.body)).toBe(true);
  return res.body.results;
}

const onDay = (n: number, q: PathsRequest) => paths({ ...q, dateFrom: `${day(n)}T00:00:00Z`, dateTo: `${day(n)}T23:59:59Z` });

describe('hand-made paths', () => {
  test('3 persons /pricing → signup → purchase, 1 person /pricing → /docs; anonymous views join the identified path', async () => {
    expect(await onDay(1, {})).toEqual([
      { source: '1_/pricing', target: '2_signup', value: 3 },
      { source: '2_signup', target: '3_purchase', value: 3 },
      { source: '1_/pricing', target: '2_/docs', value: 1 },
    ]);
    expect(await onDay(1, { start: 'signup' })).toEqual([{ source: '1_signup', target: '2_purchase', value: 3 }]);
    expect(await onDay(1, { end: '/docs' })).toEqual([{ source: '1_/pricing', target: '2_/docs', value: 1 }]);
    expect(await onDay(1, { limit: 1 })).toEqual([{ source: '1_/pricing', target: '2_signup', value: 3 }]);
  });

  test('the example of docs/api/insights.md: dates without a time are whole days', async () => {
    const body = { start: '/pricing', steps: 3, dateFrom: '2025-01-01', dateTo: '2025-01-01' };
    expect(await paths(body)).toEqual([
      { source: '1_/pricing', target: '2_signup', value: 3 },
      { source: '2_signup', target: '3_purchase', value: 3 },
      { source: '1_/pricing', target: '2_/docs', value: 1 },
    ]);
    expect(await paths({ ...body, start: undefined, end: 'purchase' })).toEqual([
      { source: '1_/pricing', target: '2_signup', value: 3 },
      { source: '2_signup', target: '3_purchase', value: 3 },
    ]);
  });

  test('consecutive repeats collapse into one node; identify and group calls are no nodes', async () => {
    expect(await onDay(2, {})).toEqual([
      { source: '1_/pricing', target: '2_signup', value: 1 },
      { source: '2_signup', target: '3_/pricing', value: 1 },
    ]);
  });

  test('steps cut the path; start takes the first occurrence; end the first occurrence', async () => {
    expect(await onDay(3, { steps: 3 })).toEqual([
      { source: '1_/', target: '2_invite', value: 1 },
      { source: '2_invite', target: '3_/pricing', value: 1 },
    ]);
    expect(await onDay(3, { start: '/pricing', steps: 10 })).toEqual([
      { source: '1_/pricing', target: '2_/docs', value: 1 },
      { source: '2_/docs', target: '3_/pricing', value: 1 },
      { source: '3_/pricing', target: '4_purchase', value: 1 },
      { source: '4_purchase', target: '5_upgrade', value: 1 },
      { source: '5_upgrade', target: '6_purchase', value: 1 },
    ]);
    expect(await onDay(3, { end: 'purchase', steps: 3 })).toEqual([
      { source: '1_/docs', target: '2_/pricing', value: 1 },
      { source: '2_/pricing', target: '3_purchase', value: 1 },
    ]);
    expect(await onDay(3, { end: 'purchase', exclude: ['/docs'], steps: 2 })).toEqual([{ source: '1_/pricing', target: '2_purchase', value: 1 }]);
    expect(await onDay(3, { start: 'invite', include: ['purchase'], steps: 3 })).toEqual([{ source: '1_invite', target: '2_purchase', value: 1 }]);
  });

  test('equal timestamps keep the order the events were sent in', async () => {
    expect(await onDay(4, {})).toEqual([
      { source: '1_signup', target: '2_purchase', value: 1 },
      { source: '2_purchase', target: '3_invite', value: 1 },
    ]);
  });

  test('an actor without the start node takes no part; nothing in range is no edges', async () => {
    expect(await onDay(4, { start: '/pricing' })).toEqual([]);
    expect(await onDay(5, {})).toEqual([]);
  });
});

describe('paths against the reference on a random log', () => {
  const from = Date.parse('2025-03-22T06:00:00Z');
  const to = Date.parse('2025-04-03T18:00:00Z');
  const range = { dateFrom: new Date(from).toISOString(), dateTo: new Date(to).toISOString() };
  const cases: Array<[string, PathsRequest]> = [
    ['neither start nor end', { limit: 1000 }],
    ['neither, default steps and limit (ties by source, target)', {}],
    ['start at a page path', { start: '/pricing', steps: 4, limit: 1000 }],
    ['start at an event', { start: 'signup', steps: 6, limit: 1000 }],
    ['end at an event', { end: 'purchase', steps: 3, limit: 1000 }],
    ['end at a page path, ten steps', { end: '/docs', steps: 10, limit: 1000 }],
    ['include', { include: ['/pricing', 'signup', 'purchase', '/docs'], limit: 1000 }],
    ['include with start outside it', { start: '/', include: ['signup', 'purchase'], limit: 1000 }],
    ['an empty include list, as none', { include: [], start: 'purchase', limit: 1000 }],
    ['exclude', { exclude: ['/', 'invite'], steps: 7, limit: 1000 }],
    ['by group', { aggregateBy: 'group', limit: 1000 }],
    ['by group from an event', { aggregateBy: 'group', start: 'invite', steps: 3, limit: 1000 }],
    ['by group up to an event, with exclude', { aggregateBy: 'group', end: 'upgrade', exclude: ['purchase'], limit: 1000 }],
    ['a limit of two edges', { start: 'signup', limit: 2 }],
  ];
  for (const [name, q] of cases) {
    test(name, async () => {
      const expected = reference(log, q, from, to);
      expect(expected.length).toBeGreaterThan(1);
      expect(await paths({ ...q, ...range })).toEqual(expected);
    });
  }

  test('event filters drop events before repeats collapse', async () => {
    const q: PathsRequest = { filters: [{ property: 'plan', operator: 'neq', value: 'free' }], limit: 1000 };
    const expected = reference(log, q, from, to, (e) => e.properties?.plan !== 'free');
    expect(expected.length).toBeGreaterThan(1);
    expect(await paths({ ...q, ...range })).toEqual(expected);
  });

  test('dates of a time zone: local midnights on either side of the change to summer time', async () => {
    // Europe/Paris: 2025-03-22 starts at 23:00Z the day before (UTC+1); 2025-04-03 ends at 22:00Z (UTC+2).
    const expected = reference(log, { limit: 1000 }, Date.parse('2025-03-21T23:00:00Z'), Date.parse('2025-04-03T22:00:00Z') - 1);
    expect(await paths({ dateFrom: '2025-03-22', dateTo: '2025-04-03', timezone: 'Europe/Paris', limit: 1000 })).toEqual(expected);
  });

  test('every event in range, from the first to the last', async () => {
    const expected = reference(log, { end: 'upgrade', limit: 1000 }, LOG_FROM - HOUR, LOG_TO + DAY);
    expect(await paths({ end: 'upgrade', limit: 1000, dateFrom: new Date(LOG_FROM - HOUR).toISOString(), dateTo: new Date(LOG_TO + DAY).toISOString() })).toEqual(expected);
  });
});

describe('bad requests', () => {
  const cases: Array<[string, Record<string, unknown>, string]> = [
    ['one step', { steps: 1 }, '/steps'],
    ['eleven steps', { steps: 11 }, '/steps'],
    ['start and end together', { start: '/pricing', end: 'purchase' }, '/end'],
    ['a limit of 0', { limit: 0 }, '/limit'],
    ['an unknown field', { start: '/pricing', stepLimit: 3 }, '/stepLimit'],
    ['the start node excluded', { start: '/pricing', exclude: ['/docs', '/pricing'] }, '/exclude/1'],
    ['a time that is not one', { dateFrom: 'yesterday' }, '/dateFrom'],
  ];
  for (const [name, body, pointer] of cases) {
    test(`400 for ${name}, pointing at ${pointer}`, async () => {
      const res = await ctx.insight('paths', body);
      expect(res.status).toBe(400);
      expect(res.body.errors.map((e: { pointer: string }) => e.pointer)).toContain(pointer);
    });
  }
});

test('the statement a request compiles to (?explain=1)', async () => {
  const res = await ctx.insight('paths', { start: '/pricing', include: ['signup'], exclude: ['/docs'], steps: 4, dateFrom: '2025-01-01', dateTo: '2025-01-31' }, '?explain=1');
  expect(res.status).toBe(200);
  expect(res.body.statement).toMatchSnapshot();
});
