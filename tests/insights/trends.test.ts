import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { createWorkspace } from '../helpers/test-service';
import { uniqueName } from '../helpers/engine-dir';
import { actorsBehind } from './actors-check';
import { DAY, firstTouch, HOUR, isBot, matches, randomLog, resolvePersons, serviceWith, type LogEvent, type Sent } from './event-log';

/**
 * Trends against a plain computation of the same definition (docs/api/insights.md) on a seeded
 * random log, and hand-made cases with known answers.
 */

const localDate = (ms: number, timezone: string) => new Intl.DateTimeFormat('en-CA', { timeZone: timezone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(new Date(ms));
const addDays = (date: string, days: number) => new Date(Date.parse(`${date}T00:00:00Z`) + days * DAY).toISOString().slice(0, 10);
const monday = (date: string) => addDays(date, -((new Date(`${date}T00:00:00Z`).getUTCDay() + 6) % 7));
const periodOf = (date: string, interval: string) => (interval === 'week' ? monday(date) : interval === 'month' ? `${date.slice(0, 7)}-01` : date);
/** The last day of the period starting on `start`. */
const lastDay = (start: string, interval: string) => (interval === 'day' ? start : interval === 'week' ? addDays(start, 6) : addDays(`${addDays(start, 32).slice(0, 7)}-01`, -1));

/** quantileExactInclusive: linear interpolation between the nearest ranks. */
function quantile(values: number[], level: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  const h = (sorted.length - 1) * level;
  const low = Math.floor(h);
  return sorted[low]! + (h - low) * ((sorted[low + 1] ?? sorted[low]!) - sorted[low]!);
}

interface Series {
  event: string;
  math?: string;
  property?: string;
}

/** The reference: per period label, the series' value over `events`, plus the total. */
function reference(events: readonly Sent[], series: Series, labels: string[], interval: string, timezone: string, from: number, to: number) {
  const math = series.math ?? 'total';
  const matching = events.filter((e) => matches(e, series.event));
  const inRange = matching.filter((e) => e.at >= from && e.at <= to);
  const byPeriod = (list: readonly Sent[]) => {
    const map = new Map<string, Sent[]>();
    for (const e of list) {
      const key = periodOf(localDate(e.at, timezone), interval);
      map.set(key, [...(map.get(key) ?? []), e]);
    }
    return map;
  };
  const measure = (list: readonly Sent[]): number => {
    const numbers = list.map((e) => e.properties?.[series.property ?? ''] as number).filter((n) => typeof n === 'number');
    switch (math) {
      case 'total':
        return list.length;
      case 'persons':
      case 'dau':
      case 'wau':
      case 'mau':
        return new Set(list.map((e) => e.personId)).size;
      case 'groups':
        return new Set(list.map((e) => e.groupId).filter(Boolean)).size;
      case 'sum':
        return numbers.reduce((a, b) => a + b, 0);
      case 'avg':
        return numbers.length ? numbers.reduce((a, b) => a + b, 0) / numbers.length : 0;
      case 'min':
        return numbers.length ? Math.min(...numbers) : 0;
      case 'max':
        return numbers.length ? Math.max(...numbers) : 0;
      case 'median':
        return numbers.length ? quantile(numbers, 0.5) : 0;
      case 'p90':
        return numbers.length ? quantile(numbers, 0.9) : 0;
      default:
        throw new Error(math);
    }
  };
  // Rolling windows where the interval is shorter than the window (PostHog's rule); else the period's persons.
  const windowDays = math === 'wau' && interval === 'day' ? 7 : math === 'mau' && interval !== 'month' ? 30 : undefined;
  if (windowDays) {
    const data = labels.map((label) => {
      const end = lastDay(label, interval);
      const start = addDays(end, -(windowDays - 1));
      return new Set(matching.filter((e) => e.at <= to && localDate(e.at, timezone) >= start && localDate(e.at, timezone) <= end).map((e) => e.personId)).size;
    });
    return { data, total: new Set(inRange.map((e) => e.personId)).size };
  }
  const periods = byPeriod(inRange);
  return { data: labels.map((label) => measure(periods.get(label) ?? [])), total: measure(inRange) };
}

describe('trends on a seeded random log', () => {
  // A fixed past range around the change to summer time in Paris (29 March 2026).
  const from = Date.parse('2026-03-16T00:00:00Z');
  const to = Date.parse('2026-04-12T00:00:00Z');
  const events = randomLog({ seed: 20261126, from, to, persons: 300 });
  let ctx: Awaited<ReturnType<typeof serviceWith>>;
  beforeAll(async () => {
    ctx = await serviceWith(events);
  });
  afterAll(() => ctx.svc.stop());

  const SERIES: Series[] = [
    { event: 'purchase' },
    { event: '$any', math: 'persons' },
    { event: 'purchase', math: 'groups' },
    { event: 'signup', math: 'dau' },
    { event: '$any', math: 'wau' },
    { event: '$pageview', math: 'mau' },
    { event: 'purchase', math: 'sum', property: 'amount' },
    { event: 'purchase', math: 'avg', property: 'amount' },
    { event: 'invite', math: 'median', property: 'amount' },
    { event: 'upgrade', math: 'p90', property: 'amount' },
  ];

  for (const timezone of ['UTC', 'Europe/Paris', 'America/New_York']) {
    for (const interval of ['day', 'week', 'month']) {
      test(`every math, by ${interval} in ${timezone}`, async () => {
        const dateFrom = '2026-03-20';
        const dateTo = '2026-04-08';
        const { status, body } = await ctx.insight('trends', { series: SERIES, dateFrom, dateTo, interval, timezone });
        expect(status).toBe(200);
        expect(body.results).toHaveLength(SERIES.length);
        expect(body.results[0].total).toBeGreaterThan(100);
        // The range in the zone: from the start of dateFrom's period to the end of dateTo.
        const startLabel = periodOf(dateFrom, interval);
        const rangeFrom = Date.parse(`${startLabel}T00:00:00Z`) - offsetAt(`${startLabel}T00:00:00`, timezone);
        const rangeTo = Date.parse(`${addDays(dateTo, 1)}T00:00:00Z`) - offsetAt(`${addDays(dateTo, 1)}T00:00:00`, timezone) - 1;
        const labels: string[] = [];
        for (let label = startLabel; label <= dateTo; label = periodOf(addDays(lastDay(label, interval), 1), interval)) labels.push(label);
        SERIES.forEach((series, i) => {
          const result = body.results[i];
          expect(result.labels).toEqual(labels);
          const expected = reference(events, series, labels, interval, timezone, rangeFrom, rangeTo);
          const close = series.math === 'avg' || series.math === 'median' || series.math === 'p90';
          if (close) {
            result.data.forEach((v: number, j: number) => expect(v).toBeCloseTo(expected.data[j]!, 9));
            expect(result.total).toBeCloseTo(expected.total, 9);
          } else {
            expect({ series: i, data: result.data, total: result.total }).toEqual({ series: i, data: expected.data, total: expected.total });
          }
        });
      });
    }
  }

  test('compare in Paris across the change to summer time: the previous days and month counted plainly by local date', async () => {
    const series = [{ event: '$any' }, { event: '$pageview', math: 'persons' }];
    const timezone = 'Europe/Paris';
    const cases = [
      // 10 days after the change beside the 10 before, which hold the day of 23 hours.
      { interval: 'day', dateFrom: '2026-03-30', dateTo: '2026-04-08', previous: Array.from({ length: 10 }, (_, i) => addDays('2026-03-20', i)) },
      { interval: 'month', dateFrom: '2026-04-01', dateTo: '2026-04-30', previous: ['2026-03-01'] },
    ];
    for (const { interval, dateFrom, dateTo, previous } of cases) {
      const { status, body } = await ctx.insight('trends', { series, dateFrom, dateTo, interval, timezone, compare: true });
      expect(status).toBe(200);
      const before = body.results.filter((r: any) => r.compare === 'previous');
      series.forEach((s, i) => {
        const inPeriod = (label: string) => events.filter((e) => matches(e, s.event) && periodOf(localDate(e.at, timezone), interval) === label);
        const count = (list: Sent[]) => (s.math === 'persons' ? new Set(list.map((e) => e.personId)).size : list.length);
        const all = previous.flatMap(inPeriod);
        expect({ interval, series: i, labels: before[i].labels, data: before[i].data, total: before[i].total }).toEqual({ interval, series: i, labels: previous, data: previous.map((l) => count(inPeriod(l))), total: count(all) });
      });
    }
  });

  test('a breakdown: the top values by events, the rest as $other', async () => {
    const series = [{ event: '$any', math: 'persons' }];
    const { status, body } = await ctx.insight('trends', { series, dateFrom: '2026-03-20', dateTo: '2026-04-08', breakdown: { property: 'plan', limit: 2 } });
    expect(status).toBe(200);
    const from = Date.parse('2026-03-20T00:00:00Z');
    const to = Date.parse('2026-04-09T00:00:00Z') - 1;
    const inRange = events.filter((e) => e.at >= from && e.at <= to && matches(e, '$any'));
    const plan = (e: Sent) => (e.properties?.plan as string | undefined) ?? '';
    const counts = new Map<string, number>();
    for (const e of inRange) counts.set(plan(e), (counts.get(plan(e)) ?? 0) + 1);
    const top = [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, 2).map(([v]) => v);
    const valueOf = (e: Sent) => (top.includes(plan(e)) ? plan(e) : '$other');
    const expected = new Map<string, number>();
    for (const value of [...top, '$other']) expected.set(value, new Set(inRange.filter((e) => valueOf(e) === value).map((e) => e.personId)).size);
    const answered = new Map(body.results.map((r: any) => [r.breakdownValue, r.total]));
    expect(answered).toEqual(expected);
    expect(body.results.at(-1).breakdownValue).toBe('$other');
  });

  test("includeBots counts the crawlers' events and persons, which are left out by default", async () => {
    const series = [{ event: '$any', math: 'persons' }, { event: '$any' }];
    const query = { series, dateFrom: '2026-03-20', dateTo: '2026-04-08' };
    const inRange = events.filter((e) => e.at >= Date.parse('2026-03-20T00:00:00Z') && e.at < Date.parse('2026-04-09T00:00:00Z'));
    const totals = (list: readonly Sent[]) => [new Set(list.map((e) => e.personId)).size, list.length];
    const people = inRange.filter((e) => matches(e, '$any'));
    expect(people.length).toBeLessThan(inRange.length);
    expect((await ctx.insight('trends', query)).body.results.map((r: any) => r.total)).toEqual(totals(people));
    expect((await ctx.insight('trends', { ...query, includeBots: true })).body.results.map((r: any) => r.total)).toEqual(totals(inRange));
  });

  test("first touch: a breakdown by the person's first referrer's host, and a filter on their landing page", async () => {
    const touch = firstTouch(events);
    const range = { dateFrom: '2026-03-20', dateTo: '2026-04-08' };
    const from = Date.parse('2026-03-20T00:00:00Z');
    const to = Date.parse('2026-04-09T00:00:00Z') - 1;
    // Crawlers' events are left out (no includeBots).
    const inRange = events.filter((e) => !isBot(e) && e.at >= from && e.at <= to);
    const breakdown = { property: '$initial_referring_domain', source: 'person', limit: 10 };
    const { status, body } = await ctx.insight('trends', { series: [{ event: '$any', math: 'persons' }], ...range, breakdown });
    expect(status).toBe(200);
    const expected = new Map<string, number>();
    for (const personId of new Set(inRange.map((e) => e.personId))) {
      const value = touch.get(personId)!.$initial_referring_domain;
      expected.set(value, (expected.get(value) ?? 0) + 1);
    }
    expect(new Map(body.results.map((r: any) => [r.breakdownValue, r.total]))).toEqual(expected);
    expect(expected.size).toBe(4);
    const filters = [{ property: '$initial_pathname', source: 'person', operator: 'eq', value: '/pricing' }];
    const filtered = await ctx.insight('trends', { series: [{ event: '$any' }], ...range, filters });
    const landed = inRange.filter((e) => touch.get(e.personId)!.$initial_pathname === '/pricing').length;
    expect(landed).toBeGreaterThan(0);
    expect(filtered.body.results[0].total).toBe(landed);
  });

  test('the persons behind a point are those it counts: persons, groups, events, weekly actives, a property', async () => {
    const series = [
      { event: '$pageview', math: 'persons' },
      { event: 'purchase', math: 'groups' },
      { event: 'purchase' },
      { event: '$any', math: 'wau' },
      { event: 'purchase', math: 'sum', property: 'amount' },
      { event: 'purchase', math: 'persons' },
    ];
    const query = { series, dateFrom: '2026-03-20', dateTo: '2026-04-08', timezone: 'Europe/Paris' };
    const { body } = await ctx.insight('trends', query);
    const checked = body.results.map(() => 0);
    for (const [i, result] of (body.results as Array<{ labels: string[]; data: number[] }>).entries()) {
      for (const j of [0, 6, 9, 19]) {
        // Events: the point counts events, its total is theirs; a property's: the persons who did it (series 5's count).
        const behind = await actorsBehind(ctx, 'trends', { query, series: i, label: result.labels[j] }, i === 2);
        const expected = i === 4 ? body.results[5].data[j] : result.data[j];
        expect({ series: i, label: result.labels[j], count: behind.total }).toEqual({ series: i, label: result.labels[j], count: expected });
        if (behind.total > 0) checked[i]++;
      }
    }
    expect(checked.every((n: number) => n > 0)).toBe(true);
  });

  test('the persons behind a breakdown value, $other included', async () => {
    const query = { series: [{ event: '$any', math: 'persons' }], dateFrom: '2026-03-20', dateTo: '2026-04-08', breakdown: { property: 'plan', limit: 2 } };
    const { body } = await ctx.insight('trends', query);
    expect(body.results).toHaveLength(3);
    for (const result of body.results as Array<{ breakdownValue: string; labels: string[]; data: number[] }>) {
      for (const j of [2, 12]) {
        const behind = await actorsBehind(ctx, 'trends', { query, series: 0, label: result.labels[j], breakdownValue: result.breakdownValue });
        expect({ value: result.breakdownValue, count: behind.total }).toEqual({ value: result.breakdownValue, count: result.data[j]! });
      }
    }
  });
});

/** The offset of `timezone` from UTC, ms, at the local wall time `wall` (no gap at midnight in the zones used). */
function offsetAt(wall: string, timezone: string): number {
  const guess = Date.parse(`${wall}Z`);
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-US', { timeZone: timezone, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit' })
      .formatToParts(new Date(guess))
      .map((p) => [p.type, p.value]),
  );
  const asUtc = Date.UTC(Number(parts.year), Number(parts.month) - 1, Number(parts.day), Number(parts.hour), Number(parts.minute), Number(parts.second));
  return asUtc - guess;
}

describe('trends, hand-made cases', () => {
  let ctx: Awaited<ReturnType<typeof serviceWith>>;
  const events: LogEvent[] = [];
  // Paris on 29 March 2026: 23 hours, from 23:00 UTC the day before to 22:00 UTC. One page view per hour at :30.
  for (let h = 0; h < 23; h++) events.push({ type: 'page', anonymousId: 'dst-visitor', properties: { path: '/' }, timestamp: new Date(Date.parse('2026-03-28T23:30:00Z') + h * HOUR).toISOString() });
  // A visitor with three anonymous page views who signs up and buys: one person.
  for (let i = 0; i < 3; i++) events.push({ type: 'page', anonymousId: 'anon-x', properties: { path: '/pricing' }, timestamp: `2026-02-02T10:0${i}:00Z` });
  events.push({ type: 'identify', userId: 'x', anonymousId: 'anon-x', timestamp: '2026-02-02T10:05:00Z' });
  events.push({ type: 'track', event: 'purchase', userId: 'x', properties: { plan: 'pro', amount: 10 }, timestamp: '2026-02-02T10:06:00Z' });
  // Purchases with a known breakdown and known amounts 1 to 8: pro 4, free 3, team 1.
  const plans = ['pro', 'pro', 'pro', 'pro', 'free', 'free', 'free', 'team'];
  plans.forEach((plan, i) => events.push({ type: 'track', event: 'purchase', userId: `buyer-${i}`, properties: { plan, amount: i + 1 }, timestamp: `2026-02-03T0${i}:00:00Z` }));
  events.push({ type: 'track', event: 'refund', userId: 'buyer-0', properties: { amount: 3 }, timestamp: '2026-02-03T12:00:00Z' });
  // The week before, for comparison: 2 purchases.
  events.push({ type: 'track', event: 'purchase', userId: 'early-1', timestamp: '2026-01-27T09:00:00Z' });
  events.push({ type: 'track', event: 'purchase', userId: 'early-2', timestamp: '2026-01-28T09:00:00Z' });
  // Active persons in March 2026: p1 on the 2nd and the 18th, p2 on the 10th.
  for (const [userId, at] of [['p1', '2026-03-02T10:00:00Z'], ['p2', '2026-03-10T10:00:00Z'], ['p1', '2026-03-18T10:00:00Z']] as const) events.push({ type: 'track', event: 'active-check', userId, timestamp: at });
  // Around the change to summer time in Berlin (29 March 2026): the last hour of 22 March, 29 March, the last day of March.
  for (const at of ['2026-03-22T22:30:00Z', '2026-03-29T12:00:00Z', '2026-03-31T10:00:00Z']) events.push({ type: 'track', event: 'dst-compare', userId: 'dst-buyer', timestamp: at });

  beforeAll(async () => {
    ctx = await serviceWith(resolvePersons(events));
  });
  afterAll(() => ctx.svc.stop());

  test('a daylight-saving day in Europe/Paris has 23 hourly periods', async () => {
    const { status, body } = await ctx.insight('trends', { series: [{ event: '$pageview' }], dateFrom: '2026-03-29', dateTo: '2026-03-29', interval: 'hour', timezone: 'Europe/Paris' });
    expect(status).toBe(200);
    const [result] = body.results;
    expect(result.labels).toHaveLength(23);
    expect(result.labels[0]).toBe('2026-03-29T00:00:00+01:00');
    expect(result.labels[2]).toBe('2026-03-29T03:00:00+02:00');
    expect(result.data).toEqual(Array(23).fill(1));
    expect(result.total).toBe(23);
    const daily = await ctx.insight('trends', { series: [{ event: '$pageview' }], dateFrom: '2026-03-28', dateTo: '2026-03-30', timezone: 'Europe/Paris' });
    expect(daily.body.results[0]).toMatchObject({ labels: ['2026-03-28', '2026-03-29', '2026-03-30'], data: [0, 23, 0], total: 23 });
    // In UTC the same events straddle two days.
    const utc = await ctx.insight('trends', { series: [{ event: '$pageview' }], dateFrom: '2026-03-28', dateTo: '2026-03-30' });
    expect(utc.body.results[0].data).toEqual([1, 22, 0]);
  });

  test('anonymous page views and a signed-in purchase are one person', async () => {
    const { body } = await ctx.insight('trends', { series: [{ event: '$any', math: 'persons' }, { event: '$any' }], dateFrom: '2026-02-02', dateTo: '2026-02-02' });
    expect(body.results[0].data).toEqual([1]);
    expect(body.results[1].data).toEqual([5]);
  });

  test("the persons behind a point of events: total is the point's count, the sum of their event counts", async () => {
    const query = { series: [{ event: '$pageview' }], dateFrom: '2026-02-02', dateTo: '2026-02-02' };
    const { body } = await ctx.actors('trends', { query, series: 0, label: '2026-02-02' });
    expect(body).toEqual({ results: [{ personId: 'x', eventCount: 3 }], total: 3 });
    const persons = await ctx.actors('trends', { query: { ...query, series: [{ event: '$pageview', math: 'persons' }] }, series: 0, label: '2026-02-02' });
    expect(persons.body).toEqual({ results: [{ personId: 'x', eventCount: 3 }], total: 1 });
  });

  test('a breakdown with a known top value, and $other', async () => {
    const { body } = await ctx.insight('trends', { series: [{ event: 'purchase' }], dateFrom: '2026-02-03', dateTo: '2026-02-03', breakdown: { property: 'plan', limit: 1 } });
    expect(body.results.map((r: any) => [r.breakdownValue, r.total])).toEqual([
      ['pro', 4],
      ['$other', 4],
    ]);
  });

  test('property maths: sum, avg, min, max, median and p90 of amounts 1 to 8', async () => {
    const maths = ['sum', 'avg', 'min', 'max', 'median', 'p90'];
    const { body } = await ctx.insight('trends', { series: maths.map((math) => ({ event: 'purchase', math, property: 'amount' })), dateFrom: '2026-02-03', dateTo: '2026-02-03' });
    const answered = body.results.map((r: any) => r.data[0]);
    [36, 4.5, 1, 8, 4.5, 7.3].forEach((expected, i) => expect(answered[i]).toBeCloseTo(expected, 9));
  });

  test('compare: the week before beside this one', async () => {
    const { body } = await ctx.insight('trends', { series: [{ event: 'purchase' }], dateFrom: '2026-02-02', dateTo: '2026-02-08', interval: 'week', compare: true });
    expect(body.results).toEqual([
      { label: 'purchase', series: 0, compare: 'current', labels: ['2026-02-02'], data: [9], total: 9 },
      { label: 'purchase', series: 0, compare: 'previous', labels: ['2026-01-26'], data: [2], total: 2 },
    ]);
  });

  test('compare across the change to summer time: the previous days and month in calendar terms of the zone', async () => {
    const series = [{ event: 'dst-compare' }];
    const days = await ctx.insight('trends', { series, dateFrom: '2026-03-23', dateTo: '2026-03-29', timezone: 'Europe/Berlin', compare: true });
    expect(days.status).toBe(200);
    expect(days.body.results.map((r: any) => [r.compare, r.labels[0], r.labels[6], r.data, r.total])).toEqual([
      ['current', '2026-03-23', '2026-03-29', [0, 0, 0, 0, 0, 0, 1], 1],
      // 22 March 23:30 in Berlin: the last hour of a day of 24 hours, beside one of 23.
      ['previous', '2026-03-16', '2026-03-22', [0, 0, 0, 0, 0, 0, 1], 1],
    ]);
    // April has 30 days, March 31: the previous month is the whole of March.
    const months = await ctx.insight('trends', { series, dateFrom: '2026-04-01', dateTo: '2026-04-30', interval: 'month', timezone: 'Europe/Berlin', compare: true });
    expect(months.body.results.map((r: any) => [r.compare, r.labels, r.data])).toEqual([
      ['current', ['2026-04-01'], [0]],
      ['previous', ['2026-03-01'], [3]],
    ]);
  });

  test('dau is the persons of each period, by week and month; wau by week too; mau by week a rolling 30 days', async () => {
    const series = ['dau', 'wau', 'mau'].map((math) => ({ event: 'active-check', math }));
    const month = await ctx.insight('trends', { series, dateFrom: '2026-03-01', dateTo: '2026-03-19', interval: 'month' });
    expect(month.status).toBe(200);
    expect(month.body.results.map((r: any) => [r.labels, r.data, r.total])).toEqual([
      [['2026-03-01'], [2], 2],
      [['2026-03-01'], [2], 2],
      [['2026-03-01'], [2], 2],
    ]);
    const weeks = await ctx.insight('trends', { series, dateFrom: '2026-03-02', dateTo: '2026-03-19', interval: 'week' });
    expect(weeks.body.results.map((r: any) => r.data)).toEqual([
      [1, 1, 1],
      [1, 1, 1],
      [1, 2, 2],
    ]);
    const hours = await ctx.insight('trends', { series: [{ event: 'active-check', math: 'dau' }], dateFrom: '2026-03-18T09:00:00Z', dateTo: '2026-03-18T11:59:59Z', interval: 'hour' });
    expect(hours.body.results[0].data).toEqual([0, 1, 0]);
  });

  test("the period holding now is incomplete: incompleteFrom in trends, retention, stickiness and lifecycle; absent for past ranges", async () => {
    const today = new Date().toISOString().slice(0, 10);
    const series = [{ event: '$any' }];
    const trends = await ctx.insight('trends', { series, dateFrom: '-2d', compare: true });
    expect(trends.body.results.map((r: any) => r.labels.at(-1) === today)).toEqual([true, false]);
    expect(trends.body.incompleteFrom).toBe(today);
    // A dateTo after now: from the period holding now on.
    const ahead = await ctx.insight('trends', { series, dateFrom: '-1d', dateTo: new Date(Date.now() + 2 * DAY).toISOString().slice(0, 10) });
    expect(ahead.body.results[0].labels.indexOf(ahead.body.incompleteFrom)).toBe(1);
    const retention = await ctx.insight('retention', { startEvent: { event: '$any' }, returnEvent: { event: '$any' }, periods: 3 });
    expect(retention.body.incompleteFrom).toBe(today);
    expect(retention.body.results.at(-1).cohort).toBe(today);
    const stickiness = await ctx.insight('stickiness', { series, dateFrom: '-2d' });
    expect(stickiness.body.incompleteFrom).toBe(today);
    const lifecycle = await ctx.insight('lifecycle', { series, dateFrom: '-2d' });
    expect(lifecycle.body.incompleteFrom).toBe(today);
    const past = await ctx.insight('trends', { series, dateFrom: '2026-02-02', dateTo: '2026-02-08' });
    expect(past.status).toBe(200);
    expect('incompleteFrom' in past.body).toBe(false);
  });

  test('a formula over two series', async () => {
    const { body } = await ctx.insight('trends', { series: [{ event: 'refund' }, { event: 'purchase' }], dateFrom: '2026-02-03', dateTo: '2026-02-03', formula: 'A / B * 100' });
    expect(body.results).toEqual([{ label: 'A / B * 100', labels: ['2026-02-03'], data: [12.5], total: 12.5 }]);
  });

  test('?explain=1 answers the statement, with its values bound and written in', async () => {
    const { status, body } = await ctx.insight('trends', { series: [{ event: "it's `odd`" }], dateFrom: '2026-02-03', dateTo: '2026-02-03' }, '?explain=1');
    expect(status).toBe(200);
    expect(body.statement).not.toContain("it's");
    expect(Object.values(body.params)).toContain("it's `odd`");
    expect(body.sql).toContain("'it\\'s `odd`'");
  });

  test('bad requests are 400 with pointers', async () => {
    const cases: Array<[unknown, string]> = [
      [{ series: [{ event: 'a', math: 'unknown' }] }, '/series/0/math'],
      [{ series: Array(11).fill({ event: 'a' }) }, '/series'],
      [{ series: [] }, '/series'],
      [{ series: [{ event: 'a' }], interval: 'year' }, '/interval'],
      [{ series: [{ event: 'a', math: 'sum' }] }, '/series/0/property'],
      [{ series: [{ event: 'a', math: 'wau' }], interval: 'hour' }, '/series/0/math'],
      [{ series: [{ event: 'a' }], interval: 'hour', dateFrom: '-1y' }, '/interval'],
      [{ series: [{ event: 'a' }], dateFrom: 'yesterday' }, '/dateFrom'],
      [{ series: [{ event: 'a' }], timezone: 'Mars/Olympus' }, '/timezone'],
      [{ series: [{ event: 'a' }], dateFrom: '2026-02-03', dateTo: '2026-02-01' }, '/dateTo'],
      [{ series: [{ event: 'a' }], formula: 'A + C' }, '/formula'],
      [{ series: [{ event: 'a' }], formula: 'A; DROP' }, '/formula'],
      [{ series: [{ event: 'a' }], breakdown: { property: 'a..b' } }, '/breakdown/property'],
      [{ series: [{ event: 'a' }], filters: [{ cohort: 'no-such-cohort' }] }, '/filters/0/cohort'],
      [{ series: [{ event: 'a' }], filters: [{ property: 'plan', value: 'pro' }] }, '/filters/0'],
      [{ series: [{ event: 'a' }], breakdown: { property: 'plan', limit: '3' } }, '/breakdown/limit'],
    ];
    for (const [body, pointer] of cases) {
      const answer = await ctx.insight('trends', body);
      expect({ body, status: answer.status }).toEqual({ body, status: 400 });
      expect(answer.body.errors.map((e: any) => e.pointer)).toContain(pointer);
    }
  });

  test("a cohort of another workspace is a 400, as an unknown one", async () => {
    const other = await createWorkspace(ctx.svc, { name: uniqueName('other') });
    const cohort = await ctx.svc.request('POST', '/cohorts', { key: other.privateApiKey, body: { name: 'theirs', filters: [{ property: 'plan', operator: 'is_set' }] } });
    expect(cohort.status).toBe(201);
    const { id } = (await cohort.json()) as { id: string };
    const { status, body } = await ctx.insight('trends', { series: [{ event: 'purchase', filters: [{ cohort: id }] }] });
    expect(status).toBe(400);
    expect(body.errors[0].pointer).toBe('/series/0/filters/0/cohort');
  });

  test('a property name with quotes and backticks is a bound value, not SQL', async () => {
    const { status, body } = await ctx.insight('trends', {
      series: [{ event: 'purchase', math: 'sum', property: "a'b`c\"d" }],
      dateFrom: '2026-02-03',
      dateTo: '2026-02-03',
      breakdown: { property: "x'`y" },
      filters: [{ property: "p'`q", operator: 'is_not_set' }],
    });
    expect(status).toBe(200);
    expect(body.results).toEqual([{ label: 'purchase', series: 0, breakdownValue: '', labels: ['2026-02-03'], data: [0], total: 0 }]);
  });
});
