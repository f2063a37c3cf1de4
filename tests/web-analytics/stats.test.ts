import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { uniqueName } from '../helpers/engine-dir';
import { createWorkspace, sendEvents, startTestService, type CreatedWorkspace, type TestService } from '../helpers/test-service';
import { compileStatsQuery } from '../../src/web-analytics/stats/compile';
import { DAY, reference, sessionize, visitLog, type Ev, type ReferenceQuery, type Visit } from './stats-reference';

/**
 * Plausible's Stats API v2 (`POST /api/v2/query`) against the real service and engine, on
 * generated visits, compared with a plain sessionization of the same log in TypeScript
 * (stats-reference.ts). The request bodies are the examples of Plausible's documentation
 * (https://plausible.io/docs/stats-api, "Examples"; their JSON is in the plausible/docs repository,
 * src/js/apiv2-examples/), with `site_id` set to our site; then our own cases.
 */

const SITE = 'stats.example.com';
const now = Date.now();
const today = Math.floor(now / DAY) * DAY;
// Six weeks of visits up to a minute ago, so that the relative ranges (day, 7d, 28d, 30d) hold some.
const logFrom = today - 42 * DAY;
const logTo = now - 60_000;
const log = visitLog(20261127, logFrom, logTo, 260) as Ev[];

/** The one visit of the workspace without siteDomains, asked for by its UTC day (an hour ago is yesterday from 00:00 to 01:00). */
const openVisitAt = now - 3_600_000;
const isoDay = (t: number) => new Date(t).toISOString().slice(0, 10);

let svc: TestService;
let workspace: CreatedWorkspace;
let open: CreatedWorkspace;

async function seed(target: CreatedWorkspace) {
  for (let i = 0; i < log.length; i += 2000) {
    await sendEvents(svc, log.slice(i, i + 2000).map(({ at, index, personId, ...e }) => e), target.publicApiKey);
  }
}

beforeAll(async () => {
  svc = await startTestService();
  workspace = await createWorkspace(svc, { name: uniqueName('stats'), siteDomains: [SITE, 'other.example.com'] });
  open = await createWorkspace(svc, { name: uniqueName('stats-open') });
  await seed(workspace);
  await sendEvents(svc, [{ type: 'page', anonymousId: 'only-one', context: { page: { path: '/x' } }, timestamp: new Date(openVisitAt).toISOString() }], open.publicApiKey);
});
afterAll(() => svc?.stop());

async function query(body: unknown, key: string | null = workspace.privateApiKey, headers: Record<string, string> = {}) {
  const res = await svc.request('POST', '/api/v2/query', { key: key ?? undefined, body, headers });
  return { status: res.status, body: (await res.json()) as any, contentType: res.headers.get('content-type') };
}

/** The visits of [from, to] (ms, inclusive). */
const visitsIn = (from: number, to: number): Visit[] => sessionize(log, from, to);

/** Asks the service and the reference the same question over [from, to]. */
async function expectSame(body: Record<string, unknown>, from: number, to: number) {
  const { status, body: answer } = await query({ site_id: SITE, ...body });
  expect(answer.error).toBeUndefined();
  expect(status).toBe(200);
  const expected = reference(visitsIn(from, to), body as unknown as ReferenceQuery, from);
  expect(answer.results).toEqual(expected.rows);
  return { answer, expected };
}

const range7d = [today - 7 * DAY, today - 1] as const;

describe('the examples of Plausible\'s Stats API documentation', () => {
  // "Simple aggregate query" (#example-aggregate)
  test('simple aggregate query', async () => {
    const { answer } = await expectSame({ metrics: ['visitors', 'events'], date_range: '7d' }, ...range7d);
    expect(answer.results[0].metrics[0]).toBeGreaterThan(10);
    expect(answer.meta).toEqual({});
    expect(answer.query).toEqual({
      site_id: SITE,
      metrics: ['visitors', 'events'],
      date_range: [`${isoDay(range7d[0])}T00:00:00+00:00`, `${isoDay(range7d[1])}T23:59:59+00:00`],
      filters: [],
      dimensions: [],
      order_by: [['visitors', 'desc']],
      include: {},
    });
  });

  // "Custom date range" (#example-custom-date-range)
  test('custom date range', async () => {
    const a = isoDay(today - 20 * DAY);
    const b = isoDay(today - 6 * DAY);
    await expectSame({ metrics: ['visitors'], date_range: [a, b] }, Date.parse(a), Date.parse(b) + DAY - 1);
  });

  // "Country and city analysis" (#example-country-and-city)
  test('country and city analysis', async () => {
    const { answer } = await expectSame(
      { metrics: ['visitors', 'pageviews', 'bounce_rate'], date_range: '7d', filters: [['is_not', 'visit:country_name', ['']]], dimensions: ['visit:country_name', 'visit:city_name'] },
      ...range7d,
    );
    expect(answer.results.map((r: any) => r.dimensions[0])).toContain('Germany');
  });

  // "UTM medium, source analysis" (#example-utm)
  test('UTM medium and source', async () => {
    await expectSame({ metrics: ['visitors', 'events', 'pageviews'], date_range: '7d', dimensions: ['visit:utm_medium', 'visit:utm_source'] }, ...range7d);
  });

  // "Filtering by page and country" (#example-filtering)
  test('filtering by page and country', async () => {
    await expectSame(
      {
        metrics: ['visitors'],
        date_range: '7d',
        filters: [
          ['contains', 'event:page', ['/docs', '/pricing']],
          ['or', [['not', ['is', 'visit:utm_campaign', ['Referral']]], ['is', 'visit:country_name', ['Estonia', 'United States']]]],
        ],
      },
      ...range7d,
    );
  });

  // "Case insensitive filtering" (#example-filtering-case-insensitive)
  test('case insensitive filtering', async () => {
    await expectSame({ metrics: ['visitors'], date_range: '7d', filters: [['contains', 'event:page', ['blog'], { case_sensitive: false }]] }, ...range7d);
    const { answer } = await expectSame({ metrics: ['visitors'], date_range: '30d', filters: [['contains', 'event:page', ['LOGIN'], { case_sensitive: false }]] }, today - 30 * DAY, today - 1);
    expect(answer.results[0].metrics[0]).toBeGreaterThan(0);
  });

  // "Timeseries query" (#example-timeseries)
  test('timeseries', async () => {
    const { answer } = await expectSame({ metrics: ['visitors', 'events'], date_range: '7d', filters: [['is', 'visit:os', ['GNU/Linux', 'Mac']]], dimensions: ['time:day'] }, ...range7d);
    expect(answer.query.order_by).toEqual([
      ['time:day', 'asc'],
      ['visitors', 'desc'],
    ]);
  });

  // "Timeseries query hourly, with labels" (#example-time-labels)
  test('hourly with time labels', async () => {
    const { answer } = await expectSame({ metrics: ['visitors'], date_range: 'day', dimensions: ['time:hour'], include: { time_labels: true } }, today, now);
    const date = isoDay(today);
    expect(answer.meta.time_labels).toEqual(Array.from({ length: 24 }, (_, h) => `${date} ${String(h).padStart(2, '0')}:00:00`));
  });

  // "Using custom properties" (#example-custom-properties), with our property `plan`
  test('custom properties', async () => {
    await expectSame(
      {
        metrics: ['visitors'],
        date_range: '7d',
        dimensions: ['time:day', 'event:props:plan'],
        order_by: [
          ['time:day', 'asc'],
          ['event:props:plan', 'desc'],
        ],
      },
      ...range7d,
    );
  });

  // "Pagination" (#example-pagination)
  test('pagination', async () => {
    const body = { metrics: ['visitors', 'events', 'pageviews'], date_range: '7d', dimensions: ['visit:utm_medium', 'visit:utm_source'], include: { total_rows: true }, pagination: { limit: 3, offset: 1 } };
    const { answer, expected } = await expectSame(body, ...range7d);
    expect(expected.total).toBeGreaterThan(2);
    expect(answer.results).toHaveLength(Math.min(3, expected.total - 1));
    expect(answer.meta.total_rows).toBe(expected.total);
    expect(answer.query.pagination).toEqual({ offset: 1, limit: 3 });
  });

  // "Including imported data" (#example-imports)
  test('including imported data: none here, said in meta', async () => {
    const { answer } = await expectSame({ metrics: ['visitors'], date_range: 'all', dimensions: ['visit:source'], include: { imports: true } }, Math.floor(logFrom / DAY) * DAY, today + DAY - 1);
    expect(answer.meta.imports_included).toBe(false);
    expect(answer.meta.imports_warning).toBeString();
  });

  // "Behavioral filters" (#example-behavioral-filters): not supported, said so
  test('behavioral filters are refused', async () => {
    const { status, body } = await query({ site_id: SITE, metrics: ['visitors'], date_range: 'all', filters: [['is', 'event:goal', ['Signup']], ['has_done', ['is', 'event:page', ['/pricing']]]] });
    expect(status).toBe(400);
    expect(body.error).toContain('has_done');
  });
});

describe('visits, metrics, dimensions, filters and order against the plain computation', () => {
  const from = today - 35 * DAY;
  const to = today - 1;
  const a = isoDay(from);
  const b = isoDay(to);
  const cases: Array<[string, Record<string, unknown>]> = [
    ['every visit metric', { metrics: ['visitors', 'visits', 'pageviews', 'views_per_visit', 'bounce_rate', 'visit_duration', 'events'] }],
    ['visit metrics by source', { metrics: ['visitors', 'visits', 'bounce_rate', 'visit_duration', 'percentage'], dimensions: ['visit:source'] }],
    ['by referrer', { metrics: ['visitors', 'visits'], dimensions: ['visit:referrer'] }],
    ['by every UTM field', { metrics: ['visits', 'bounce_rate'], dimensions: ['visit:utm_campaign', 'visit:utm_content', 'visit:utm_term'] }],
    ['by country, region, browser, OS and device', { metrics: ['visitors', 'visit_duration'], dimensions: ['visit:country', 'visit:region', 'visit:browser', 'visit:os', 'visit:device'] }],
    ['top pages with their bounce rate (visits entering there)', { metrics: ['visitors', 'visits', 'pageviews', 'bounce_rate', 'visit_duration'], dimensions: ['event:page'] }],
    ['entry and exit pages', { metrics: ['visitors', 'visits', 'bounce_rate'], dimensions: ['visit:entry_page', 'visit:exit_page'] }],
    ['goals with conversion rate', { metrics: ['visitors', 'events', 'conversion_rate'], dimensions: ['event:goal'] }],
    ['a goal filter', { metrics: ['visitors', 'events', 'conversion_rate'], filters: [['is', 'event:goal', ['Signup', 'Download']]], dimensions: ['visit:device'] }],
    ['event names', { metrics: ['visitors', 'events'], dimensions: ['event:name'] }],
    ['a page filter: bounce rate of visits entering on it', { metrics: ['visitors', 'visits', 'pageviews', 'bounce_rate', 'visit_duration'], filters: [['is', 'event:page', ['/pricing', '/']]] }],
    ['regular expressions', { metrics: ['visitors', 'pageviews'], filters: [['matches', 'event:page', ['^/user/\\d+$', '^/docs']]], dimensions: ['event:page'] }],
    ['negations', { metrics: ['visitors', 'visits'], filters: [['matches_not', 'event:page', ['^/blog']], ['contains_not', 'visit:browser', ['Fire']], ['is_not', 'visit:country', ['DE']]] }],
    ['by day and source, ordered', { metrics: ['visitors', 'visits', 'bounce_rate'], dimensions: ['time:day', 'visit:source'], order_by: [['visit:source', 'asc'], ['time:day', 'desc']] }],
    ['by month', { metrics: ['visitors', 'visits', 'visit_duration'], dimensions: ['time:month'] }],
    ['by hour, a page filter', { metrics: ['visitors', 'pageviews'], dimensions: ['time:hour'], filters: [['contains', 'event:page', ['/docs']]] }],
    ['ascending on a metric, paginated', { metrics: ['visits', 'visitors'], dimensions: ['visit:entry_page'], order_by: [['visits', 'asc']], pagination: { limit: 4, offset: 2 } }],
  ];
  for (const [name, body] of cases) {
    test(name, async () => {
      await expectSame({ ...body, date_range: [a, b] }, from, Date.parse(b) + DAY - 1);
    });
  }

  test('the visits agree with the log: 30 minutes apart is a new visit, 29:59 is not', async () => {
    const visits = visitsIn(from, to);
    const { body } = await query({ site_id: SITE, metrics: ['visits', 'visitors'], date_range: [a, b] });
    expect(body.results[0].metrics).toEqual([visits.length, new Set(visits.map((v) => v.personId)).size]);
    // The log has gaps of exactly the timeout and of a second less.
    const gaps = log.filter((e, i) => i > 0).length;
    expect(gaps).toBeGreaterThan(0);
  });

  test('a visit takes its attributes from its first event, not a later one', async () => {
    const visits = visitsIn(from, to);
    const edgeLater = visits.filter((v) => v.events.slice(1).some((e) => e.context?.browser?.name === 'Edge') && v.events[0]!.context?.browser?.name !== 'Edge');
    expect(edgeLater.length).toBeGreaterThan(0);
    const { body } = await query({ site_id: SITE, metrics: ['visits'], date_range: [a, b], dimensions: ['visit:browser'], filters: [['is', 'visit:browser', ['Edge']]] });
    expect(body.results[0]?.metrics[0] ?? 0).toBe(visits.filter((v) => v.events[0]!.context?.browser?.name === 'Edge').length);
  });

  test('time:week starts on Mondays, not before the range', async () => {
    const { body } = await query({ site_id: SITE, metrics: ['visitors'], date_range: [a, b], dimensions: ['time:week'], include: { time_labels: true } });
    expect(body.results[0].dimensions[0]).toBe(a);
    for (const label of body.meta.time_labels.slice(1)) expect(new Date(`${label}T00:00:00Z`).getUTCDay()).toBe(1);
    expect(body.meta.time_labels[0]).toBe(a);
  });
});

describe('sites and keys', () => {
  test('a workspace without siteDomains answers for any site_id', async () => {
    const { status, body } = await query({ site_id: 'anything.example', metrics: ['visitors', 'pageviews'], date_range: [isoDay(openVisitAt), isoDay(openVisitAt)] }, open.privateApiKey);
    expect(status).toBe(200);
    expect(body.results[0].metrics).toEqual([1, 1]);
  });

  test('a site the workspace does not list: 401 as Plausible answers', async () => {
    const { status, body } = await query({ site_id: 'unknown.example', metrics: ['visitors'], date_range: '7d' });
    expect(status).toBe(401);
    expect(body).toEqual({ error: "Invalid API key or site ID. Please make sure you're using a valid API key with access to the site you've requested." });
  });

  test('another listed domain of the workspace is the same site', async () => {
    const { status } = await query({ site_id: 'OTHER.example.com', metrics: ['visitors'], date_range: '7d' });
    expect(status).toBe(200);
  });

  test('a wrong key: 401; no key: 401; a public key: 401', async () => {
    const wrong = await query({ site_id: SITE, metrics: ['visitors'], date_range: '7d' }, 'sk_nope');
    expect(wrong.status).toBe(401);
    expect(wrong.body.error).toStartWith('Invalid API key or site ID');
    const none = await query({ site_id: SITE, metrics: ['visitors'], date_range: '7d' }, null);
    expect(none.status).toBe(401);
    expect(none.body).toEqual({ error: 'Missing API key. Please use a valid Plausible API key as a Bearer Token.' });
    const pub = await query({ site_id: SITE, metrics: ['visitors'], date_range: '7d' }, workspace.publicApiKey);
    expect(pub.status).toBe(401);
  });

  test('no site_id: 400', async () => {
    const { status, body } = await query({ metrics: ['visitors'], date_range: '7d' });
    expect(status).toBe(400);
    expect(body).toEqual({ error: 'Missing site ID. Please provide the required site_id parameter with your request.' });
  });
});

describe('the compiled statement', () => {
  test('holds no value of the query: each is a bound parameter', () => {
    const odd = "x'); DROP TABLE events; --\\";
    const { sql, params } = compileStatsQuery(
      { site_id: SITE, metrics: ['visitors', 'events'], date_range: '7d', dimensions: ['visit:source', 'event:props:pl\'an'], filters: [['is', 'visit:country', ['DE']], ['contains', 'event:page', [odd]], ['matches', 'visit:browser', [odd]]] },
      { now, timezone: 'UTC', sessionTimeoutMinutes: 30 },
    );
    expect(sql).not.toContain('DROP');
    expect(sql).not.toContain("pl'an");
    expect(sql).not.toContain("'DE'");
    expect(Object.values(params)).toContainEqual([odd]);
    expect(Object.values(params)).toContain("pl'an");
  });

  test('is the same for the same query at the same time (a pure function)', () => {
    const body = { site_id: SITE, metrics: ['visitors'], date_range: '30d', dimensions: ['time:day'] };
    const a = compileStatsQuery(body, { now, timezone: 'UTC', sessionTimeoutMinutes: 30 });
    const b = compileStatsQuery(body, { now, timezone: 'UTC', sessionTimeoutMinutes: 30 });
    expect(a.sql).toBe(b.sql);
    expect(a.params).toEqual(b.params);
  });
});

describe('the OpenAPI document', () => {
  test('describes the route, its body and its answers', async () => {
    const document = (await (await svc.request('GET', '/docs/json')).json()) as any;
    const op = document.paths['/api/v2/query'].post;
    expect(op.requestBody.content['application/json'].schema.properties.metrics).toBeDefined();
    expect(op.responses['200'].content['application/json'].schema.properties.results).toBeDefined();
    expect(op.responses['400'].content['application/json'].schema.properties.error).toBeDefined();
  });
});

describe('bad requests, answered with Plausible\'s error shape', () => {
  const cases: Array<[string, Record<string, unknown>, string]> = [
    ['an unknown metric', { metrics: ['visitors', 'foo'], date_range: '7d' }, '#/metrics/1: Invalid metric "foo"'],
    ['a bad date_range', { metrics: ['visitors'], date_range: '8d' }, '#/date_range: Invalid date range "8d"'],
    ['a bad date pair', { metrics: ['visitors'], date_range: ['2024-01-01', 'tomorrow'] }, `Invalid date_range '["2024-01-01", "tomorrow"]'.`],
    ['an unknown dimension', { metrics: ['visitors'], date_range: '7d', dimensions: ['visit:shoe_size'] }, '#/dimensions/0: Invalid dimension "visit:shoe_size"'],
    ['a filter on an unknown dimension', { metrics: ['visitors'], date_range: '7d', filters: [['is', 'visit:shoe_size', ['42']]] }, '#/filters/0: Invalid filter ["is", "visit:shoe_size", ["42"]]'],
    ['an unknown operator', { metrics: ['visitors'], date_range: '7d', filters: [['sounds_like', 'event:page', ['/']]] }, '#/filters/0: Invalid filter ["sounds_like", "event:page", ["/"]]'],
    ['a goal filter below the top level', { metrics: ['visitors'], date_range: '7d', filters: [['not', ['is', 'event:goal', ['Signup']]]] }, 'Invalid filters. Dimension `event:goal` can only be filtered at the top level.'],
    ['an order on what was not asked', { metrics: ['visitors'], date_range: '7d', order_by: [['visits', 'desc']] }, `Invalid order_by entry '{"visits", :desc}'. Entry is not a queried metric or dimension.`],
    ['conversion_rate without goals', { metrics: ['conversion_rate'], date_range: '7d' }, 'Metric `conversion_rate` can only be queried with event:goal filters or dimensions.'],
    ['views_per_visit with dimensions', { metrics: ['views_per_visit'], date_range: '7d', dimensions: ['visit:source'] }, 'Metric `views_per_visit` cannot be queried with `dimensions`.'],
    ['session metrics with goals', { metrics: ['bounce_rate'], date_range: '7d', dimensions: ['event:goal'] }, 'Session metric(s) `bounce_rate` cannot be queried along with event dimensions.'],
    ['time labels without time', { metrics: ['visitors'], date_range: '7d', include: { time_labels: true } }, 'Invalid include.time_labels: requires a time dimension.'],
    ['an unknown field', { metrics: ['visitors'], date_range: '7d', interval: 'day' }, '#/interval: Schema does not allow additional properties.'],
    ['no metrics', { date_range: '7d' }, '#: Required property metrics was not present.'],
    ['a bad country code', { metrics: ['visitors'], date_range: '7d', filters: [['is', 'visit:country', ['Germany']]] }, 'Invalid visit:country filter, visit:country needs to be a valid 2-letter country code.'],
  ];
  for (const [name, body, error] of cases) {
    test(name, async () => {
      const res = await query({ site_id: SITE, ...body });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error });
      expect(res.contentType).toStartWith('application/json');
    });
  }
});

describe('a range of date-times counts whole seconds, as Plausible does', () => {
  const site = 'seconds.example';
  let edge: CreatedWorkspace;
  const page = (anonymousId: string, at: string) => ({ type: 'page', anonymousId, context: { page: { url: `https://${site}/`, path: '/' } }, timestamp: at });
  beforeAll(async () => {
    edge = await createWorkspace(svc, { name: uniqueName('stats-seconds'), siteDomains: [site] });
    // In the range: its first second and its last (at .500); out: the next second.
    await sendEvents(svc, [page('a', '2026-11-02T00:00:00.000Z'), page('b', '2026-11-02T23:59:59.500Z'), page('c', '2026-11-03T00:00:00.200Z')], edge.publicApiKey);
  });
  const range = ['2026-11-02T00:00:00+00:00', '2026-11-02T23:59:59+00:00'];

  test('from stored visits: the event at 23:59:59.500 is in a range ending at 23:59:59', async () => {
    const { status, body } = await query({ site_id: site, metrics: ['visitors', 'visits', 'pageviews'], date_range: range }, edge.privateApiKey);
    expect(status).toBe(200);
    expect(body.results[0].metrics).toEqual([2, 2, 2]);
    expect(body.query.date_range).toEqual(range);
  });

  test('from events (a filter on event:name): the same', async () => {
    const { status, body } = await query({ site_id: site, metrics: ['visitors', 'pageviews'], date_range: range, filters: [['is', 'event:name', ['pageview']]] }, edge.privateApiKey);
    expect(status).toBe(200);
    expect(body.results[0].metrics).toEqual([2, 2]);
  });
});

describe('partial time labels, as Plausible marks them', () => {
  const labelsOf = async (date_range: unknown, dimension: string) => {
    const { status, body } = await query({ site_id: SITE, metrics: ['visitors'], date_range, dimensions: [dimension], include: { time_labels: true, partial_time_labels: true } });
    expect({ status, error: body.error }).toEqual({ status: 200, error: undefined });
    return [body.meta.time_labels, body.meta.partial_time_labels];
  };

  test('the first bucket when the range starts within it, the last when the range ends within it', async () => {
    expect(await labelsOf(['2026-11-02T12:30:00+00:00', '2026-11-04T23:59:59+00:00'], 'time:day')).toEqual([['2026-11-02', '2026-11-03', '2026-11-04'], ['2026-11-02']]);
    expect(await labelsOf(['2026-11-02T00:00:00+00:00', '2026-11-04T12:00:00+00:00'], 'time:day')).toEqual([['2026-11-02', '2026-11-03', '2026-11-04'], ['2026-11-04']]);
    // Weeks from Wednesday the 4th to Friday the 20th: the first and last are cut.
    expect(await labelsOf(['2026-11-04', '2026-11-20'], 'time:week')).toEqual([['2026-11-04', '2026-11-09', '2026-11-16'], ['2026-11-04', '2026-11-16']]);
    expect(await labelsOf(['2026-10-05', '2026-11-01'], 'time:week')).toEqual([['2026-10-05', '2026-10-12', '2026-10-19', '2026-10-26'], []]);
  });

  test('the bucket not over now: this month; none for the last 7 whole days', async () => {
    const [month, partialMonth] = await labelsOf('month', 'time:day');
    expect(partialMonth).toEqual([month.at(-1)]);
    const [, partial7d] = await labelsOf('7d', 'time:day');
    expect(partial7d).toEqual([]);
    const [byMonth, partialByMonth] = await labelsOf('month', 'time:month');
    expect({ byMonth, partialByMonth }).toEqual({ byMonth: [`${new Date().toISOString().slice(0, 7)}-01`], partialByMonth: byMonth });
  });

  test("present_index: the index of now's bucket, or null when the range does not hold it", async () => {
    const present = async (date_range: unknown, dimension: string) => {
      const { body } = await query({ site_id: SITE, metrics: ['visitors'], date_range, dimensions: [dimension], include: { time_labels: true, present_index: true } });
      return body.meta.present_index === null ? null : body.meta.time_labels[body.meta.present_index];
    };
    const now = new Date();
    expect(await present('month', 'time:day')).toBe(now.toISOString().slice(0, 10));
    expect(await present('day', 'time:hour')).toBe(`${now.toISOString().slice(0, 13).replace('T', ' ')}:00:00`);
    expect(await present('7d', 'time:day')).toBeNull();
  });

  test('partial_time_labels needs a time dimension', async () => {
    const { status, body } = await query({ site_id: SITE, metrics: ['visitors'], date_range: '7d', include: { partial_time_labels: true } });
    expect({ status, body }).toEqual({ status: 400, body: { error: 'Invalid include.partial_time_labels: requires a time dimension.' } });
  });
});
