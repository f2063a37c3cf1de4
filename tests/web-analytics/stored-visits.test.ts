import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { VISIT_DIMENSIONS } from '../../src/web-analytics/stats/model';
import { afterRun } from '../helpers/after-run';
import { eventually } from '../helpers/eventually';
import { startServiceProcess, type ServiceProcess } from '../helpers/service-process';
import { createWorkspace, sendEvents, type CreatedWorkspace, type TestService } from '../helpers/test-service';
import { regulate, settledRegulation } from '../regulations/helpers';
import { DAY, HOUR, makesVisits, MINUTE, sessionize, type Ev, type Filter } from './stats-reference';
import { storedVisitsLog, type StoredVisitsLog } from './stored-visits-log';
import { answer, EVENT_METRICS, visitMetrics, type Range, type Row } from './stored-visits-reference';

/**
 * Stats API v2 answers from stored visits (issue 38) against a plain sessionization of the same
 * events (stored-visits-reference.ts), for every metric, aggregate and by every visit dimension
 * and `time:day`, over ranges that cut visits. Seeded logs (stored-visits-log.ts) are sent through
 * POST /events late and out of order; midway the service is killed (SIGKILL) with events only in
 * its ingest log, which the next start over the same data loads, and later a person is erased. The control log holds only what visits per person and per device count alike,
 * over ranges that cut no visit: it tells a wrong reference from a changed definition.
 */

const SITE = 'visits.example';
const TODAY = Math.floor(Date.now() / DAY) * DAY;
const FROM = TODAY - 9 * DAY;
const DAYS = 6;
const PERSONS = 40;

const date = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const instant = (ms: number) => `${new Date(ms).toISOString().slice(0, 19)}Z`;

interface NamedRange extends Range {
  name: string;
  /** The Stats API's `date_range`. */
  dateRange: [string, string];
}

/** Whole UTC days, first to last. */
const days = (name: string, first: number, last: number): NamedRange => ({ name, from: first, to: last + DAY - 1, dateRange: [date(first), date(last)] });
/** Exact instants (whole seconds), both included: the last to the end of its second. */
const instants = (name: string, from: number, to: number): NamedRange => ({ name, from, to: to + 999, dateRange: [instant(from), instant(to)] });

const ALL = days('every day', FROM, TODAY - DAY);
/** Visits across midnight are cut at both ends. */
const TWO_DAYS = days('two days', FROM + 2 * DAY, FROM + 3 * DAY);
const CUTTING = instants('10:00 on day 1 to 14:30 on day 4', FROM + DAY + 10 * HOUR, FROM + 4 * DAY + 14 * HOUR + 30 * MINUTE);
const MORNING = instants('09:00 to 12:00 on day 3', FROM + 3 * DAY + 9 * HOUR, FROM + 3 * DAY + 12 * HOUR);

interface Case {
  name: string;
  log: StoredVisitsLog;
  ranges: NamedRange[];
  workspace?: CreatedWorkspace;
  /** The visits of what is stored at the end: every event sent, but the erased person's. */
  /** Its events still stored (the erased person's gone). */
  events?: Ev[];
}

const CASES: Case[] = [
  ...[38_001, 38_002, 38_003].map((seed) => ({ name: `seed ${seed}`, log: storedVisitsLog({ seed, from: FROM, days: DAYS, persons: PERSONS }), ranges: [ALL, TWO_DAYS, CUTTING, MORNING] })),
  { name: 'control (seed 38000)', log: storedVisitsLog({ seed: 38_000, from: FROM, days: DAYS, persons: PERSONS, sameDefinitions: true }), ranges: [ALL, TWO_DAYS, days('day 4', FROM + 4 * DAY, FROM + 4 * DAY)] },
];

const ADMIN = { public: 'pk_stored_visits', private: 'sk_stored_visits' };
const dataDir = mkdtempSync(join(tmpdir(), 'stored-visits-'));
afterRun(() => rmSync(dataDir, { recursive: true, force: true }));
const env = { DATA_DIR: dataDir, PUBLIC_API_KEYS: ADMIN.public, PRIVATE_API_KEYS: ADMIN.private };

let svc: ServiceProcess;
/** The service as the test helpers call it (keys: the admin's). */
const client: Pick<TestService, 'request' | 'privateKey' | 'publicKey'> = {
  privateKey: ADMIN.private,
  publicKey: ADMIN.public,
  request: (method, path, options = {}) =>
    fetch(svc.url + path, {
      method,
      headers: { ...options.headers, ...(options.key ? { authorization: `Bearer ${options.key}` } : {}), ...(options.body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
    }),
};

/** Sends requests [first, end) of every case's log, each case's in order, the cases side by side. */
async function send(first: (log: StoredVisitsLog) => number, end: (log: StoredVisitsLog) => number) {
  await Promise.all(
    CASES.map(async ({ log, workspace }) => {
      for (let i = first(log); i < end(log); i++) await sendEvents(client, log.requests[i]!.map(({ at, index, personId, ...e }) => e), workspace!.publicApiKey);
    }),
  );
}

async function stop() {
  svc.proc.kill('SIGKILL');
  await svc.proc.exited;
}

/** The `ingest log replayed` line of the service's start: what it loaded from the log. */
let replayed: { records: number; eventsToLoad: number } | undefined;

beforeAll(async () => {
  // The loader holds events back for minutes, but loads at once what a read needs (read-your-writes).
  svc = await startServiceProcess({ ...env, INGEST_LOAD_MAX_AGE_MS: '600000', INGEST_FLUSH_ROWS: '1000000' });
  for (const c of CASES) c.workspace = await createWorkspace(client, { name: `Stored visits ${c.name}` });
  const loadedBeforeRestart = (log: StoredVisitsLog) => Math.floor(log.restartAfter / 2);
  await send(() => 0, loadedBeforeRestart);
  for (const c of CASES) await ask(c, ALL, visitMetrics([]), []);
  await send(loadedBeforeRestart, (log) => log.restartAfter);
  // Killed with the later half only in the ingest log: the next start loads it, late events among
  // them joining visits loaded before.
  await stop();
  svc = await startServiceProcess(env);
  replayed = svc.lines.map((line) => JSON.parse(line)).find((entry) => entry.msg === 'ingest log replayed');
  await send((log) => log.restartAfter, (log) => log.eraseAfter);
  for (const { log, workspace } of CASES) {
    const regulation = await settledRegulation(client, workspace!.privateApiKey, await regulate(client, workspace!.privateApiKey, 'DELETE', 'userId', [log.erased]));
    expect(regulation.status).toBe('finished');
  }
  await send((log) => log.eraseAfter, (log) => log.requests.length);
  for (const c of CASES) c.events = c.log.events.filter((e) => e.personId !== c.log.erased);
}, 120_000);
afterAll(async () => {
  if (svc) await stop();
});

async function ask(c: Case, range: NamedRange, metrics: readonly string[], dimensions: readonly string[], filters: Filter[] = []): Promise<Row[]> {
  const res = await client.request('POST', '/api/v2/query', { key: c.workspace!.privateApiKey, body: { site_id: SITE, metrics, date_range: range.dateRange, dimensions, filters } });
  const body = (await res.json()) as { results?: Row[]; error?: string };
  if (res.status !== 200) throw new Error(`${res.status}: ${JSON.stringify(body)}`);
  return body.results!;
}

/**
 * The breakdowns asked: every visit dimension, in three questions of several dimensions each
 * (a row per combination of values: finer groups than one question per dimension, in fewer
 * questions), and `time:day`.
 */
const BREAKDOWNS: ReadonlyArray<readonly string[]> = [
  [],
  ['visit:source', 'visit:referrer', 'visit:utm_medium', 'visit:utm_source', 'visit:utm_campaign', 'visit:utm_content', 'visit:utm_term'],
  ['visit:country', 'visit:country_name', 'visit:region', 'visit:city_name', 'visit:browser', 'visit:os', 'visit:device'],
  ['visit:entry_page', 'visit:exit_page'],
  ['time:day'],
];
test('the breakdowns name every visit dimension', () => {
  expect(BREAKDOWNS.flat().filter((d) => d.startsWith('visit:')).sort()).toEqual([...VISIT_DIMENSIONS].sort());
});

/**
 * Every question of `range`: the visit metrics (read from visits) and the event metrics (the
 * range's events by their visits' values), aggregate and by each breakdown; the ones answered
 * otherwise than the reference, with both answers.
 */
async function differences(c: Case, range: NamedRange) {
  const questions = [
    ...BREAKDOWNS.flatMap((dimensions) => [
      { metrics: visitMetrics(dimensions), dimensions, filters: [] as Filter[] },
      { metrics: EVENT_METRICS as readonly string[], dimensions, filters: [] as Filter[] },
    ]),
    ...FILTERED,
  ].map((q) => ({ ...q, expected: answer(c.events!, range, q.metrics, q.dimensions, q.filters) }));
  const answers = await Promise.all(questions.map(({ metrics, dimensions, filters }) => ask(c, range, metrics, dimensions, filters)));
  return questions
    .map(({ metrics, dimensions, filters, expected }, i) => ({ question: `${metrics.join(',')} by ${dimensions.join(',') || 'nothing'}${filters.length > 0 ? ` where ${JSON.stringify(filters)}` : ''}`, expected, answered: answers[i]! }))
    .filter(({ expected, answered }) => !Bun.deepEquals(answered, expected));
}

/**
 * Questions of pages and goals (stored-visits.ts: visits selected by a page of the range, the top
 * pages, the goals): the overview's filtered screen, top pages and goal conversions; a page filter
 * that holds for an event without a page, which a server's call within a signed-in user's visit
 * (no page, no browser) must not satisfy; a negated one beside visit filters.
 */
const FILTERED: ReadonlyArray<{ metrics: readonly string[]; dimensions: readonly string[]; filters: Filter[] }> = [
  { metrics: ['visitors', 'visits', 'bounce_rate', 'visit_duration'], dimensions: [], filters: [['is', 'visit:country', ['DE', 'FR']], ['contains', 'event:page', ['/docs']]] },
  // Without bounce_rate: a visit without page views enters on no page for the reference, on '' (which `is_not` selects) for the service.
  { metrics: ['visitors', 'visits', 'visit_duration'], dimensions: ['visit:device'], filters: [['is_not', 'event:page', ['/pricing']], ['is', 'visit:browser', ['Chrome', 'Firefox']]] },
  { metrics: ['visitors', 'visits', 'bounce_rate', 'visit_duration'], dimensions: [], filters: [['matches', 'event:page', ['^$']]] },
  { metrics: ['visitors', 'visits'], dimensions: ['visit:country'], filters: [['matches', 'event:page', ['^$', '^/blog']]] },
  { metrics: ['visitors', 'pageviews', 'events', 'bounce_rate'], dimensions: ['event:page'], filters: [] },
  { metrics: ['visitors', 'pageviews', 'bounce_rate'], dimensions: ['event:page'], filters: [['contains', 'event:page', ['/blog', '/docs']]] },
  // The overview's goal conversions: the rate's divisor is the visitors of the range's visits.
  { metrics: ['visitors', 'events', 'conversion_rate'], dimensions: ['event:goal'], filters: [] },
];

describe('stored visits equal a plain sessionization per device', () => {
  for (const c of CASES) {
    test(`${c.name}: the log holds what the test is about`, () => {
      const visits = sessionize(c.events!, -Infinity, Infinity);
      const byPerson = Map.groupBy(visits, (v) => v.personId);
      // Some visits go across midnight (not in the control), some persons have visits on two devices at once (not in the control).
      const acrossMidnight = visits.filter((v) => new Date(v.start).getUTCDate() !== new Date(v.end).getUTCDate()).length;
      const overlapping = [...byPerson.values()].filter((vs) => vs.some((a) => vs.some((b) => a !== b && a.start < b.end + 30 * MINUTE && b.start < a.end + 30 * MINUTE))).length;
      const late = c.log.events.filter((e, i, all) => i > 0 && e.at < all[i - 1]!.at - HOUR).length;
      const identifiedLater = visits.filter((v) => !v.events[0]!.userId && v.personId.startsWith('user-')).length;
      console.log(`${c.name}: ${c.log.events.length} events in ${c.log.requests.length} requests (${late} sent over an hour after a newer one), ${visits.length} visits of ${byPerson.size} visitors (${identifiedLater} visits begun anonymous, of persons identified later), ${acrossMidnight} across midnight, ${overlapping} visitors with visits of two devices within 30 minutes, ${c.log.erased} erased; the restart loaded ${replayed?.eventsToLoad} events (all cases) from the ingest log`);
      expect(late * identifiedLater).toBeGreaterThan(0);
      expect(replayed?.eventsToLoad).toBeGreaterThan(0);
      expect(c.log.events.some((e) => e.personId === c.log.erased && e.type === 'page')).toBe(true);
      if (c.name.startsWith('control')) expect([acrossMidnight, overlapping]).toEqual([0, 0]);
      else expect(acrossMidnight * overlapping).toBeGreaterThan(0);
      // Crawlers' page views and backend calls (no page, no browser) are in the log, and make no visit.
      const crawled = c.log.events.filter((e) => e.context?.bot === true && e.type === 'page').length;
      const backend = c.log.events.filter((e) => e.type === 'track' && e.event !== 'engagement' && !makesVisits(e) && !e.context?.bot).length;
      if (!c.name.startsWith('control')) expect(crawled * backend).toBeGreaterThan(0);
      // Some backend calls fall within a visit of their visit key (a signed-in user's): a filter
      // holding for events without a page must not select that visit by them.
      const keyOf = (e: Ev) => e.anonymousId || e.userId;
      const withinVisits = c.log.events.filter((e) => e.type === 'track' && !makesVisits(e) && !e.context?.bot && e.event !== 'engagement' && visits.some((v) => keyOf(v.events[0]!) === keyOf(e) && v.start <= e.at && e.at <= v.end)).length;
      if (!c.name.startsWith('control')) expect(withinVisits).toBeGreaterThan(0);
    });
    for (const range of c.ranges) {
      test(`${c.name}, ${range.name}: every metric, aggregate and by every visit dimension and day`, async () => {
        const found = await differences(c, range);
        for (const d of found.slice(0, 2)) console.log(`${c.name}, ${range.name}, ${d.question}:\n  expected ${JSON.stringify(d.expected)}\n  answered ${JSON.stringify(d.answered)}`);
        expect(found.map((d) => d.question)).toEqual([]);
      });
    }
  }
});
