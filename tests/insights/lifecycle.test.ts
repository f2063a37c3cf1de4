import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { Value } from '@sinclair/typebox/value';
import { LifecycleAnswer } from '../../src/insights/model';
import { DST_RANGES, dstLog, type DstRange } from './dst-ranges';
import { actorsBehind } from './actors-check';
import { matches, serviceWith, type Sent } from './event-log';
import { periodOf, periodsBetween } from './reference-periods';

type Service = Awaited<ReturnType<typeof serviceWith>>;
type Actor = 'person' | 'group';
type Status = 'new' | 'returning' | 'resurrecting' | 'dormant';

interface Series {
  event: string;
  filters?: Array<{ property: string; operator: 'eq'; value: string }>;
}

/**
 * The reference, PostHog's definition: per period, actors active in it are new (first event of
 * the series ever in it), returning (active in the period before) or resurrecting; actors active
 * in the period before and not in it are dormant, negative.
 */
function lifecycle(events: readonly Sent[], series: Series, range: DstRange, aggregateBy: Actor) {
  const from = Date.parse(range.dateFrom);
  const to = Date.parse(range.dateTo);
  const { periods, before } = periodsBetween(from, to, range.interval, range.timezone);
  const first = new Map<string, string>();
  const active = new Map<string, Set<string>>();
  for (const e of events) {
    const actor = aggregateBy === 'group' ? (e.groupId ?? '') : e.personId;
    if (actor === '' || e.at > to || !matches(e, series.event)) continue;
    if (!(series.filters ?? []).every((f) => e.properties?.[f.property] === f.value)) continue;
    const key = periodOf(e.at, range.interval, range.timezone).key;
    if (!first.has(actor) || key < first.get(actor)!) first.set(actor, key);
    if (key >= before.key) active.set(actor, (active.get(actor) ?? new Set()).add(key));
  }
  const data: Record<Status, number[]> = { new: [], returning: [], resurrecting: [], dormant: [] };
  periods.forEach((period, i) => {
    const previous = i === 0 ? before.key : periods[i - 1]!.key;
    const counts: Record<Status, number> = { new: 0, returning: 0, resurrecting: 0, dormant: 0 };
    for (const [actor, keys] of active) {
      if (keys.has(period.key)) counts[first.get(actor) === period.key ? 'new' : keys.has(previous) ? 'returning' : 'resurrecting']++;
      else if (keys.has(previous)) counts.dormant--;
    }
    for (const status of Object.keys(data) as Status[]) data[status].push(counts[status]);
  });
  const labels = periods.map((p) => p.label);
  return (['new', 'returning', 'resurrecting', 'dormant'] as const).map((label) => ({ label, labels, data: data[label] }));
}

/** A series for each of DST_RANGES: sparse events over long periods, every event over hours. */
const SERIES: Series[] = [{ event: 'signup' }, { event: '$pageview', filters: [{ property: 'path', operator: 'eq', value: '/pricing' }] }, { event: '$any' }, { event: '$any' }, { event: '$any' }];

describe('lifecycle against a plain computation, seeded logs', () => {
  const events = dstLog(20251126);
  const seen = new Set<string>();
  let service: Service;
  beforeAll(async () => {
    service = await serviceWith(events);
  });
  afterAll(() => service.svc.stop());

  DST_RANGES.forEach((range, r) => {
    for (const aggregateBy of ['person', 'group'] as const) {
      const series = SERIES[r]!;
      test(`${range.name}, by ${aggregateBy}, ${series.event}`, async () => {
        const { name, ...fields } = range;
        const { status, body } = await service.insight('lifecycle', { series: [series], aggregateBy, ...fields });
        expect(status).toBe(200);
        expect(Value.Check(LifecycleAnswer, body)).toBe(true);
        expect(body.results).toEqual(lifecycle(events, series, range, aggregateBy));
        for (const result of body.results) if (result.data.some((n: number) => n !== 0)) seen.add(`${aggregateBy} ${result.label}`);
      });
    }
  });

  for (const range of DST_RANGES.slice(0, 3)) {
    test(`the persons behind each bar: ${range.name}`, async () => {
      const { name, ...fields } = range;
      for (const aggregateBy of ['person', 'group'] as const) {
        const query = { series: [{ event: '$any' }], aggregateBy, ...fields };
        const { body } = await service.insight('lifecycle', query);
        for (const result of body.results as Array<{ label: string; labels: string[]; data: number[] }>) {
          for (const j of [0, 2, result.labels.length - 1]) {
            const behind = await actorsBehind(service, 'lifecycle', { query, label: result.labels[j], status: result.label });
            expect({ status: result.label, label: result.labels[j], count: behind.total }).toEqual({ status: result.label, label: result.labels[j], count: Math.abs(result.data[j]!) });
          }
        }
      }
    });
  }

  test('the log exercises the definition: every status occurs, by person and by group', () => {
    expect([...seen].sort()).toEqual(['person', 'group'].flatMap((a) => ['new', 'returning', 'resurrecting', 'dormant'].map((s) => `${a} ${s}`)).sort());
  });
});

describe('lifecycle, known answers', () => {
  const day = (d: number, hour = 12) => `2024-05-${String(d).padStart(2, '0')}T${String(hour).padStart(2, '0')}:00:00.000Z`;
  const track = (ids: { userId?: string; anonymousId?: string }, timestamp: string, event = 'open') => ({ type: 'track' as const, event, ...ids, timestamp });
  let service: Service;
  beforeAll(async () => {
    service = await serviceWith([
      // Active on days 1, 2 and 4 of the range, anonymously at first: new, returning, dormant, resurrecting.
      track({ anonymousId: 'browser' }, day(1)),
      track({ anonymousId: 'browser' }, day(1, 23)),
      track({ userId: 'ada', anonymousId: 'browser' }, day(2)),
      track({ userId: 'ada' }, day(4)),
      // Active the day before the range and on its first day: returning on day 1.
      track({ userId: 'bob' }, '2024-04-30T00:00:00.000Z'),
      track({ userId: 'bob' }, day(1)),
      // First event long before the range, then day 3 only: resurrecting on 3, dormant on 4.
      track({ userId: 'cy' }, '2024-01-15T08:00:00.000Z'),
      track({ userId: 'cy' }, day(3)),
      // Another event than the series' does not count, nor does anything after dateTo.
      track({ userId: 'dee' }, day(2), 'close'),
      track({ userId: 'ada' }, day(6)),
      // New in the last of 1,000 hours.
      track({ userId: 'eve' }, '2024-06-11T15:30:00.000Z'),
    ]);
  });
  afterAll(() => service.svc.stop());

  test('new, returning, resurrecting and dormant over five days', async () => {
    const { status, body } = await service.insight('lifecycle', { series: [{ event: 'open' }], dateFrom: '2024-05-01', dateTo: '2024-05-05' });
    expect(status).toBe(200);
    const labels = ['2024-05-01', '2024-05-02', '2024-05-03', '2024-05-04', '2024-05-05'];
    expect(body).toEqual({
      results: [
        { label: 'new', labels, data: [1, 0, 0, 0, 0] },
        { label: 'returning', labels, data: [1, 1, 0, 0, 0] },
        { label: 'resurrecting', labels, data: [0, 0, 1, 1, 0] },
        { label: 'dormant', labels, data: [0, -1, -1, -1, -1] },
      ],
    });
  });

  test('a range of 1,000 hours, the most: periods are told apart past any small index', async () => {
    const { status, body } = await service.insight('lifecycle', { series: [{ event: 'open' }], interval: 'hour', dateFrom: '2024-05-01T00:00:00Z', dateTo: '2024-06-11T15:59:59Z' });
    expect(status).toBe(200);
    const [news, returning] = body.results;
    expect(news.labels).toHaveLength(1000);
    expect(news.labels[999]).toBe('2024-06-11T15:00:00+00:00');
    expect(news.data.flatMap((n: number, i: number) => (n ? [[i, n]] : []))).toEqual([
      [12, 1],
      [999, 1],
    ]);
    // ada's events at 12:00 and 23:00 on the first day are an hour apart from nothing else.
    expect(returning.data.every((n: number) => n === 0)).toBe(true);
  });

  test('the statement is one, its values bound', async () => {
    const { status, body } = await service.insight('lifecycle', { series: [{ event: 'open' }], dateFrom: '2024-05-01', dateTo: '2024-05-05', interval: 'week', timezone: 'Europe/Paris' }, '?explain=1');
    expect(status).toBe(200);
    expect(body.statement).not.toContain(';');
    expect(body.statement).not.toContain("'open'");
    expect(body.statement).toMatchSnapshot();
  });

  const refused: Array<[string, Record<string, unknown>, string]> = [
    ['an unknown interval', { interval: 'fortnight' }, '/interval'],
    ['two series', { series: [{ event: 'open' }, { event: 'close' }] }, '/series'],
    ['an unknown time zone', { timezone: 'Europe/Atlantis' }, '/timezone'],
    ['more than 1,000 hourly periods', { interval: 'hour', dateFrom: '-60d' }, '/interval'],
    ['math persons when groups are counted', { aggregateBy: 'group', series: [{ event: 'open', math: 'persons' }] }, '/series/0/math'],
    ['a math of values', { series: [{ event: 'open', math: 'p90', property: 'amount' }] }, '/series/0/math'],
  ];
  for (const [what, fields, pointer] of refused) {
    test(`400 for ${what}`, async () => {
      const { status, body } = await service.insight('lifecycle', { series: [{ event: 'open' }], ...fields });
      expect(status).toBe(400);
      expect(body.errors.map((e: { pointer: string }) => e.pointer)).toContain(pointer);
    });
  }
});
