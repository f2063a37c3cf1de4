import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { createWorkspace } from '../helpers/test-service';
import { uniqueName } from '../helpers/engine-dir';
import { actorsBehind } from './actors-check';
import { DAY, firstTouch, HOUR, matches, randomLog, resolvePersons, serviceWith, type LogEvent, type Sent } from './event-log';

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
  const windowDays = { dau: 1, wau: 7, mau: 30 }[math as 'dau'];
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
    { event: '$pageview', math: 'persons' },
    { event: '$any', math: 'persons' },
    { event: 'purchase', math: 'groups' },
    { event: 'signup', math: 'dau' },
    { event: '$any', math: 'wau' },
    { event: 'purchase', math: 'sum', property: 'amount' },
    { event: 'purchase', math: 'avg', property: 'amount' },
    { event: 'invite', math: 'median', property: 'amount' },
    { event: 'upgrade', math: 'p90', property: 'amount' },
  ];

  for (const timezone of ['UTC', 'Europe/Paris', 'America/New_York']) {
    for (const interval of ['day', 'week']) {
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

  test('a breakdown: the top values by events, the rest as $other', async () => {
    const series = [{ event: '$any', math: 'persons' }];
    const { status, body } = await ctx.insight('trends', { series, dateFrom: '2026-03-20', dateTo: '2026-04-08', breakdown: { property: 'plan', limit: 2 } });
    expect(status).toBe(200);
    const from = Date.parse('2026-03-20T00:00:00Z');
    const to = Date.parse('2026-04-09T00:00:00Z') - 1;
    const inRange = events.filter((e) => e.at >= from && e.at <= to);
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

  test("first touch: a breakdown by the person's first referrer's host, and a filter on their landing page", async () => {
    const touch = firstTouch(events);
    const range = { dateFrom: '2026-03-20', dateTo: '2026-04-08' };
    const from = Date.parse('2026-03-20T00:00:00Z');
    const to = Date.parse('2026-04-09T00:00:00Z') - 1;
    const inRange = events.filter((e) => e.at >= from && e.at <= to);
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
        const behind = await actorsBehind(ctx, 'trends', { query, series: i, label: result.labels[j] });
        // Events: the point counts events; a property's: the persons who did it (series 5's count).
        const expected = i === 2 ? behind.events : i === 4 ? body.results[5].data[j] : result.data[j];
        expect({ series: i, label: result.labels[j], count: i === 2 ? result.data[j] : behind.total }).toEqual({ series: i, label: result.labels[j], count: expected });
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
      [{ series: [{ event: 'a', math: 'dau' }], interval: 'hour' }, '/series/0/math'],
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
