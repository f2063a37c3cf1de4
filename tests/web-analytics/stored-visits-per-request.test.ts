import { afterAll, beforeAll, expect, test } from 'bun:test';
import { createWorkspace, sendEvents, startTestService, type CreatedWorkspace, type TestService } from '../helpers/test-service';
import { uniqueName } from '../helpers/engine-dir';
import { rowsOf } from '../helpers/queries';
import { DAY, sessionize } from './stats-reference';
import { storedVisitsLog } from './stored-visits-log';
import { answer, EVENT_METRICS, visitMetrics, type Row } from './stored-visits-reference';

/**
 * Stored visits built one request at a time: each build replaces the stored visits its arrivals
 * touch by cancelling rows and new visits (src/web-analytics/visits/visit-build-sql.ts), merged
 * with the arrivals when they only continue a visit, else cut again from its events. Each
 * request of seeded logs (stored-visits-log.ts: late and out-of-order events, identify after
 * browsing, two devices, crawlers, backend calls) is followed by a Stats API question, so every
 * request's events are built on their own, many of them continuing visits built before; the
 * stored visits then equal a plain sessionization per device, and the answers for every visit
 * metric and dimension equal it too. Until the cancelling rows came first in their insert, the
 * engine now and then kept the old visit (two runs in three failed here).
 */

const SITE = 'visits.example';
const TODAY = Math.floor(Date.now() / DAY) * DAY;
const FROM = TODAY - 5 * DAY;
const ALL = { from: FROM, to: TODAY - 1, dateRange: [new Date(FROM).toISOString().slice(0, 10), new Date(TODAY - DAY).toISOString().slice(0, 10)] };
const BREAKDOWNS: ReadonlyArray<readonly string[]> = [
  [],
  ['visit:source', 'visit:referrer', 'visit:utm_source'],
  ['visit:country', 'visit:browser', 'visit:device'],
  ['visit:entry_page', 'visit:exit_page'],
  ['time:day'],
];
const LOGS = [39_101, 39_102, 39_103, 39_104, 39_105, 39_106].map((seed) => storedVisitsLog({ seed, from: FROM, days: 4, persons: 30 }));

let svc: TestService;
const workspaces: CreatedWorkspace[] = [];

async function ask(ws: CreatedWorkspace, metrics: readonly string[], dimensions: readonly string[]): Promise<Row[]> {
  const res = await svc.request('POST', '/api/v2/query', { key: ws.privateApiKey, body: { site_id: SITE, metrics, date_range: ALL.dateRange, dimensions } });
  const body = (await res.json()) as { results?: Row[]; error?: string };
  if (res.status !== 200) throw new Error(`${res.status}: ${JSON.stringify(body)}`);
  return body.results!;
}

beforeAll(async () => {
  svc = await startTestService();
  for (const log of LOGS) {
    const ws = await createWorkspace(svc, { name: uniqueName('visit-extension') });
    workspaces.push(ws);
    for (const request of log.requests) {
      await sendEvents(svc, request.map(({ at, index, personId, ...e }) => e), ws.publicApiKey);
      // A read waits for the visits of the events before it: one build per request.
      const res = await svc.request('POST', '/api/v2/query', { key: ws.privateApiKey, body: { site_id: SITE, metrics: ['visits'], date_range: 'all' } });
      expect(res.status).toBe(200);
    }
  }
}, 120_000);
afterAll(() => svc?.stop());

test('the logs continue visits across requests', () => {
  for (const log of LOGS) {
    const visits = sessionize(log.events, -Infinity, Infinity);
    const requestOf = new Map(log.requests.flatMap((request, i) => request.map((e) => [e, i] as const)));
    const continued = visits.filter((v) => new Set(v.events.map((e) => requestOf.get(e as never))).size > 1).length;
    expect(continued).toBeGreaterThan(visits.length / 10);
  }
});

test('visits built one request at a time equal a plain sessionization, for every metric and visit dimension', async () => {
  for (const [i, log] of LOGS.entries()) {
    for (const dimensions of BREAKDOWNS) {
      for (const metrics of [visitMetrics(dimensions), [...EVENT_METRICS]]) {
        expect({ dimensions, metrics, rows: await ask(workspaces[i]!, metrics, dimensions) }).toEqual({ dimensions, metrics, rows: answer(log.events, ALL, metrics, dimensions) });
      }
    }
  }
});

test('the stored visits are each device\'s visits, every one with all its events', async () => {
  for (const [i, log] of LOGS.entries()) {
    const stored = await rowsOf(
      svc,
      `SELECT visitKey AS key, toUnixTimestamp64Milli(start) AS start, toUnixTimestamp64Milli(end) AS end, events, pageviews
       FROM visits GROUP BY visitKey, start, end, events, pageviews HAVING sum(sign) > 0 ORDER BY key, start`,
      workspaces[i]!.privateApiKey,
    );
    const expected = sessionize(log.events, -Infinity, Infinity)
      .map((v) => ({ key: v.all[0]!.anonymousId || v.all[0]!.userId, start: v.start, end: v.end, events: v.all.length, pageviews: v.all.filter((e) => e.type === 'page').length }))
      .sort((a, b) => (a.key! < b.key! ? -1 : a.key! > b.key! ? 1 : a.start - b.start));
    expect(stored.map((r) => ({ key: r.key, start: Number(r.start), end: Number(r.end), events: Number(r.events), pageviews: Number(r.pageviews) }))).toEqual(expected);
  }
});
