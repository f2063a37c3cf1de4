import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { Value } from '@sinclair/typebox/value';
import { StickinessAnswer } from '../../src/insights/model';
import { DST_RANGES, dstLog, type DstRange } from './dst-ranges';
import { matches, serviceWith, type Sent } from './event-log';
import { periodOf, periodsBetween } from './reference-periods';

type Service = Awaited<ReturnType<typeof serviceWith>>;
type Actor = 'person' | 'group';

interface Series {
  event: string;
  filters?: Array<{ property: string; operator: 'eq'; value: string }>;
}

/** The reference: per series, for n = 1 to the range's periods, actors active in exactly n of them. */
function stickiness(events: readonly Sent[], series: Series[], range: DstRange, aggregateBy: Actor): { labels: string[]; data: number[] }[] {
  const from = Date.parse(range.dateFrom);
  const to = Date.parse(range.dateTo);
  const { periods } = periodsBetween(from, to, range.interval, range.timezone);
  return series.map((s) => {
    const active = new Map<string, Set<string>>();
    for (const e of events) {
      const actor = aggregateBy === 'group' ? (e.groupId ?? '') : e.personId;
      const key = periodOf(e.at, range.interval, range.timezone).key;
      if (actor === '' || e.at > to || key < periods[0]!.key || !matches(e, s.event)) continue;
      if (!(s.filters ?? []).every((f) => e.properties?.[f.property] === f.value)) continue;
      active.set(actor, (active.get(actor) ?? new Set()).add(key));
    }
    const data = periods.map(() => 0);
    for (const keys of active.values()) data[keys.size - 1]!++;
    return { labels: periods.map((_, n) => String(n + 1)), data };
  });
}

const SERIES: Series[] = [{ event: '$any' }, { event: 'signup' }, { event: '$pageview' }, { event: 'purchase', filters: [{ property: 'plan', operator: 'eq', value: 'pro' }] }];

describe('stickiness against a plain computation, seeded logs', () => {
  const events = dstLog(20251125);
  let service: Service;
  beforeAll(async () => {
    service = await serviceWith(events);
  });
  afterAll(() => service.svc.stop());

  for (const range of DST_RANGES) {
    for (const aggregateBy of ['person', 'group'] as const) {
      test(`${range.name}, by ${aggregateBy}`, async () => {
        const { name, ...fields } = range;
        const { status, body } = await service.insight('stickiness', { series: SERIES, aggregateBy, ...fields });
        expect(status).toBe(200);
        expect(Value.Check(StickinessAnswer, body)).toBe(true);
        const expected = stickiness(events, SERIES, range, aggregateBy);
        expect(body.results).toEqual(SERIES.map((s, i) => ({ label: s.event, series: i, ...expected[i]! })));
        // The log must exercise the definition: actors on one period and on several.
        expect(body.results[0].data[0]).toBeGreaterThan(0);
        expect(body.results[0].data.slice(1).some((n: number) => n > 0)).toBe(true);
      });
    }
  }

  for (const range of DST_RANGES.slice(0, 2)) {
    test(`the persons behind each bar: ${range.name}, by person and by group`, async () => {
      const { name, ...fields } = range;
      for (const aggregateBy of ['person', 'group'] as const) {
        const query = { series: SERIES, aggregateBy, ...fields };
        const { body } = await service.insight('stickiness', query);
        for (const [i, result] of (body.results as Array<{ data: number[] }>).entries()) {
          for (const count of [1, 2, 3]) {
            const behind = await service.actors('stickiness', { query, series: i, count });
            expect({ series: i, count, total: behind.body.total }).toEqual({ series: i, count, total: result.data[count - 1] });
          }
        }
      }
      const { body } = await service.actors('stickiness', { query: { series: SERIES, ...fields }, series: 0, count: 1000 });
      expect(body.errors.map((e: { pointer: string }) => e.pointer)).toEqual(['/count']);
    });
  }
});

describe('stickiness, known answers', () => {
  const day = (d: number, hour = 12) => `2024-05-0${d}T${String(hour).padStart(2, '0')}:00:00.000Z`;
  const track = (ids: { userId?: string; anonymousId?: string }, timestamp: string, event = 'open') => ({ type: 'track' as const, event, ...ids, timestamp });
  let service: Service;
  beforeAll(async () => {
    service = await serviceWith([
      track({ userId: 'one' }, day(1)),
      track({ userId: 'two' }, day(1)),
      track({ userId: 'two' }, day(3)),
      track({ userId: 'three' }, day(2)),
      track({ userId: 'three' }, day(2, 18)),
      track({ userId: 'three' }, day(4)),
      track({ userId: 'three' }, day(5, 23)),
      // Anonymous on day 1, then signed in on day 2: one person active on two days.
      track({ anonymousId: 'browser' }, day(1)),
      track({ userId: 'four', anonymousId: 'browser' }, day(2)),
      // Other events and days outside the range do not count.
      track({ userId: 'one' }, day(2), 'close'),
      track({ userId: 'one' }, '2024-05-06T00:00:00.000Z'),
    ]);
  });
  afterAll(() => service.svc.stop());

  test('persons on exactly 1, 2 and 3 days of five', async () => {
    const { status, body } = await service.insight('stickiness', { series: [{ event: 'open' }], dateFrom: '2024-05-01', dateTo: '2024-05-05' });
    expect(status).toBe(200);
    expect(body).toEqual({ results: [{ label: 'open', series: 0, labels: ['1', '2', '3', '4', '5'], data: [1, 2, 1, 0, 0] }] });
  });

  test('math persons is the default said aloud; the range is cut at dateTo', async () => {
    const { body } = await service.insight('stickiness', { series: [{ event: 'open', math: 'persons' }, { event: 'close' }], dateFrom: '2024-05-01', dateTo: '2024-05-03' });
    expect(body.results).toEqual([
      { label: 'open', series: 0, labels: ['1', '2', '3'], data: [2, 2, 0] },
      { label: 'close', series: 1, labels: ['1', '2', '3'], data: [1, 0, 0] },
    ]);
  });

  test('the statement is one, its values bound', async () => {
    const { status, body } = await service.insight('stickiness', { series: [{ event: 'open' }], dateFrom: '2024-05-01', dateTo: '2024-05-05', timezone: 'Europe/Paris' }, '?explain=1');
    expect(status).toBe(200);
    expect(body.statement).not.toContain(';');
    expect(body.statement).not.toContain("'open'");
    expect(body.statement).toMatchSnapshot();
  });

  const refused: Array<[string, Record<string, unknown>, string]> = [
    ['an unknown interval', { interval: 'year' }, '/interval'],
    ['an unknown time zone', { timezone: 'Mars/Olympus' }, '/timezone'],
    ['more than 1,000 hourly periods', { interval: 'hour', dateFrom: '2024-01-01', dateTo: '2024-03-01' }, '/interval'],
    ['a math of values', { series: [{ event: 'open', math: 'sum', property: 'amount' }] }, '/series/0/math'],
    ['a property', { series: [{ event: 'open', property: 'amount' }] }, '/series/0/property'],
    ['math groups when persons are counted', { series: [{ event: 'open' }, { event: 'open', math: 'groups' }] }, '/series/1/math'],
    ['eleven series', { series: Array.from({ length: 11 }, () => ({ event: 'open' })) }, '/series'],
  ];
  for (const [what, fields, pointer] of refused) {
    test(`400 for ${what}`, async () => {
      const { status, body } = await service.insight('stickiness', { series: [{ event: 'open' }], ...fields });
      expect(status).toBe(400);
      expect(body.errors.map((e: { pointer: string }) => e.pointer)).toContain(pointer);
    });
  }
});
