import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { Value } from '@sinclair/typebox/value';
import { FunnelsAnswer } from '../../src/insights/model';
import { actorsBehind } from './actors-check';
import { sendEvents } from '../helpers/test-service';
import { isBot, matches, randomLog, resolvePersons, serviceWith, type LogEvent, type Sent } from './event-log';
import { bestConversion, holds, median, text, type Funnel, type Step } from './funnel-reference';

/**
 * Funnels against a plain computation of the same definition (docs/api/insights-funnels.md.part)
 * on a seeded random log, and hand-made cases with known answers.
 */

interface ExpectedStep {
  count: number;
  times: number[];
}

/** The reference answer: per breakdown value (or '' without one), counts and times of each step. */
function reference(log: readonly Sent[], funnel: Funnel, from: number, to: number): Map<string, ExpectedStep[]> {
  const n = funnel.steps.length;
  // A crawler's events are left out before anything else: they break no strict order.
  const considered = log.filter((e) => !isBot(e) && holds(e, funnel.filters));
  const actorOf = (e: Sent) => (funnel.aggregateBy === 'group' ? (e.groupId ?? '') : e.personId);
  const byActor = new Map<string, Sent[]>();
  for (const e of considered) if (actorOf(e) !== '') byActor.set(actorOf(e), [...(byActor.get(actorOf(e)) ?? []), e]);
  const results = new Map<string, ExpectedStep[]>();
  const conversions = [...byActor.values()].map((events) => bestConversion(events.sort((a, b) => a.at - b.at || a.index - b.index), funnel, from, to)).filter((c) => c !== undefined);
  let valueOf = (value: string) => value;
  if (funnel.breakdown) {
    // The top values by events that can start a conversion in the range, of every actor.
    const counts = new Map<string, number>();
    const starts = considered.filter((e) => e.at >= from && e.at <= to && funnel.steps.some((s, k) => (k === 0 || funnel.order === 'unordered') && matches(e, s.event) && holds(e, s.filters)));
    for (const e of starts) counts.set(text(e, funnel.breakdown.property), (counts.get(text(e, funnel.breakdown.property)) ?? 0) + 1);
    const top = [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, funnel.breakdown.limit ?? 10).map(([v]) => v);
    valueOf = (value) => (top.includes(value) ? value : '$other');
  }
  for (const c of conversions) {
    const key = valueOf(c.value);
    const steps = results.get(key) ?? Array.from({ length: n }, () => ({ count: 0, times: [] as number[] }));
    for (let k = 0; k < c.depth; k++) {
      steps[k]!.count++;
      if (k > 0) steps[k]!.times.push(c.times[k - 1]! / 1000);
    }
    results.set(key, steps);
  }
  if (!funnel.breakdown && results.size === 0) results.set('', Array.from({ length: n }, () => ({ count: 0, times: [] })));
  return results;
}

/** Checks an answer against the reference: counts and rates exactly, times to within float error. */
function expectAnswer(body: any, expected: Map<string, ExpectedStep[]>, funnel: Funnel) {
  expect(Value.Check(FunnelsAnswer, body)).toBe(true);
  const answered = new Map<string, any[]>(body.results.map((r: any) => [r.breakdownValue ?? '', r.steps]));
  expect([...answered.keys()].sort()).toEqual([...expected.keys()].sort());
  for (const [value, steps] of expected) {
    const got = answered.get(value)!;
    expect({ value, counts: got.map((s) => s.count) }).toEqual({ value, counts: steps.map((s) => s.count) });
    got.forEach((step, k) => {
      expect(step.event).toBe(funnel.steps[k]!.event);
      const first = steps[0]!.count;
      expect(step.conversionRate).toBeCloseTo(first === 0 ? 0 : steps[k]!.count / first, 12);
      const before = steps[Math.max(0, k - 1)]!.count;
      expect(step.stepConversionRate).toBeCloseTo(before === 0 ? 0 : steps[k]!.count / before, 12);
      if (k === 0 || steps[k]!.times.length === 0) {
        expect([step.medianSeconds, step.averageSeconds]).toEqual([null, null]);
      } else {
        const times = steps[k]!.times;
        expect(step.averageSeconds).toBeCloseTo(times.reduce((a, b) => a + b, 0) / times.length, 6);
        expect(step.medianSeconds).toBeCloseTo(median(times), 6);
      }
    });
  }
}

describe('funnels on a seeded random log', () => {
  // A fixed past range around the change to summer time in Paris (30 March 2025).
  const logFrom = Date.parse('2025-03-10T00:00:00Z');
  const logTo = Date.parse('2025-04-20T00:00:00Z');
  // Sent in time order (ties in their random order), as live traffic comes.
  const events = resolvePersons(randomLog({ seed: 20251127, from: logFrom, to: logTo, persons: 400 }).sort((a, b) => a.at - b.at));
  let ctx: Awaited<ReturnType<typeof serviceWith>>;
  beforeAll(async () => {
    ctx = await serviceWith(events);
  });
  afterAll(() => ctx.svc.stop());

  // The range asked for, in Paris: 20 March to 8 April inclusive (a summer-time change inside).
  const dates = { dateFrom: '2025-03-20', dateTo: '2025-04-08', timezone: 'Europe/Paris' };
  const from = Date.parse('2025-03-20T00:00:00+01:00');
  const to = Date.parse('2025-04-09T00:00:00+02:00') - 1;

  const three: Step[] = [{ event: 'pageview_pricing' }, { event: 'signup' }, { event: 'purchase' }];
  const CASES: Array<[string, Funnel]> = [
    ['ordered', { steps: three }],
    ['ordered, a 2-day window', { steps: three, window: { value: 2, unit: 'day' } }],
    ['ordered, a repeated step', { steps: [{ event: 'signup' }, { event: 'signup' }, { event: 'purchase' }] }],
    ['ordered, a step with filters and the request filtered', { steps: [{ event: 'signup', filters: [{ property: 'plan', operator: 'neq', value: 'free' }] }, { event: 'purchase' }], filters: [{ property: 'plan', operator: 'neq', value: 'enterprise' }] }],
    ['ordered, page views to a purchase', { steps: [{ event: '$pageview' }, { event: 'purchase' }], window: { value: 6, unit: 'hour' } }],
    ['ordered, a month window', { steps: [{ event: 'invite' }, { event: 'upgrade' }], window: { value: 1, unit: 'month' } }],
    ['strict', { steps: [{ event: 'signup' }, { event: 'purchase' }], order: 'strict' }],
    ['strict, 3 steps', { steps: [{ event: '$pageview' }, { event: 'signup' }, { event: 'purchase' }], order: 'strict', window: { value: 1, unit: 'week' } }],
    ['unordered', { steps: [{ event: 'signup' }, { event: 'purchase' }, { event: 'upgrade' }], order: 'unordered' }],
    ['unordered, a repeated step', { steps: [{ event: 'purchase' }, { event: 'invite' }, { event: 'purchase' }], order: 'unordered', window: { value: 3, unit: 'day' } }],
    ['ordered, an exclusion', { steps: [...three, { event: 'upgrade' }], exclusions: [{ event: 'invite', fromStep: 1, toStep: 3 }] }],
    ['strict, an exclusion', { steps: three, order: 'strict', exclusions: [{ event: 'invite', fromStep: 0, toStep: 2 }] }],
    ['unordered, exclusions', { steps: three, order: 'unordered', exclusions: [{ event: 'invite', fromStep: 0, toStep: 1 }, { event: 'upgrade', fromStep: 1, toStep: 2 }] }],
    ['ordered, a breakdown', { steps: three, breakdown: { property: 'plan', limit: 2 } }],
    ['strict, a breakdown', { steps: [{ event: 'signup' }, { event: 'purchase' }], order: 'strict', breakdown: { property: 'plan' } }],
    ['unordered, a breakdown', { steps: [{ event: 'signup' }, { event: 'purchase' }], order: 'unordered', breakdown: { property: 'plan', limit: 3 } }],
  ];
  for (const aggregateBy of ['person', 'group'] as const) {
    for (const [name, funnel] of CASES) {
      test(`${name}, by ${aggregateBy}`, async () => {
        const body = { ...funnel, aggregateBy, ...dates };
        const res = await ctx.insight('funnels', body);
        expect({ status: res.status, body: res.status === 200 ? 'ok' : res.body }).toEqual({ status: 200, body: 'ok' });
        const expected = reference(events, body, from, to);
        if (!funnel.breakdown && aggregateBy === 'person') expect(expected.get('')![0]!.count).toBeGreaterThan(20);
        expectAnswer(res.body, expected, body);
      });
    }
  }

  for (const name of ['ordered', 'strict, 3 steps', 'unordered, exclusions', 'ordered, a breakdown']) {
    test(`the persons behind each step and drop-off: ${name}, by person and by group`, async () => {
      const funnel = CASES.find(([n]) => n === name)![1];
      for (const aggregateBy of ['person', 'group'] as const) {
        const query = { ...funnel, aggregateBy, ...dates };
        const { body } = await ctx.insight('funnels', query);
        for (const result of body.results as Array<{ breakdownValue?: string; steps: Array<{ count: number }> }>) {
          const point = { query, ...(result.breakdownValue === undefined ? {} : { breakdownValue: result.breakdownValue }) };
          for (const [k, step] of result.steps.entries()) {
            const converted = await actorsBehind(ctx, 'funnels', { ...point, step: k });
            expect({ step: k, count: converted.total }).toEqual({ step: k, count: step.count });
            if (k === 0) continue;
            const dropped = await actorsBehind(ctx, 'funnels', { ...point, step: k, dropped: true });
            expect({ step: k, dropped: dropped.total }).toEqual({ step: k, dropped: result.steps[k - 1]!.count - step.count });
            expect(dropped.ids.filter((id) => converted.ids.includes(id))).toEqual([]);
          }
        }
      }
    });
  }

  test('the conversions are many enough for the comparison to mean something', () => {
    const expected = reference(events, { steps: three }, from, to).get('')!;
    expect(expected.map((s) => s.count).every((c) => c > 10)).toBe(true);
    const strict = reference(events, { steps: [{ event: 'signup' }, { event: 'purchase' }], order: 'strict' }, from, to).get('')!;
    expect(strict[1]!.count).toBeGreaterThan(3);
  });
});

describe('funnels, hand-made cases', () => {
  const events: LogEvent[] = [];
  const at = (time: string) => `2025-06-02T${time}Z`;
  const track = (event: string, userId: string, time: string, properties?: Record<string, unknown>) => events.push({ type: 'track', event, userId, timestamp: at(time), ...(properties ? { properties } : {}) });
  // 40%: ten persons view, four of them buy.
  for (let i = 0; i < 10; i++) track('h1_view', `forty-${i}`, `10:0${i}:00.000`);
  for (let i = 0; i < 4; i++) track('h1_buy', `forty-${i}`, `11:00:00.000`);
  // Strict: one person goes straight from a to b, another does something in between.
  track('h2_a', 'straight', '10:00:00.000');
  track('h2_b', 'straight', '10:01:00.000');
  track('h2_a', 'detour', '10:00:00.000');
  track('h2_other', 'detour', '10:00:30.000');
  track('h2_b', 'detour', '10:01:00.000');
  // The same timestamp: a then b as sent converts; b then a does not.
  track('h3_a', 'tie-in-order', '10:00:00.000');
  track('h3_b', 'tie-in-order', '10:00:00.000');
  track('h3_b', 'tie-reversed', '10:00:00.000');
  track('h3_a', 'tie-reversed', '10:00:00.000');
  // A repeated step: one a is one step, two are two.
  track('h4_a', 'once', '10:00:00.000');
  track('h4_a', 'twice', '10:00:00.000');
  track('h4_a', 'twice', '10:05:00.000');
  // Times from a to b: 10, 20, 30 and 100 seconds (average 40, median 25); a fifth never gets to b.
  [10, 20, 30, 100].forEach((seconds, i) => {
    track('h5_a', `timed-${i}`, '10:00:00.000');
    track('h5_b', `timed-${i}`, `10:0${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, '0')}.000`);
  });
  track('h5_a', 'timed-never', '10:00:00.000');
  // Anonymous first step, then sign-up and a purchase signed in: one person.
  events.push({ type: 'track', event: 'h6_view', anonymousId: 'anon-h6', timestamp: at('10:00:00.000') });
  events.push({ type: 'identify', userId: 'h6-user', anonymousId: 'anon-h6', timestamp: at('10:05:00.000') });
  track('h6_purchase', 'h6-user', '10:10:00.000');
  // A breakdown property whose name and values hold quotes and backticks.
  const weird = 'it\'s a "quoted" `name`';
  track('h7_a', 'weird-1', '10:00:00.000', { [weird]: 'x"`\'1' });
  track('h7_b', 'weird-1', '10:01:00.000');
  track('h7_a', 'weird-2', '10:00:00.000', { [weird]: 'y' });
  // A window of one hour, inclusive: 59 minutes and exactly an hour are in, 61 minutes out.
  track('h8_a', 'window-in', '10:00:00.000');
  track('h8_b', 'window-in', '10:59:00.000');
  track('h8_a', 'window-edge', '10:00:00.000');
  track('h8_b', 'window-edge', '11:00:00.000');
  track('h8_a', 'window-out', '10:00:00.000');
  track('h8_b', 'window-out', '11:01:00.000');
  // An exclusion between a and b: x between cuts; x after does not; a later a after x starts a clean conversion.
  track('h9_a', 'excluded', '10:00:00.000');
  track('h9_x', 'excluded', '10:01:00.000');
  track('h9_b', 'excluded', '10:02:00.000');
  track('h9_a', 'x-after', '10:00:00.000');
  track('h9_b', 'x-after', '10:01:00.000');
  track('h9_x', 'x-after', '10:02:00.000');
  track('h9_a', 'x-then-again', '10:00:00.000');
  track('h9_x', 'x-then-again', '10:01:00.000');
  track('h9_a', 'x-then-again', '10:02:00.000');
  track('h9_b', 'x-then-again', '10:03:00.000');
  // Unordered: b before a converts.
  track('h10_b', 'backwards', '10:00:00.000');
  track('h10_a', 'backwards', '10:03:00.000');
  // A month's window from 31 January ends on 28 February at the same time.
  events.push({ type: 'track', event: 'h12_a', userId: 'month-in', timestamp: '2025-01-31T10:00:00.000Z' });
  events.push({ type: 'track', event: 'h12_b', userId: 'month-in', timestamp: '2025-02-28T10:00:00.000Z' });
  events.push({ type: 'track', event: 'h12_a', userId: 'month-out', timestamp: '2025-01-31T10:00:00.000Z' });
  events.push({ type: 'track', event: 'h12_b', userId: 'month-out', timestamp: '2025-02-28T10:00:00.001Z' });
  // One actor with many events: the walk must stay linear in them.
  for (let i = 0; i < 20_000; i++) events.push({ type: 'track', event: i % 2 ? 'h11_b' : 'h11_a', userId: 'busy', timestamp: new Date(Date.parse(at('00:00:00.000')) + i * 1000).toISOString() });

  let ctx: Awaited<ReturnType<typeof serviceWith>>;
  beforeAll(async () => {
    ctx = await serviceWith(resolvePersons(events));
  });
  afterAll(() => ctx.svc.stop());

  const range = { dateFrom: '2025-06-01', dateTo: '2025-06-30' };
  const funnel = async (body: Record<string, unknown>) => {
    const res = await ctx.insight('funnels', { ...range, ...body });
    expect({ status: res.status, body: res.status === 200 ? 'ok' : res.body }).toEqual({ status: 200, body: 'ok' });
    expect(Value.Check(FunnelsAnswer, res.body)).toBe(true);
    return res.body.results as Array<{ breakdownValue?: string; steps: Array<{ event: string; count: number; conversionRate: number; stepConversionRate: number; medianSeconds: number | null; averageSeconds: number | null }> }>;
  };
  const counts = async (body: Record<string, unknown>) => (await funnel(body)).map((r) => r.steps.map((s) => s.count));

  test('the persons behind a step and its drop-off, a page at a time', async () => {
    const query = { ...range, steps: [{ event: 'h1_view' }, { event: 'h1_buy' }] };
    const bought = await ctx.actors('funnels', { query, step: 1 });
    expect(bought).toEqual({ status: 200, body: { results: [0, 1, 2, 3].map((i) => ({ personId: `forty-${i}` })), total: 4 } });
    const first = await ctx.actors('funnels', { query, step: 1, dropped: true, limit: 4 });
    expect(first.body).toEqual({ results: [4, 5, 6, 7].map((i) => ({ personId: `forty-${i}` })), total: 6, next: 4 });
    const second = await ctx.actors('funnels', { query, step: 1, dropped: true, limit: 4, offset: 4 });
    expect(second.body).toEqual({ results: [8, 9].map((i) => ({ personId: `forty-${i}` })), total: 6 });
    // One person: anonymous first step, signed-in purchase.
    const joined = await ctx.actors('funnels', { query: { ...range, steps: [{ event: 'h6_view' }, { event: 'h6_purchase' }] }, step: 1 });
    expect(joined.body).toEqual({ results: [{ personId: 'h6-user' }], total: 1 });
  });

  const BAD_SELECTORS: Array<[string, Record<string, unknown>, string]> = [
    ['a step past the last', { step: 2 }, '/step'],
    ['dropping at the first step', { step: 0, dropped: true }, '/dropped'],
    ['a breakdown value without a breakdown', { step: 1, breakdownValue: 'pro' }, '/breakdownValue'],
    ['a limit over 1000', { step: 1, limit: 1001 }, '/limit'],
    ['a bad query', { step: 1, query: { ...range, steps: [{ event: 'h1_view' }] } }, '/query/steps'],
  ];
  for (const [name, selector, pointer] of BAD_SELECTORS) {
    test(`the persons behind a step: 400 for ${name}, pointing at ${pointer}`, async () => {
      const res = await ctx.actors('funnels', { query: { ...range, steps: [{ event: 'h1_view' }, { event: 'h1_buy' }] }, ...selector });
      expect(res.status).toBe(400);
      expect(res.body.errors.map((e: { pointer: string }) => e.pointer)).toContain(pointer);
    });
  }

  test('exactly 40% convert', async () => {
    const [result] = await funnel({ steps: [{ event: 'h1_view' }, { event: 'h1_buy' }] });
    expect(result!.steps).toEqual([
      { event: 'h1_view', count: 10, conversionRate: 1, stepConversionRate: 1, medianSeconds: null, averageSeconds: null },
      // The four who buy viewed at 10:00 to 10:03 and bought at 11:00: 3600, 3540, 3480, 3420 s.
      { event: 'h1_buy', count: 4, conversionRate: 0.4, stepConversionRate: 0.4, medianSeconds: 3510, averageSeconds: 3510 },
    ]);
  });

  test('a strict funnel is broken by one event between its steps', async () => {
    const steps = [{ event: 'h2_a' }, { event: 'h2_b' }];
    expect(await counts({ steps, order: 'strict' })).toEqual([[2, 1]]);
    expect(await counts({ steps })).toEqual([[2, 2]]);
  });

  test('two steps at the same timestamp count in the order they were sent', async () => {
    const [result] = await funnel({ steps: [{ event: 'h3_a' }, { event: 'h3_b' }] });
    expect(result!.steps.map((s) => s.count)).toEqual([2, 1]);
    expect([result!.steps[1]!.medianSeconds, result!.steps[1]!.averageSeconds]).toEqual([0, 0]);
  });

  test('a repeated step needs an event each', async () => {
    const [result] = await funnel({ steps: [{ event: 'h4_a' }, { event: 'h4_a' }] });
    expect(result!.steps.map((s) => s.count)).toEqual([2, 1]);
    expect(result!.steps[1]!.medianSeconds).toBe(300);
    expect(await counts({ steps: [{ event: 'h4_a' }, { event: 'h4_a' }], order: 'unordered' })).toEqual([[2, 1]]);
  });

  test('the median and average of conversion times', async () => {
    const [result] = await funnel({ steps: [{ event: 'h5_a' }, { event: 'h5_b' }] });
    expect(result!.steps[1]).toEqual({ event: 'h5_b', count: 4, conversionRate: 0.8, stepConversionRate: 0.8, medianSeconds: 25, averageSeconds: 40 });
  });

  test('an anonymous first step converts to a signed-in purchase as one person', async () => {
    const [result] = await funnel({ steps: [{ event: 'h6_view' }, { event: 'h6_purchase' }] });
    expect(result!.steps.map((s) => [s.count, s.medianSeconds])).toEqual([
      [1, null],
      [1, 600],
    ]);
  });

  test("a shared browser: A's funnel does not change when B later signs in on the same browser", async () => {
    const query = { ...range, steps: [{ event: 'h20_view' }, { event: 'h20_signup' }] };
    const browser = { anonymousId: 'anon-h20-shared' };
    const send = (batch: LogEvent[]) => sendEvents(ctx.svc, batch, ctx.workspace.publicApiKey);
    // A views anonymously, signs in on the browser, signs up 6 minutes after the view.
    await send([
      { type: 'track', event: 'h20_view', ...browser, timestamp: at('10:00:00.000') },
      { type: 'identify', userId: 'h20-a', ...browser, timestamp: at('10:05:00.000') },
      { type: 'track', event: 'h20_signup', userId: 'h20-a', ...browser, timestamp: at('10:06:00.000') },
    ]);
    const before = { funnel: await funnel(query), converted: await ctx.actors('funnels', { query, step: 1 }) };
    expect(before.funnel[0]!.steps.map((s) => [s.count, s.medianSeconds])).toEqual([
      [1, null],
      [1, 360],
    ]);
    expect(before.converted.body).toEqual({ results: [{ personId: 'h20-a' }], total: 1 });
    // Later, B signs in on the same browser, views anonymously there and signs up.
    await send([
      { type: 'identify', userId: 'h20-b', ...browser, timestamp: at('12:00:00.000') },
      { type: 'track', event: 'h20_view', ...browser, timestamp: at('12:01:00.000') },
      { type: 'track', event: 'h20_signup', userId: 'h20-b', ...browser, timestamp: at('12:02:00.000') },
    ]);
    // The browser stays A's (the first to sign in on it): A's funnel is what it was, and B, who viewed nothing signed in, did not convert.
    expect({ funnel: await funnel(query), converted: await ctx.actors('funnels', { query, step: 1 }) }).toEqual(before);
  });

  test('a breakdown property with quotes and backticks is a value like any other', async () => {

    const results = await funnel({ steps: [{ event: 'h7_a' }, { event: 'h7_b' }], breakdown: { property: 'it\'s a "quoted" `name`' } });
    expect(results.map((r) => [r.breakdownValue, r.steps.map((s) => s.count)])).toEqual([
      ['x"`\'1', [1, 1]],
      ['y', [1, 0]],
    ]);
  });

  test('the window is measured from the first step and includes its end', async () => {
    expect(await counts({ steps: [{ event: 'h8_a' }, { event: 'h8_b' }], window: { value: 1, unit: 'hour' } })).toEqual([[3, 2]]);
    expect(await counts({ steps: [{ event: 'h8_a' }, { event: 'h8_b' }], window: { value: 3600, unit: 'second' } })).toEqual([[3, 2]]);
    expect(await counts({ steps: [{ event: 'h8_a' }, { event: 'h8_b' }], window: { value: 59, unit: 'minute' } })).toEqual([[3, 1]]);
  });

  test('a window of a month is a calendar month, ending on the last day of a shorter one', async () => {
    const steps = [{ event: 'h12_a' }, { event: 'h12_b' }];
    expect(await counts({ steps, window: { value: 1, unit: 'month' }, dateFrom: '2025-01-01', dateTo: '2025-01-31' })).toEqual([[2, 1]]);
    expect(await counts({ steps, window: { value: 28, unit: 'day' }, dateFrom: '2025-01-01', dateTo: '2025-01-31' })).toEqual([[2, 1]]);
  });

  test('an exclusion between two steps', async () => {
    const steps = [{ event: 'h9_a' }, { event: 'h9_b' }];
    expect(await counts({ steps })).toEqual([[3, 3]]);
    expect(await counts({ steps, exclusions: [{ event: 'h9_x', fromStep: 0, toStep: 1 }] })).toEqual([[3, 2]]);
  });

  test('an unordered funnel takes its steps in any order', async () => {
    const steps = [{ event: 'h10_a' }, { event: 'h10_b' }];
    expect(await counts({ steps, order: 'unordered' })).toEqual([[1, 1]]);
    expect(await counts({ steps })).toEqual([[1, 0]]);
  });

  test('an actor with 20,000 events', async () => {
    const steps = [{ event: 'h11_a' }, { event: 'h11_b' }, { event: 'h11_a' }, { event: 'h11_b' }];
    for (const order of ['ordered', 'strict', 'unordered']) {
      const [result] = await funnel({ steps, order, exclusions: [{ event: 'h9_x', fromStep: 1, toStep: 3 }] });
      expect({ order, counts: result!.steps.map((s) => s.count), median: result!.steps[3]!.medianSeconds }).toEqual({ order, counts: [1, 1, 1, 1], median: 1 });
    }
  });

  test('no conversions at all: zero counts, zero rates, no times', async () => {
    const [result] = await funnel({ steps: [{ event: 'nobody_did_this' }, { event: 'h1_buy' }] });
    expect(result!.steps[1]).toEqual({ event: 'h1_buy', count: 0, conversionRate: 0, stepConversionRate: 0, medianSeconds: null, averageSeconds: null });
    expect(await funnel({ steps: [{ event: 'nobody_did_this' }, { event: 'h1_buy' }], breakdown: { property: 'plan' } })).toEqual([]);
  });

  const ten = Array.from({ length: 10 }, (_, i) => ({ event: `s${i}` }));
  const two = [{ event: 'h1_view' }, { event: 'h1_buy' }];
  const BAD: Array<[string, Record<string, unknown>, string]> = [
    ['one step', { steps: [{ event: 'a' }] }, '/steps'],
    ['eleven steps', { steps: [...ten, { event: 's10' }] }, '/steps'],
    ['an unknown order', { steps: two, order: 'sideways' }, '/order'],
    ['a window in years', { steps: two, window: { value: 1, unit: 'year' } }, '/window/unit'],
    ['a window of more than ten years', { steps: two, window: { value: 121, unit: 'month' } }, '/window/value'],
    ['an exclusion ending where it starts', { steps: ten, exclusions: [{ event: 'x', fromStep: 3, toStep: 3 }] }, '/exclusions/0/toStep'],
    ['an exclusion ending before it starts', { steps: ten, exclusions: [{ event: 'x', fromStep: 3, toStep: 1 }] }, '/exclusions/0/toStep'],
    ['an exclusion past the last step', { steps: two, exclusions: [{ event: 'x', fromStep: 0, toStep: 2 }] }, '/exclusions/0/toStep'],
    ['an exclusion of a step it spans', { steps: two, exclusions: [{ event: 'h1_buy', fromStep: 0, toStep: 1 }] }, '/exclusions/0/event'],
    ['an exclusion of every event', { steps: two, exclusions: [{ event: '$any', fromStep: 0, toStep: 1 }] }, '/exclusions/0/event'],
    ['a breakdown limit of 0', { steps: two, breakdown: { property: 'plan', limit: 0 } }, '/breakdown/limit'],
    ['an unknown time zone', { steps: two, timezone: 'Mars/Olympus' }, '/timezone'],
    ['dateTo before dateFrom', { steps: two, dateFrom: '2025-06-10', dateTo: '2025-06-01' }, '/dateTo'],
  ];
  for (const [name, body, pointer] of BAD) {
    test(`400 for ${name}, pointing at ${pointer}`, async () => {
      const res = await ctx.insight('funnels', { ...range, ...body });
      expect(res.status).toBe(400);
      expect(res.body.errors.map((e: { pointer: string }) => e.pointer)).toContain(pointer);
    });
  }

  test('the statement a request compiles to (?explain=1)', async () => {
    const body = { steps: [{ event: 'a' }, { event: 'b', filters: [{ property: 'plan', operator: 'eq', value: 'pro' }] }, { event: 'c' }], exclusions: [{ event: 'x', fromStep: 0, toStep: 2 }], breakdown: { property: 'plan' }, dateFrom: '2025-06-01', dateTo: '2025-06-30' };
    const res = await ctx.insight('funnels', body, '?explain=1');
    expect(res.status).toBe(200);
    expect(res.body.statement).toMatchSnapshot();
    const unordered = await ctx.insight('funnels', { ...body, order: 'unordered' }, '?explain=1');
    expect(unordered.body.statement).toMatchSnapshot();
  });
});
