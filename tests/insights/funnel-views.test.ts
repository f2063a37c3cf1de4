import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { Value } from '@sinclair/typebox/value';
import { FunnelsAnswer, FunnelTimeToConvertAnswer, FunnelTrendsAnswer } from '../../src/insights/model';
import { isBot, randomLog, resolvePersons, serviceWith, type LogEvent, type Sent } from './event-log';
import { bestConversion, conversions, holds, median, type Funnel } from './funnel-reference';

/**
 * The funnel's other views (`funnelVizType`): conversion over time (`trends`) and time to convert,
 * against a plain computation of their definitions (docs/api/insights.md#other-views-of-a-funnel)
 * on the seeded random log of the funnels' reference tests, and hand-made cases with known answers.
 */

interface View {
  funnelFromStep?: number;
  funnelToStep?: number;
  interval?: 'day' | 'week';
  binCount?: number;
}

/** Each actor's events in order, crawlers and events failing the request's filters left out. */
function byActor(log: readonly Sent[], funnel: Funnel): Sent[][] {
  const actorOf = (e: Sent) => (funnel.aggregateBy === 'group' ? (e.groupId ?? '') : e.personId);
  const actors = new Map<string, Sent[]>();
  for (const e of log) if (!isBot(e) && holds(e, funnel.filters) && actorOf(e) !== '') actors.set(actorOf(e), [...(actors.get(actorOf(e)) ?? []), e]);
  return [...actors.values()].map((events) => events.sort((a, b) => a.at - b.at || a.index - b.index));
}

/** The local date of `ms` in `timezone`, or of the Monday of its week. */
function periodOf(ms: number, timezone: string, interval: 'day' | 'week'): string {
  const date = new Intl.DateTimeFormat('en-CA', { timeZone: timezone }).format(new Date(ms));
  if (interval === 'day') return date;
  const d = new Date(`${date}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() - ((d.getUTCDay() + 6) % 7));
  return d.toISOString().slice(0, 10);
}

/** Conversion over time by the definition: per actor and period of a start, the deepest conversion started in it. */
function trendsReference(log: readonly Sent[], funnel: Funnel & View, from: number, to: number, timezone: string, labels: string[]) {
  const first = (funnel.funnelFromStep ?? 0) + 1;
  const last = (funnel.funnelToStep ?? funnel.steps.length - 1) + 1;
  const entered = labels.map(() => 0);
  const completed = labels.map(() => 0);
  for (const events of byActor(log, funnel)) {
    const best = new Map<string, number>();
    for (const c of conversions(events, funnel, from, to)) {
      const period = periodOf(c.start, timezone, funnel.interval ?? 'day');
      best.set(period, Math.max(best.get(period) ?? 0, c.depth));
    }
    for (const [period, depth] of best) {
      const i = labels.indexOf(period);
      expect(i).toBeGreaterThanOrEqual(0);
      if (depth >= first) entered[i]!++;
      if (depth >= last) completed[i]!++;
    }
  }
  return { labels, entered, completed, conversionRate: entered.map((e, i) => (e === 0 ? 0 : completed[i]! / e)) };
}

/** Time to convert by the definition: the times of the best conversions that reached funnelToStep, binned. */
function timeToConvertReference(log: readonly Sent[], funnel: Funnel & View, from: number, to: number) {
  const a = funnel.funnelFromStep ?? 0;
  const b = funnel.funnelToStep ?? funnel.steps.length - 1;
  const seconds = byActor(log, funnel)
    .map((events) => bestConversion(events, funnel, from, to))
    .filter((c) => c !== undefined && c.depth > b)
    .map((c) => c!.times.slice(a, b).reduce((x, y) => x + y, 0) / 1000);
  const n = seconds.length;
  if (n === 0) return { conversions: 0, averageSeconds: null, medianSeconds: null, binWidthSeconds: null, bins: [] };
  const low = Math.floor(Math.min(...seconds));
  const high = Math.ceil(Math.max(...seconds));
  const count = funnel.binCount ?? Math.min(60, Math.max(1, Math.ceil(Math.cbrt(n))));
  const width = Math.max(1, Math.ceil((high - low) / count));
  const bins = Array.from({ length: count }, (_, i) => ({ fromSeconds: low + i * width, count: 0 }));
  for (const s of seconds) bins[Math.min(count - 1, Math.floor((s - low) / width))]!.count++;
  return { conversions: n, averageSeconds: seconds.reduce((x, y) => x + y, 0) / n, medianSeconds: median(seconds), binWidthSeconds: width, bins };
}

/** Dates from `first` to `last` (YYYY-MM-DD), every `step` days. */
const datesBetween = (first: string, last: string, step = 1) => {
  const dates: string[] = [];
  for (let d = Date.parse(`${first}T00:00:00Z`); d <= Date.parse(`${last}T00:00:00Z`); d += step * 86_400_000) dates.push(new Date(d).toISOString().slice(0, 10));
  return dates;
};

describe('the funnel views on a seeded random log', () => {
  // The log and range of the funnels' reference tests (funnels.test.ts): a summer-time change inside.
  const events = resolvePersons(randomLog({ seed: 20251127, from: Date.parse('2025-03-10T00:00:00Z'), to: Date.parse('2025-04-20T00:00:00Z'), persons: 400 }).sort((a, b) => a.at - b.at));
  let ctx: Awaited<ReturnType<typeof serviceWith>>;
  beforeAll(async () => {
    ctx = await serviceWith(events);
  });
  afterAll(() => ctx.svc.stop());

  const timezone = 'Europe/Paris';
  const dates = { dateFrom: '2025-03-20', dateTo: '2025-04-08', timezone };
  const from = Date.parse('2025-03-20T00:00:00+01:00');
  const to = Date.parse('2025-04-09T00:00:00+02:00') - 1;
  const three = [{ event: 'pageview_pricing' }, { event: 'signup' }, { event: 'purchase' }];
  const CASES: Array<[string, Funnel & View]> = [
    ['ordered', { steps: three }],
    ['ordered, from step 1', { steps: three, funnelFromStep: 1 }],
    ['ordered, steps 0 to 1, a 2-day window', { steps: three, funnelToStep: 1, window: { value: 2, unit: 'day' } }],
    ['strict', { steps: [{ event: '$pageview' }, { event: 'signup' }, { event: 'purchase' }], order: 'strict', window: { value: 1, unit: 'week' } }],
    ['unordered, an exclusion', { steps: three, order: 'unordered', exclusions: [{ event: 'invite', fromStep: 0, toStep: 1 }] }],
    ['ordered, by group', { steps: three, aggregateBy: 'group' }],
  ];

  for (const [name, funnel] of CASES) {
    for (const interval of ['day', 'week'] as const) {
      test(`conversion over time by ${interval}: ${name}`, async () => {
        const res = await ctx.insight('funnels', { ...funnel, ...dates, funnelVizType: 'trends', interval });
        expect({ status: res.status, body: res.status === 200 ? 'ok' : res.body }).toEqual({ status: 200, body: 'ok' });
        expect(Value.Check(FunnelTrendsAnswer, res.body)).toBe(true);
        const labels = interval === 'day' ? datesBetween('2025-03-20', '2025-04-08') : datesBetween('2025-03-17', '2025-04-07', 7);
        const expected = trendsReference(events, { ...funnel, interval }, from, to, timezone, labels);
        if (name === 'ordered') expect(expected.entered.reduce((a, b) => a + b, 0)).toBeGreaterThan(50);
        const [result] = res.body.results;
        expect({ labels: result.labels, entered: result.entered, completed: result.completed }).toEqual({ labels, entered: expected.entered, completed: expected.completed });
        result.conversionRate.forEach((rate: number, i: number) => expect(rate).toBeCloseTo(expected.conversionRate[i]!, 12));
      });
    }
    test(`time to convert: ${name}`, async () => {
      for (const binCount of [undefined, 7]) {
        const res = await ctx.insight('funnels', { ...funnel, ...dates, funnelVizType: 'time_to_convert', ...(binCount ? { binCount } : {}) });
        expect({ status: res.status, body: res.status === 200 ? 'ok' : res.body }).toEqual({ status: 200, body: 'ok' });
        expect(Value.Check(FunnelTimeToConvertAnswer, res.body)).toBe(true);
        const expected = timeToConvertReference(events, { ...funnel, binCount }, from, to);
        if (name === 'ordered') expect(expected.conversions).toBeGreaterThan(10);
        const [result] = res.body.results;
        expect({ conversions: result.conversions, width: result.binWidthSeconds, bins: result.bins }).toEqual({ conversions: expected.conversions, width: expected.binWidthSeconds, bins: expected.bins });
        expect(result.averageSeconds).toBeCloseTo(expected.averageSeconds!, 6);
        expect(result.medianSeconds).toBeCloseTo(expected.medianSeconds!, 6);
      }
    });
  }

  test('funnelVizType "steps" answers as a request without it', async () => {
    const plain = await ctx.insight('funnels', { steps: three, ...dates });
    const steps = await ctx.insight('funnels', { steps: three, ...dates, funnelVizType: 'steps' });
    expect(Value.Check(FunnelsAnswer, steps.body)).toBe(true);
    expect(steps).toEqual(plain);
  });
});

describe('the funnel views, hand-made cases', () => {
  const events: LogEvent[] = [];
  const track = (event: string, userId: string, timestamp: string) => events.push({ type: 'track', event, userId, timestamp });
  // Times from a to b: 10, 20, 30 and 100 seconds (average 40, median 25); a fifth never gets to b.
  [10, 20, 30, 100].forEach((seconds, i) => {
    track('tt_a', `timed-${i}`, '2025-06-02T10:00:00.000Z');
    track('tt_b', `timed-${i}`, new Date(Date.parse('2025-06-02T10:00:00.000Z') + seconds * 1000).toISOString());
  });
  track('tt_a', 'timed-never', '2025-06-02T10:00:00.000Z');
  // Three steps: a to b in 60 s, b to c in 120 s.
  track('t3_a', 'three', '2025-06-02T10:00:00.000Z');
  track('t3_b', 'three', '2025-06-02T10:01:00.000Z');
  track('t3_c', 'three', '2025-06-02T10:03:00.000Z');
  // Conversion over time: on 2 June tr-0 views and buys, tr-1 views and buys the next day (after
  // viewing again), tr-2 only views; on 3 June tr-1's second view converts too, tr-3 only views.
  track('tr_view', 'tr-0', '2025-06-02T10:00:00.000Z');
  track('tr_buy', 'tr-0', '2025-06-02T11:00:00.000Z');
  track('tr_view', 'tr-1', '2025-06-02T10:00:00.000Z');
  track('tr_view', 'tr-1', '2025-06-03T10:00:00.000Z');
  track('tr_buy', 'tr-1', '2025-06-03T10:30:00.000Z');
  track('tr_view', 'tr-2', '2025-06-02T12:00:00.000Z');
  track('tr_view', 'tr-3', '2025-06-03T12:00:00.000Z');

  let ctx: Awaited<ReturnType<typeof serviceWith>>;
  beforeAll(async () => {
    ctx = await serviceWith(resolvePersons(events));
  });
  afterAll(() => ctx.svc.stop());
  const range = { dateFrom: '2025-06-01', dateTo: '2025-06-04' };
  const answer = async (body: Record<string, unknown>) => {
    const res = await ctx.insight('funnels', { ...range, ...body });
    expect({ status: res.status, body: res.status === 200 ? 'ok' : res.body }).toEqual({ status: 200, body: 'ok' });
    return res.body.results[0];
  };

  test('time to convert: four conversions of 10, 20, 30 and 100 s in two bins, or three', async () => {
    const steps = [{ event: 'tt_a' }, { event: 'tt_b' }];
    expect(await answer({ steps, funnelVizType: 'time_to_convert' })).toEqual({
      conversions: 4,
      averageSeconds: 40,
      medianSeconds: 25,
      binWidthSeconds: 45,
      bins: [
        { fromSeconds: 10, count: 3 },
        { fromSeconds: 55, count: 1 },
      ],
    });
    expect((await answer({ steps, funnelVizType: 'time_to_convert', binCount: 3 })).bins).toEqual([
      { fromSeconds: 10, count: 3 },
      { fromSeconds: 40, count: 0 },
      { fromSeconds: 70, count: 1 },
    ]);
  });

  test('time to convert between two given steps', async () => {
    const steps = [{ event: 't3_a' }, { event: 't3_b' }, { event: 't3_c' }];
    expect(await answer({ steps, funnelVizType: 'time_to_convert' })).toMatchObject({ conversions: 1, averageSeconds: 180, bins: [{ fromSeconds: 180, count: 1 }] });
    expect(await answer({ steps, funnelVizType: 'time_to_convert', funnelFromStep: 1 })).toMatchObject({ conversions: 1, medianSeconds: 120 });
    expect(await answer({ steps, funnelVizType: 'time_to_convert', funnelToStep: 1 })).toMatchObject({ conversions: 1, medianSeconds: 60 });
  });

  test('time to convert with no conversions: no bins, no times', async () => {
    expect(await answer({ steps: [{ event: 'nobody_did_this' }, { event: 'tt_b' }], funnelVizType: 'time_to_convert' })).toEqual({ conversions: 0, averageSeconds: null, medianSeconds: null, binWidthSeconds: null, bins: [] });
  });

  test('conversion over time: by day and by week', async () => {
    const steps = [{ event: 'tr_view' }, { event: 'tr_buy' }];
    expect(await answer({ steps, funnelVizType: 'trends' })).toEqual({
      labels: ['2025-06-01', '2025-06-02', '2025-06-03', '2025-06-04'],
      entered: [0, 3, 2, 0],
      completed: [0, 2, 1, 0],
      conversionRate: [0, 2 / 3, 0.5, 0],
    });
    expect(await answer({ steps, funnelVizType: 'trends', interval: 'week' })).toEqual({ labels: ['2025-05-26', '2025-06-02'], entered: [0, 4], completed: [0, 2], conversionRate: [0, 0.5] });
  });

  const two = [{ event: 'tt_a' }, { event: 'tt_b' }];
  const BAD: Array<[string, Record<string, unknown>, string]> = [
    ['an unknown view', { steps: two, funnelVizType: 'sideways' }, '/funnelVizType'],
    ['an interval without the trends view', { steps: two, interval: 'week' }, '/interval'],
    ['bins without the time to convert view', { steps: two, funnelVizType: 'trends', binCount: 5 }, '/binCount'],
    ['a breakdown with the trends view', { steps: two, funnelVizType: 'trends', breakdown: { property: 'plan' } }, '/breakdown'],
    ['funnelToStep past the last step', { steps: two, funnelVizType: 'time_to_convert', funnelToStep: 2 }, '/funnelToStep'],
    ['funnelFromStep not before funnelToStep', { steps: [...two, { event: 'x' }], funnelVizType: 'trends', funnelFromStep: 1, funnelToStep: 1 }, '/funnelFromStep'],
    ['funnelFromStep with the steps view', { steps: two, funnelFromStep: 0 }, '/funnelFromStep'],
    ['no bins', { steps: two, funnelVizType: 'time_to_convert', binCount: 0 }, '/binCount'],
  ];
  for (const [name, body, pointer] of BAD) {
    test(`400 for ${name}, pointing at ${pointer}`, async () => {
      const res = await ctx.insight('funnels', { ...range, ...body });
      expect(res.status).toBe(400);
      expect(res.body.errors.map((e: { pointer: string }) => e.pointer)).toContain(pointer);
    });
  }
});
