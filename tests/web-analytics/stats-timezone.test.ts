import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { uniqueName } from '../helpers/engine-dir';
import { createWorkspace, sendEvents, startTestService, type CreatedWorkspace, type TestService } from '../helpers/test-service';
import { reference, sessionize, visitLog, type Ev } from './stats-reference';

/**
 * The Stats API in a workspace whose time zone is New York's, against the plain computation
 * (stats-reference.ts) with its buckets in that zone, on generated visits over the change to summer
 * time (2026-03-08, a day of 23 hours): the range's days start at New York's midnight, at 05:00 UTC
 * before the change and 04:00 after, and every time bucket is New York's. Then India's hours,
 * which start at :30 of UTC's.
 */

const NY = 'America/New_York';
const log = visitLog(20260308, Date.UTC(2026, 2, 1), Date.UTC(2026, 2, 20), 150) as Ev[];
// 2026-03-02 00:00 EST to the end of 2026-03-15 EDT.
const RANGE = ['2026-03-02', '2026-03-15'];
const from = Date.parse('2026-03-02T05:00:00Z');
const to = Date.parse('2026-03-16T04:00:00Z') - 1;
const INDIA = 'Asia/Kolkata';

let svc: TestService;
let ws: CreatedWorkspace;
let india: CreatedWorkspace;

beforeAll(async () => {
  svc = await startTestService();
  ws = await createWorkspace(svc, { name: uniqueName('stats-ny'), timezone: NY });
  india = await createWorkspace(svc, { name: uniqueName('stats-india'), timezone: INDIA });
  for (const target of [ws, india]) {
    for (let i = 0; i < log.length; i += 2000) {
      await sendEvents(svc, log.slice(i, i + 2000).map(({ at, index, personId, ...e }) => e), target.publicApiKey);
    }
  }
});

const ask = async (target: CreatedWorkspace, body: Record<string, unknown>) => {
  const res = await svc.request('POST', '/api/v2/query', { key: target.privateApiKey, body: { site_id: target.workspaceId, ...body } });
  const answer = (await res.json()) as any;
  expect(answer.error).toBeUndefined();
  expect(res.status).toBe(200);
  return answer;
};
afterAll(() => svc?.stop());

type Case = [string, Record<string, unknown>];

/** A test per case: the workspace's answer over `range` (the instants `start` to `end` in `timezone`) is the reference's. */
function sameAsReference(cases: readonly Case[], target: () => CreatedWorkspace, range: string[], start: number, end: number, timezone: string): void {
  for (const [name, body] of cases) {
    test(name, async () => {
      const answer = await ask(target(), { date_range: range, ...body });
      expect(answer.results).toEqual(reference(sessionize(log, start, end), body as never, start, timezone).rows);
    });
  }
}

describe("a New York workspace's days, hours and months, against the plain computation", () => {
  sameAsReference([
    ['every visit metric over the range', { metrics: ['visitors', 'visits', 'pageviews', 'views_per_visit', 'bounce_rate', 'visit_duration', 'events'] }],
    ['by day (visits under their last event\'s day)', { metrics: ['visitors', 'visits', 'pageviews', 'bounce_rate', 'visit_duration'], dimensions: ['time:day'] }],
    ['by day and source', { metrics: ['visitors', 'visits'], dimensions: ['time:day', 'visit:source'] }],
    ['by hour (every hour a visit was active)', { metrics: ['visitors', 'visits'], dimensions: ['time:hour'] }],
    ['by hour, a page filter (the events with their visits)', { metrics: ['visitors', 'pageviews'], dimensions: ['time:hour'], filters: [['contains', 'event:page', ['/docs']]] }],
    ['by day and page', { metrics: ['visitors', 'pageviews', 'events'], dimensions: ['time:day', 'event:page'] }],
    ['by month', { metrics: ['visitors', 'visits', 'visit_duration'], dimensions: ['time:month'] }],
  ], () => ws, RANGE, from, to, NY);

  test('the range is echoed with its offsets: winter time at its start, summer time at its end', async () => {
    const answer = await ask(ws, { date_range: RANGE, metrics: ['visits'], dimensions: ['time:day'], include: { time_labels: true } });
    expect(answer.query.date_range).toEqual(['2026-03-02T00:00:00-05:00', '2026-03-15T23:59:59-04:00']);
    expect(answer.meta.time_labels).toHaveLength(14);
  });
});

describe("India's hours (+05:30), against the plain computation", () => {
  // 2026-03-02 00:00 to the end of 2026-03-03 in India.
  const range = ['2026-03-02', '2026-03-03'];
  const start = Date.parse('2026-03-01T18:30:00Z');
  const end = Date.parse('2026-03-03T18:30:00Z') - 1;
  sameAsReference([
    ['visits under every hour of India they were active in', { metrics: ['visitors', 'visits'], dimensions: ['time:hour'] }],
    ['page views under their own hour', { metrics: ['visitors', 'pageviews'], dimensions: ['time:hour'], filters: [['contains', 'event:page', ['/docs']]] }],
  ], () => india, range, start, end, INDIA);

  test("the hour labels are India's 48 hours of the two days", async () => {
    const answer = await ask(india, { date_range: range, metrics: ['visits'], dimensions: ['time:hour'], include: { time_labels: true } });
    expect(answer.meta.time_labels).toHaveLength(48);
    expect(answer.meta.time_labels[0]).toBe('2026-03-02 00:00:00');
    expect(answer.meta.time_labels[47]).toBe('2026-03-03 23:00:00');
  });
});
