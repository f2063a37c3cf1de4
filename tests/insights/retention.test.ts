import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { Value } from '@sinclair/typebox/value';
import { RetentionAnswer, type RetentionQuery } from '../../src/insights/model';
import { compileRetention } from '../../src/insights/retention';
import { SqlParams } from '../../src/sql-params';
import { dstLog } from './dst-ranges';
import { actorsBehind } from './actors-check';
import { isBot, matches, resolvePersons, serviceWith, type LogEvent, type Sent } from './event-log';
import { periodOf } from './reference-periods';

/**
 * Retention against a plain computation of the same definition (docs/api/insights.md#retention)
 * on a seeded random log over Paris's change to summer time (30 March 2025), and hand-made cases
 * with known answers.
 */

const DAY = 86_400_000;
const addDays = (date: string, days: number) => new Date(Date.parse(`${date}T00:00:00Z`) + days * DAY).toISOString().slice(0, 10);

/** The label of the period before the one starting on `label`. */
function previousLabel(label: string, period: 'day' | 'week' | 'month'): string {
  if (period === 'day') return addDays(label, -1);
  if (period === 'week') return addDays(label, -7);
  return `${addDays(label, -1).slice(0, 7)}-01`;
}

type Case = Required<Pick<RetentionQuery, 'startEvent' | 'returnEvent' | 'period' | 'periods' | 'type' | 'aggregateBy' | 'timezone'>> & { dateTo: string; breakdown?: { property: string; limit: number }; includeBots?: boolean };

/** The text of an event property as filters and breakdowns read it (`type` is the column): a string as is, other values as JSON, '' when missing. */
function propertyText(e: Sent, property: string): string {
  const v = property === 'type' ? e.type : e.properties?.[property];
  return v === undefined ? '' : typeof v === 'string' ? v : JSON.stringify(v);
}

/** The only event filter these cases use: `amount` gte a number. */
const holds = (e: Sent, filters: RetentionQuery['startEvent']['filters']) =>
  (filters ?? []).every((f) => 'property' in f && f.operator === 'gte' && typeof e.properties?.[f.property] === 'number' && (e.properties[f.property] as number) >= (f.value as number));

const before = (a: Sent, b: Sent) => a.at < b.at || (a.at === b.at && a.index < b.index);

/** The reference: the definition of docs/api/insights.md#retention computed plainly over `log`. */
function reference(log: readonly Sent[], q: Case) {
  const labels = [periodOf(Date.parse(`${q.dateTo}T12:00:00Z`), q.period, q.timezone).label];
  while (labels.length < q.periods) labels.unshift(previousLabel(labels[0]!, q.period));
  const actorOf = (e: Sent) => (q.aggregateBy === 'group' ? (e.groupId ?? '') : e.personId);
  // Up to the end of dateTo's local day, by actors.
  const events = log.filter((e) => actorOf(e) !== '' && periodOf(e.at, 'day', q.timezone).label <= q.dateTo);
  const indexOf = (e: Sent) => {
    const label = periodOf(e.at, q.period, q.timezone).label;
    return label < labels[0]! ? -1 : labels.indexOf(label);
  };
  // Crawlers' events (context.bot) are neither starts nor returns unless includeBots.
  const isStart = (e: Sent) => matches(e, q.startEvent.event, q.includeBots) && holds(e, q.startEvent.filters);
  const isReturn = (e: Sent) => matches(e, q.returnEvent.event, q.includeBots) && holds(e, q.returnEvent.filters);
  // Per actor: the first start event of each cohort it belongs to, and the periods it returned in.
  const starts = new Map<string, Map<number, Sent>>();
  const returns = new Map<string, Set<number>>();
  const firstEver = new Map<string, Sent>();
  for (const e of events) {
    const actor = actorOf(e);
    if (isStart(e)) {
      const first = firstEver.get(actor);
      if (!first || before(e, first)) firstEver.set(actor, e);
      const i = indexOf(e);
      if (i >= 0) {
        const cohorts = starts.get(actor) ?? new Map<number, Sent>();
        const known = cohorts.get(i);
        if (!known || before(e, known)) cohorts.set(i, e);
        starts.set(actor, cohorts);
      }
    }
    if (isReturn(e) && indexOf(e) >= 0) returns.set(actor, (returns.get(actor) ?? new Set()).add(indexOf(e)));
  }
  const valueOf = (e: Sent) => (q.breakdown ? propertyText(e, q.breakdown.property) : '');
  const members: Array<{ actor: string; cohort: number; value: string }> = [];
  const total = (value: string) => members.filter((m) => m.value === value).length;
  if (q.type === 'first_time') {
    for (const [actor, e] of firstEver) if (indexOf(e) >= 0) members.push({ actor, cohort: indexOf(e), value: valueOf(e) });
  } else {
    for (const [actor, cohorts] of starts) for (const [cohort, e] of cohorts) members.push({ actor, cohort, value: valueOf(e) });
  }
  // The breakdown: the values with the most members over all cohorts, the rest `$other`.
  const byMembers = (a: string, b: string) => total(b) - total(a) || (a < b ? -1 : 1);
  const top = new Set([...new Set(members.map((m) => m.value))].sort(byMembers).slice(0, q.breakdown?.limit ?? 10));
  for (const m of members) if (!top.has(m.value)) m.value = '$other';
  const values = [...new Set(members.map((m) => m.value))];
  values.sort((a, b) => Number(a === '$other') - Number(b === '$other') || byMembers(a, b));
  return (q.breakdown ? values : ['']).flatMap((value) =>
    labels.map((cohort, i) => {
      const of = members.filter((m) => m.value === value && m.cohort === i);
      const row = {
        cohort,
        size: of.length,
        values: labels.slice(i).map((_, k) => (k === 0 ? of.length : of.filter((m) => returns.get(m.actor)?.has(i + k)).length)),
      };
      return q.breakdown ? { breakdownValue: value, ...row } : row;
    }),
  );
}

describe('retention on a seeded random log', () => {
  const log = dstLog(20261127);
  let ctx: Awaited<ReturnType<typeof serviceWith>>;
  beforeAll(async () => {
    ctx = await serviceWith(log);
  });
  afterAll(() => ctx.svc.stop());

  const paris = { timezone: 'Europe/Paris' };
  const CASES: Array<[string, Case]> = [
    ['recurring by person, days over the change, a breakdown', { ...paris, type: 'recurring', aggregateBy: 'person', period: 'day', periods: 14, dateTo: '2025-04-05', startEvent: { event: 'signup' }, returnEvent: { event: '$any' }, breakdown: { property: 'plan', limit: 2 } }],
    ['first_time by person, days, a breakdown', { ...paris, type: 'first_time', aggregateBy: 'person', period: 'day', periods: 14, dateTo: '2025-04-05', startEvent: { event: '$any' }, returnEvent: { event: 'purchase' }, breakdown: { property: 'plan', limit: 2 } }],
    // Ties decide: of two first events with one timestamp, the one sent first gives the breakdown.
    ['first_time by person, weeks, a breakdown by type', { ...paris, type: 'first_time', aggregateBy: 'person', period: 'week', periods: 12, dateTo: '2025-04-20', startEvent: { event: '$any' }, returnEvent: { event: 'purchase' }, breakdown: { property: 'type', limit: 2 } }],
    ['recurring by person, days, a breakdown by type', { ...paris, type: 'recurring', aggregateBy: 'person', period: 'day', periods: 20, dateTo: '2025-04-10', startEvent: { event: '$any' }, returnEvent: { event: 'signup' }, breakdown: { property: 'type', limit: 2 } }],
    ['first_time by person, weeks from Monday', { ...paris, type: 'first_time', aggregateBy: 'person', period: 'week', periods: 8, dateTo: '2025-04-10', startEvent: { event: 'signup' }, returnEvent: { event: '$pageview' } }],
    ['recurring by group, weeks, start filters, a breakdown', { ...paris, type: 'recurring', aggregateBy: 'group', period: 'week', periods: 8, dateTo: '2025-04-10', startEvent: { event: 'purchase', filters: [{ property: 'amount', operator: 'gte', value: 30 }] }, returnEvent: { event: '$any' }, breakdown: { property: 'plan', limit: 3 } }],
    ['first_time by group, weeks, a breakdown of one value', { ...paris, type: 'first_time', aggregateBy: 'group', period: 'week', periods: 12, dateTo: '2025-04-20', startEvent: { event: 'upgrade' }, returnEvent: { event: '$any' }, breakdown: { property: 'plan', limit: 1 } }],
    ['recurring by person, months in UTC', { timezone: 'UTC', type: 'recurring', aggregateBy: 'person', period: 'month', periods: 4, dateTo: '2025-05-10', startEvent: { event: '$pageview' }, returnEvent: { event: '$pageview' } }],
    ['recurring by person, days, crawlers counted (includeBots)', { ...paris, type: 'recurring', aggregateBy: 'person', period: 'day', periods: 14, dateTo: '2025-04-05', startEvent: { event: '$any' }, returnEvent: { event: '$any' }, includeBots: true }],
    ['first_time by group, weeks, crawlers counted (includeBots)', { ...paris, type: 'first_time', aggregateBy: 'group', period: 'week', periods: 8, dateTo: '2025-04-10', startEvent: { event: '$any' }, returnEvent: { event: 'purchase' }, includeBots: true }],
  ];

  test("the log holds crawlers' events, which the cases without includeBots leave out", async () => {
    expect(log.filter(isBot).length).toBeGreaterThan(100);
    const counted = CASES.filter(([, q]) => q.includeBots).map(([, q]) => q);
    for (const q of counted) {
      const { body } = await ctx.insight('retention', { ...q, includeBots: undefined });
      const without = reference(log, { ...q, includeBots: false });
      // Not vacuous: the crawlers change the answer (members, returns, or a group's first time
      // moved earlier by a crawler's event), and without includeBots they count for nothing.
      expect(reference(log, q)).not.toEqual(without);
      expect(body.results).toEqual(without);
    }
  });

  for (const [name, q] of CASES) {
    test(name, async () => {
      const { status, body } = await ctx.insight('retention', q);
      expect(status).toBe(200);
      expect(Value.Check(RetentionAnswer, body)).toBe(true);
      const expected = reference(log, q);
      // Not vacuous: cohorts with members, and some who came back.
      expect(expected.some((r) => r.size > 0 && r.values.slice(1).some((v) => v > 0))).toBe(true);
      expect(body.results).toEqual(expected);
    });
  }

  for (const name of ['recurring by person, days over the change, a breakdown', 'first_time by group, weeks, a breakdown of one value', 'first_time by person, weeks from Monday']) {
    test(`the persons behind each cell: ${name}`, async () => {
      const query = CASES.find(([n]) => n === name)![1];
      const { body } = await ctx.insight('retention', query);
      let cells = 0;
      for (const row of body.results as Array<{ breakdownValue?: string; cohort: string; size: number; values: number[] }>) {
        if (row.size === 0) continue;
        const point = { query, cohort: row.cohort, ...(row.breakdownValue === undefined ? {} : { breakdownValue: row.breakdownValue }) };
        for (const k of [0, 1, 3].filter((k) => k < row.values.length)) {
          const behind = await actorsBehind(ctx, 'retention', { ...point, period: k });
          expect({ cohort: row.cohort, period: k, count: behind.total }).toEqual({ cohort: row.cohort, period: k, count: row.values[k]! });
          cells++;
        }
      }
      expect(cells).toBeGreaterThan(3);
    });
  }

  test('the persons behind a cell: 400 for a cohort or period the answer has not', async () => {
    const query = CASES[4]![1];
    const unknown = await ctx.actors('retention', { query, cohort: '2025-04-11', period: 0 });
    expect({ status: unknown.status, pointers: unknown.body.errors?.map((e: { pointer: string }) => e.pointer) }).toEqual({ status: 400, pointers: ['/cohort'] });
    const { body } = await ctx.insight('retention', query);
    const late = await ctx.actors('retention', { query, cohort: body.results.at(-1).cohort, period: 1 });
    expect({ status: late.status, pointers: late.body.errors?.map((e: { pointer: string }) => e.pointer) }).toEqual({ status: 400, pointers: ['/period'] });
  });
});

describe('retention, hand-made cases', () => {
  const events: LogEvent[] = [];
  const track = (event: string, ids: { userId?: string; anonymousId?: string }, timestamp: string, properties: Record<string, unknown> = {}) => events.push({ type: 'track', event, ...ids, properties, timestamp });
  // A day-7 retention of 25%: 8 persons start on 2 June 2025, 2 of them return on day 7. One
  // started anonymously and signed in later; one returned on day 6 (and on day 8, past dateTo).
  track('trial_started', { anonymousId: 'anon-t0' }, '2025-06-02T08:00:00Z');
  for (let i = 1; i < 8; i++) track('trial_started', { userId: `t${i}` }, `2025-06-02T1${i}:00:00Z`);
  events.push({ type: 'identify', userId: 't0', anonymousId: 'anon-t0', timestamp: '2025-06-03T09:00:00Z' });
  track('trial_started', { userId: 't0' }, '2025-06-03T10:00:00Z');
  track('trial_used', { userId: 't0' }, '2025-06-09T10:00:00Z');
  track('trial_used', { userId: 't1' }, '2025-06-09T23:59:59Z');
  track('trial_used', { userId: 't2' }, '2025-06-08T12:00:00Z');
  track('trial_used', { userId: 't2' }, '2025-06-10T12:00:00Z');
  // First time: f-early first opened before the range, f-new inside it; f-both on two days.
  track('app_opened', { userId: 'f-early' }, '2025-06-28T09:00:00Z');
  track('app_opened', { userId: 'f-early' }, '2025-07-02T09:00:00Z');
  track('app_opened', { userId: 'f-new' }, '2025-07-02T10:00:00Z');
  track('app_opened', { userId: 'f-both' }, '2025-07-01T10:00:00Z');
  track('app_opened', { userId: 'f-both' }, '2025-07-02T11:00:00Z');
  track('feature_used', { userId: 'f-early' }, '2025-07-03T09:00:00Z');
  track('feature_used', { userId: 'f-new' }, '2025-07-03T09:00:00Z');
  track('feature_used', { userId: 'f-both' }, '2025-07-02T12:00:00Z');
  // Paris on 30 March 2025, the day of 23 hours (from 23:00 UTC on the 29th to 22:00 UTC).
  track('dst_start', { userId: 'd1' }, '2025-03-29T12:00:00Z');
  track('dst_start', { userId: 'd2' }, '2025-03-29T12:00:00Z');
  track('dst_return', { userId: 'd1' }, '2025-03-29T23:30:00Z'); // 00:30 on the 30th in Paris
  track('dst_return', { userId: 'd1' }, '2025-03-30T21:59:59Z'); // 23:59:59 on the 30th
  track('dst_return', { userId: 'd2' }, '2025-03-30T22:30:00Z'); // 00:30 on the 31st
  // Weeks start on Monday: a start on Sunday 8 June 2025, a return the next day.
  track('week_start', { userId: 'w1' }, '2025-06-08T12:00:00Z');
  track('week_return', { userId: 'w1' }, '2025-06-09T12:00:00Z');

  let ctx: Awaited<ReturnType<typeof serviceWith>>;
  beforeAll(async () => {
    ctx = await serviceWith(resolvePersons(events));
  });
  afterAll(() => ctx.svc.stop());

  test('a day-7 retention of exactly 25%, an anonymous start counted once for the person it became', async () => {
    const { status, body } = await ctx.insight('retention', { startEvent: { event: 'trial_started' }, returnEvent: { event: 'trial_used' }, periods: 8, dateTo: '2025-06-09' });
    expect(status).toBe(200);
    const [day0, day1, ...rest] = body.results;
    expect(day0).toEqual({ cohort: '2025-06-02', size: 8, values: [8, 0, 0, 0, 0, 0, 1, 2] });
    expect(day0.values[7] / day0.size).toBe(0.25);
    // t0 started again on day 1: in that cohort too, and back 6 days later.
    expect(day1).toEqual({ cohort: '2025-06-03', size: 1, values: [1, 0, 0, 0, 0, 0, 1] });
    expect(rest.map((r: any) => [r.cohort, r.size, r.values.length])).toEqual([2, 3, 4, 5, 6, 7].map((d, i) => [`2025-06-0${2 + d}`, 0, 6 - i]));
  });

  test('first_time leaves out actors whose first start was before the cohort', async () => {
    const query = { startEvent: { event: 'app_opened' }, returnEvent: { event: 'feature_used' }, periods: 4, dateTo: '2025-07-04' };
    const firstTime = await ctx.insight('retention', { ...query, type: 'first_time' });
    expect(firstTime.body.results.slice(0, 2)).toEqual([
      { cohort: '2025-07-01', size: 1, values: [1, 1, 0, 0] },
      { cohort: '2025-07-02', size: 1, values: [1, 1, 0] },
    ]);
    const recurring = await ctx.insight('retention', query);
    expect(recurring.body.results.slice(0, 2)).toEqual([
      { cohort: '2025-07-01', size: 1, values: [1, 1, 0, 0] },
      { cohort: '2025-07-02', size: 3, values: [3, 2, 0] },
    ]);
  });

  test('returns on the daylight-saving day fall on local days in Europe/Paris', async () => {
    const query = { startEvent: { event: 'dst_start' }, returnEvent: { event: 'dst_return' }, periods: 3, dateTo: '2025-03-31' };
    const paris = await ctx.insight('retention', { ...query, timezone: 'Europe/Paris' });
    expect(paris.body.results[0]).toEqual({ cohort: '2025-03-29', size: 2, values: [2, 1, 1] });
    const utc = await ctx.insight('retention', query);
    expect(utc.body.results[0]).toEqual({ cohort: '2025-03-29', size: 2, values: [2, 2, 0] });
  });

  test('weeks start on Monday', async () => {
    const { body } = await ctx.insight('retention', { startEvent: { event: 'week_start' }, returnEvent: { event: 'week_return' }, period: 'week', periods: 2, dateTo: '2025-06-10' });
    expect(body.results).toEqual([
      { cohort: '2025-06-02', size: 1, values: [1, 1] },
      { cohort: '2025-06-09', size: 0, values: [0] },
    ]);
  });

  test('bad requests are 400 with pointers', async () => {
    const base = { startEvent: { event: 'a' }, returnEvent: { event: 'b' } };
    const cases: Array<[unknown, string]> = [
      [{ ...base, periods: 0 }, '/periods'],
      [{ ...base, periods: 37 }, '/periods'],
      [{ ...base, period: 'year' }, '/period'],
      [{ ...base, type: 'sometimes' }, '/type'],
      [{ ...base, timezone: 'Mars/Olympus' }, '/timezone'],
      [{ ...base, dateTo: 'tomorrow' }, '/dateTo'],
      [{ ...base, returnEvent: { event: 'b', filters: [{ property: 'x', operator: 'in', value: 'y' }] } }, '/returnEvent/filters/0/value'],
      [{ startEvent: { event: 'a' } }, '/returnEvent'],
    ];
    for (const [body, pointer] of cases) {
      const answer = await ctx.insight('retention', body);
      expect({ body, status: answer.status }).toEqual({ body, status: 400 });
      expect(answer.body.errors.map((e: any) => e.pointer)).toContain(pointer);
    }
  });

  test('the statement: every value bound', () => {
    const query: RetentionQuery = {
      startEvent: { event: "it's `odd`", filters: [{ property: 'amount', operator: 'gte', value: 10 }] },
      returnEvent: { event: '$any' },
      period: 'week',
      periods: 4,
      type: 'first_time',
      breakdown: { property: 'plan', source: 'event', limit: 3 },
      dateTo: '2025-06-10',
      timezone: 'Europe/Paris',
    };
    const compiled = compileRetention(query, { params: new SqlParams(), cohort: () => '', now: 0, pointer: '' });
    expect(compiled.sql).not.toContain("it's");
    expect(compiled.sql).toMatchSnapshot();
  });
});
