import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { MAX_DASHBOARDS, MAX_SAVED_INSIGHTS } from '../../src/dashboards/model';
import { testInProcess } from '../helpers/deno-service';
import { uniqueName } from '../helpers/engine-dir';
import { createWorkspace, sendEvents, startTestService, type CreatedWorkspace, type TestService } from '../helpers/test-service';
import { regulate, settledRegulation } from '../regulations/helpers';

/**
 * Saved insights and dashboards on the real service: their CRUD, isolation between workspaces,
 * removal with the workspace, a restart, and a dashboard's answers (a trends tile, a SQL tile and
 * failing tiles side by side, the dashboard's date range over the tiles', insight tiles' answers kept
 * until events are loaded or erased, and last answers answered at once with `?stale=true`).
 */

const DAY = 86_400_000;
const HOUR = 3_600_000;
const dateOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);
// Days well in the past, from today's UTC midnight: signups 2, 1 and 3 on three days in a row.
const DAY0 = Math.floor(Date.now() / DAY) * DAY - 10 * DAY;
const SIGNUPS_PER_DAY = [2, 1, 3];

let svc: TestService;
let a: CreatedWorkspace;
let b: CreatedWorkspace;

beforeAll(async () => {
  svc = await startTestService();
  a = await createWorkspace(svc, { name: uniqueName('dash-a') });
  b = await createWorkspace(svc, { name: uniqueName('dash-b') });
  const events = SIGNUPS_PER_DAY.flatMap((n, day) =>
    Array.from({ length: n }, (_, i) => ({ type: 'track', event: 'signup', userId: `u${day}-${i}`, timestamp: new Date(DAY0 + day * DAY + (i + 1) * HOUR).toISOString() })),
  );
  await sendEvents(svc, events, a.publicApiKey);
});
afterAll(() => svc.stop());

async function call(key: string, method: string, path: string, body?: unknown) {
  const res = await svc.request(method, path, { key, body });
  return { status: res.status, body: (await res.json()) as any };
}
const callA = (method: string, path: string, body?: unknown) => call(a.privateApiKey, method, path, body);
const callB = (method: string, path: string, body?: unknown) => call(b.privateApiKey, method, path, body);

const trendsQuery = { series: [{ event: 'signup' }], dateFrom: dateOf(DAY0), dateTo: dateOf(DAY0 + 2 * DAY), interval: 'day' };

async function saved(key: string, input: unknown): Promise<any> {
  const res = await call(key, 'POST', '/insights/saved', input);
  expect(res.status).toBe(201);
  return res.body;
}

describe('saved insights', () => {
  test('are created, read, listed, replaced and deleted', async () => {
    const created = await saved(a.privateApiKey, { name: 'Signups', kind: 'trends', query: trendsQuery, display: { chart: 'bar', colors: ['#f00'] } });
    expect(created).toEqual({ id: expect.any(String), name: 'Signups', kind: 'trends', query: trendsQuery, display: { chart: 'bar', colors: ['#f00'] }, createdAt: created.createdAt, updatedAt: created.createdAt });
    expect(Date.parse(created.createdAt)).toBeGreaterThan(Date.now() - 60_000);
    expect((await callA('GET', `/insights/saved/${created.id}`)).body).toEqual(created);

    const sql = await saved(a.privateApiKey, { name: 'Count', kind: 'sql', query: 'SELECT count() AS n FROM events' });
    expect(sql).not.toHaveProperty('display');
    const list = await callA('GET', '/insights/saved');
    expect(list.status).toBe(200);
    const ids = list.body.results.map((i: any) => i.id);
    expect(ids.indexOf(created.id)).toBeLessThan(ids.indexOf(sql.id));
    const second = await callA('GET', `/insights/saved?limit=1&offset=${ids.indexOf(sql.id)}`);
    expect(second.body).toEqual({ results: [sql], limit: 1, offset: ids.indexOf(sql.id), total: list.body.total });

    const replaced = await callA('PUT', `/insights/saved/${created.id}`, { name: 'Persons signing up', kind: 'trends', query: { ...trendsQuery, series: [{ event: 'signup', math: 'persons' }] } });
    expect(replaced.status).toBe(200);
    expect(replaced.body).toEqual({ id: created.id, name: 'Persons signing up', kind: 'trends', query: { ...trendsQuery, series: [{ event: 'signup', math: 'persons' }] }, createdAt: created.createdAt, updatedAt: expect.any(String) });
    expect(Date.parse(replaced.body.updatedAt)).toBeGreaterThan(Date.parse(created.createdAt));
    expect((await callA('GET', `/insights/saved/${created.id}`)).body).toEqual(replaced.body);

    const deleted = await callA('DELETE', `/insights/saved/${created.id}`);
    expect(deleted).toEqual({ status: 200, body: replaced.body });
    expect((await callA('GET', `/insights/saved/${created.id}`)).status).toBe(404);
    expect((await callA('PUT', `/insights/saved/${created.id}`, { name: 'x', kind: 'sql', query: 'SELECT 1' })).status).toBe(404);
    expect((await callA('DELETE', `/insights/saved/${created.id}`)).status).toBe(404);
    expect((await callA('GET', '/insights/saved')).body.results.map((i: any) => i.id)).not.toContain(created.id);
  });

  test('bad bodies get a 400 with a pointer to each problem, and nothing is saved', async () => {
    const before = (await callA('GET', '/insights/saved')).body.total;
    const cases: Array<[unknown, string]> = [
      [{ name: 'x', kind: 'pie', query: {} }, '/kind'],
      [{ name: 'x', query: { series: [{ event: 'signup' }] } }, '/kind'],
      [{ name: '', kind: 'sql', query: 'SELECT 1' }, '/name'],
      [{ name: 'x', kind: 'trends', query: { series: [] } }, '/query/series'],
      [{ name: 'x', kind: 'trends', query: { series: [{ event: 'signup', math: 'most' }] } }, '/query/series/0/math'],
      [{ name: 'x', kind: 'trends', query: { series: [{ event: 'signup' }], colour: 'red' } }, '/query/colour'],
      [{ name: 'x', kind: 'funnels', query: { steps: [{ event: 'a' }] } }, '/query/steps'],
      [{ name: 'x', kind: 'trends', query: 'SELECT 1' }, '/query'],
      [{ name: 'x', kind: 'sql', query: '  ' }, '/query'],
      [{ name: 'x', kind: 'sql', query: { sql: 'SELECT 1' } }, '/query'],
      [{ name: 'x', kind: 'sql', query: 'SELECT 1'.padEnd(100_001, ' ') }, '/query'],
      [{ name: 'x', kind: 'sql', query: 'SELECT 1', display: 'bar' }, '/display'],
      [{ name: 'x', kind: 'sql', query: 'SELECT 1', display: { notes: 'n'.repeat(17_000) } }, '/display'],
      [{ name: 'x', kind: 'sql', query: 'SELECT 1', owner: 'me' }, '/owner'],
      [{ name: 'x', kind: 'sql' }, '/query'],
    ];
    for (const [body, pointer] of cases) {
      const res = await callA('POST', '/insights/saved', body);
      expect(res.status, JSON.stringify(body).slice(0, 100)).toBe(400);
      expect(res.body.errors.map((e: any) => e.pointer), JSON.stringify(body).slice(0, 100)).toContain(pointer);
    }
    const sql = await saved(a.privateApiKey, { name: 'ok', kind: 'sql', query: 'SELECT 1' });
    const bad = await callA('PUT', `/insights/saved/${sql.id}`, { name: 'x', kind: 'trends', query: { series: [{ event: '' }] } });
    expect(bad.status).toBe(400);
    expect(bad.body.errors.map((e: any) => e.pointer)).toContain('/query/series/0/event');
    expect((await callA('GET', `/insights/saved/${sql.id}`)).body).toEqual(sql);
    expect((await callA('GET', '/insights/saved')).body.total).toBe(before + 1);
  });
});

describe('dashboards', () => {
  test('are created, read, listed, replaced and deleted; their tiles must show saved insights of the workspace on the grid', async () => {
    const insight = await saved(a.privateApiKey, { name: 'Signups', kind: 'trends', query: trendsQuery });
    const input = { name: 'Growth', tiles: [{ insightId: insight.id, x: 0, y: 0, w: 6, h: 4 }, { insightId: insight.id, x: 6, y: 0, w: 6, h: 4 }], refreshSeconds: 300, dateFrom: '-30d' };
    const created = await callA('POST', '/dashboards', input);
    expect(created.status).toBe(201);
    expect(created.body).toEqual({ id: expect.any(String), ...input, createdAt: expect.any(String), updatedAt: created.body.createdAt });
    const id = created.body.id;
    expect((await callA('GET', `/dashboards/${id}`)).body).toEqual(created.body);
    expect((await callA('GET', '/dashboards')).body.results).toContainEqual(created.body);

    const empty = await callA('PUT', `/dashboards/${id}`, { name: 'Empty', tiles: [] });
    expect(empty.body).toEqual({ id, name: 'Empty', tiles: [], createdAt: created.body.createdAt, updatedAt: expect.any(String) });
    expect((await callA('GET', `/dashboards/${id}/results`)).body).toEqual({ results: [] });

    expect((await callA('DELETE', `/dashboards/${id}`)).body).toEqual(empty.body);
    expect((await callA('GET', `/dashboards/${id}`)).status).toBe(404);
    expect((await callA('GET', `/dashboards/${id}/results`)).status).toBe(404);
    // Its insight stays.
    expect((await callA('GET', `/insights/saved/${insight.id}`)).status).toBe(200);
  });

  test('bad bodies get a 400 with a pointer to each problem, and nothing is saved', async () => {
    const insight = await saved(a.privateApiKey, { name: 'Signups', kind: 'trends', query: trendsQuery });
    const tile = { insightId: insight.id, x: 0, y: 0, w: 4, h: 3 };
    const before = (await callA('GET', '/dashboards')).body.total;
    const cases: Array<[unknown, string[]]> = [
      [{ name: 'd', tiles: [{ ...tile, x: 12 }] }, ['/tiles/0/x']],
      [{ name: 'd', tiles: [tile, { ...tile, x: 8, w: 6 }] }, ['/tiles/1/w']],
      [{ name: 'd', tiles: [{ ...tile, w: '3' }] }, ['/tiles/0/w']],
      [{ name: 'd', tiles: [{ ...tile, h: 0 }] }, ['/tiles/0/h']],
      [{ name: 'd', tiles: [{ ...tile, y: -1 }] }, ['/tiles/0/y']],
      [{ name: 'd', tiles: [{ ...tile, color: 'red' }] }, ['/tiles/0/color']],
      [{ name: 'd', tiles: Array.from({ length: 51 }, () => tile) }, ['/tiles']],
      [{ name: 'd', tiles: [tile, { ...tile, insightId: 'no-such-insight' }] }, ['/tiles/1/insightId']],
      [{ name: 'd', tiles: [{ ...tile, insightId: 'gone', x: 10 }], dateFrom: 'last week' }, ['/tiles/0/insightId', '/tiles/0/w', '/dateFrom']],
      [{ name: 'd', tiles: [], dateFrom: '-7d', dateTo: '2026-13-45' }, ['/dateTo']],
      [{ name: 'd', tiles: [], dateTo: '-1d' }, ['/dateTo']],
      [{ name: 'd', tiles: [], refreshSeconds: 5 }, ['/refreshSeconds']],
      [{ name: 'd' }, ['/tiles']],
    ];
    for (const [body, pointers] of cases) {
      const res = await callA('POST', '/dashboards', body);
      expect(res.status, JSON.stringify(body).slice(0, 100)).toBe(400);
      expect(res.body.errors.map((e: any) => e.pointer).sort(), JSON.stringify(body).slice(0, 100)).toEqual(expect.arrayContaining(pointers));
    }
    expect((await callA('GET', '/dashboards')).body.total).toBe(before);
  });

  test("answer every tile in one call: trends and SQL beside failing tiles, each failing alone", async () => {
    const trends = await saved(a.privateApiKey, { name: 'Signups', kind: 'trends', query: trendsQuery });
    const sqlText = "SELECT count() AS n, uniqExact(userId) AS users FROM events WHERE event = 'signup'";
    const sql = await saved(a.privateApiKey, { name: 'Signup count', kind: 'sql', query: sqlText });
    const badSql = await saved(a.privateApiKey, { name: 'Broken', kind: 'sql', query: 'SELECT no_such_column FROM events' });
    const refused = await saved(a.privateApiKey, { name: 'Refused', kind: 'sql', query: "INSERT INTO events (event) VALUES ('x')" });
    // A valid query the engine cannot answer: a year of hours is past the periods a range may have.
    const tooLong = await saved(a.privateApiKey, { name: 'Hourly for a year', kind: 'trends', query: { series: [{ event: 'signup' }], dateFrom: '-1y', interval: 'hour' } });
    const gone = await saved(a.privateApiKey, { name: 'Soon deleted', kind: 'sql', query: 'SELECT 1' });
    const tiles = [trends, sql, badSql, refused, tooLong, gone].map((insight, i) => ({ insightId: insight.id, x: 0, y: i * 4, w: 12, h: 4 }));
    const dashboard = (await callA('POST', '/dashboards', { name: 'Mixed', tiles })).body;
    expect((await callA('DELETE', `/insights/saved/${gone.id}`)).status).toBe(200);

    const asked = Date.now();
    const res = await callA('GET', `/dashboards/${dashboard.id}/results`);
    expect(res.status).toBe(200);
    const [trendsTile, sqlTile, badTile, refusedTile, tooLongTile, goneTile] = res.body.results;
    expect(res.body.results).toHaveLength(6);

    // The same answers as POST /insights/trends and POST /queries give.
    // Each answer says when it was asked: after the call began.
    expect(trendsTile).toEqual({ insightId: trends.id, kind: 'trends', result: (await callA('POST', '/insights/trends', trendsQuery)).body, computedAt: expect.any(String) });
    expect(Date.parse(trendsTile.computedAt)).toBeGreaterThanOrEqual(asked);
    expect(trendsTile.result.results[0].labels).toEqual([0, 1, 2].map((d) => dateOf(DAY0 + d * DAY)));
    expect(trendsTile.result.results[0].data).toEqual(SIGNUPS_PER_DAY);
    const queried = await callA('POST', '/queries', { queries: [sqlText] });
    expect(sqlTile).toEqual({ insightId: sql.id, kind: 'sql', result: queried.body.results[0], computedAt: expect.any(String) });
    expect(sqlTile.result.results.map((r: any) => ({ n: Number(r.n), users: Number(r.users) }))).toEqual([{ n: 6, users: 6 }]);

    expect(badTile).toMatchObject({ insightId: badSql.id, kind: 'sql', error: { status: 400, errors: [{ pointer: '/tiles/2/query' }] } });
    expect(badTile.error.detail).toContain('no_such_column');
    expect(refusedTile).toMatchObject({ insightId: refused.id, kind: 'sql', error: { status: 403, errors: [{ pointer: '/tiles/3/query' }] } });
    expect(tooLongTile).toMatchObject({ insightId: tooLong.id, kind: 'trends', error: { status: 400, errors: [{ pointer: '/tiles/4/query/interval' }] } });
    expect(goneTile).toEqual({ insightId: gone.id, error: expect.objectContaining({ status: 404, errors: [{ pointer: '/tiles/5/insightId', detail: expect.any(String) }] }) });
  });

  test("the dashboard's date range replaces the tiles' own", async () => {
    const trends = await saved(a.privateApiKey, { name: 'Signups', kind: 'trends', query: trendsQuery });
    const tiles = [{ insightId: trends.id, x: 0, y: 0, w: 6, h: 4 }];
    const answerOf = async (range: Record<string, string>) => {
      const dashboard = (await callA('POST', '/dashboards', { name: 'Ranged', tiles, ...range })).body;
      const res = await callA('GET', `/dashboards/${dashboard.id}/results`);
      expect(res.status).toBe(200);
      return res.body.results[0].result.results[0];
    };
    // Its own: three days.
    expect((await answerOf({})).data).toEqual([2, 1, 3]);
    // Both ends from the dashboard: the last two of those days.
    const both = await answerOf({ dateFrom: dateOf(DAY0 + DAY), dateTo: dateOf(DAY0 + 2 * DAY) });
    expect(both.labels).toEqual([dateOf(DAY0 + DAY), dateOf(DAY0 + 2 * DAY)]);
    expect(both.data).toEqual([1, 3]);
    // Only a start: the tile's end goes too, so the range runs to now (ten days after DAY0).
    const fromOnly = await answerOf({ dateFrom: dateOf(DAY0 + DAY) });
    expect(fromOnly.labels[0]).toBe(dateOf(DAY0 + DAY));
    expect(fromOnly.labels.at(-1)).toBe(dateOf(Date.now()));
    expect(fromOnly.data.slice(0, 2)).toEqual([1, 3]);
    expect(fromOnly.total).toBe(4);
    // Relative: the last four days hold none of them; the saved insight itself is unchanged.
    expect((await answerOf({ dateFrom: '-4d' })).total).toBe(0);
    expect((await callA('GET', `/insights/saved/${trends.id}`)).body.query).toEqual(trendsQuery);
  });
});

describe('workspaces', () => {
  test("a workspace sees only its own: another's ids are 404, its insights are no tiles of another's dashboards", async () => {
    const insight = await saved(a.privateApiKey, { name: 'A only', kind: 'sql', query: 'SELECT 1' });
    const dashboard = (await callA('POST', '/dashboards', { name: 'A only', tiles: [{ insightId: insight.id, x: 0, y: 0, w: 1, h: 1 }] })).body;
    for (const [method, path, body] of [
      ['GET', `/insights/saved/${insight.id}`],
      ['PUT', `/insights/saved/${insight.id}`, { name: 'mine', kind: 'sql', query: 'SELECT 2' }],
      ['DELETE', `/insights/saved/${insight.id}`],
      ['GET', `/dashboards/${dashboard.id}`],
      ['GET', `/dashboards/${dashboard.id}/results`],
      ['PUT', `/dashboards/${dashboard.id}`, { name: 'mine', tiles: [] }],
      ['DELETE', `/dashboards/${dashboard.id}`],
    ] as const) {
      expect((await callB(method, path, body)).status, `${method} ${path}`).toBe(404);
    }
    const borrowed = await callB('POST', '/dashboards', { name: 'B', tiles: [{ insightId: insight.id, x: 0, y: 0, w: 1, h: 1 }] });
    expect(borrowed.status).toBe(400);
    expect(borrowed.body.errors).toEqual([{ pointer: '/tiles/0/insightId', detail: expect.any(String) }]);
    expect((await callB('GET', '/insights/saved')).body.results.map((i: any) => i.id)).not.toContain(insight.id);
    expect((await callB('GET', '/dashboards')).body.results.map((d: any) => d.id)).not.toContain(dashboard.id);
    // Untouched by all of that.
    expect((await callA('GET', `/insights/saved/${insight.id}`)).body).toEqual(insight);
    expect((await callA('GET', `/dashboards/${dashboard.id}`)).body).toEqual(dashboard);
  });

  test('the routes take a private key of the workspace only', async () => {
    expect((await call(a.publicApiKey, 'GET', '/insights/saved')).status).toBe(403);
    expect((await call(a.publicApiKey, 'GET', '/dashboards')).status).toBe(403);
    expect((await svc.request('GET', '/dashboards')).status).toBe(401);
  });

  testInProcess('the limits per workspace hold: past them, a 400', async () => {
    const c = await createWorkspace(svc, { name: uniqueName('dash-limits') });
    const meta = svc.config.metaDatabase;
    const row = (id: string) => ({ workspaceId: c.workspaceId, name: id, createdAt: '2026-01-01 00:00:00.000000', updatedAt: '2026-01-01 00:00:00.000000', version: '1', isDeleted: 0 });
    const insights = Array.from({ length: MAX_SAVED_INSIGHTS - 1 }, (_, i) => JSON.stringify({ ...row(`i${i}`), insightId: `i${i}`, kind: 'sql', query: '"SELECT 1"', display: null }));
    await svc.storage.insert(meta, 'saved_insights', insights);
    const last = await call(c.privateApiKey, 'POST', '/insights/saved', { name: 'last', kind: 'sql', query: 'SELECT 1' });
    expect(last.status).toBe(201);
    const over = await call(c.privateApiKey, 'POST', '/insights/saved', { name: 'over', kind: 'sql', query: 'SELECT 1' });
    expect(over.status).toBe(400);
    expect(over.body.detail).toContain(String(MAX_SAVED_INSIGHTS));

    const dashboards = Array.from({ length: MAX_DASHBOARDS - 1 }, (_, i) => JSON.stringify({ ...row(`d${i}`), dashboardId: `d${i}`, tiles: '[]', refreshSeconds: null, dateFrom: null, dateTo: null }));
    await svc.storage.insert(meta, 'dashboards', dashboards);
    expect((await call(c.privateApiKey, 'POST', '/dashboards', { name: 'last', tiles: [] })).status).toBe(201);
    const overDashboards = await call(c.privateApiKey, 'POST', '/dashboards', { name: 'over', tiles: [] });
    expect(overDashboards.status).toBe(400);
    expect(overDashboards.body.detail).toContain(String(MAX_DASHBOARDS));
    // A replacement is no new one.
    expect((await call(c.privateApiKey, 'PUT', '/dashboards/d0', { name: 'renamed', tiles: [] })).status).toBe(200);
    expect((await call(c.privateApiKey, 'GET', '/insights/saved')).body.total).toBe(MAX_SAVED_INSIGHTS);
  });

  testInProcess('they go with their workspace', async () => {
    const c = await createWorkspace(svc, { name: uniqueName('dash-gone') });
    const insight = await saved(c.privateApiKey, { name: 'doomed', kind: 'sql', query: 'SELECT 1' });
    await call(c.privateApiKey, 'POST', '/dashboards', { name: 'doomed', tiles: [{ insightId: insight.id, x: 0, y: 0, w: 1, h: 1 }] });
    const live = async (table: string) => {
      const [row] = await svc.storage.query(`SELECT count() AS n FROM \`${svc.config.metaDatabase}\`.${table} FINAL WHERE workspaceId = {id:String} AND isDeleted = 0`, { id: c.workspaceId });
      return Number(row!.n);
    };
    expect([await live('saved_insights'), await live('dashboards')]).toEqual([1, 1]);
    expect((await svc.request('DELETE', `/workspaces/${c.workspaceId}`, { key: svc.privateKey })).status).toBe(200);
    expect([await live('saved_insights'), await live('dashboards')]).toEqual([0, 0]);
    // The other workspaces keep theirs.
    expect((await callA('GET', '/insights/saved')).body.total).toBeGreaterThan(0);
  });
});

describe('a restart', () => {
  test('keeps saved insights and dashboards, which still answer', async () => {
    const insight = await saved(a.privateApiKey, { name: 'Kept', kind: 'trends', query: trendsQuery, display: { chart: 'line' } });
    const dashboard = (await callA('POST', '/dashboards', { name: 'Kept', tiles: [{ insightId: insight.id, x: 2, y: 1, w: 3, h: 2 }], refreshSeconds: 60, dateFrom: dateOf(DAY0), dateTo: dateOf(DAY0 + DAY) })).body;
    const insights = (await callA('GET', '/insights/saved')).body;
    const dashboards = (await callA('GET', '/dashboards')).body;
    await svc.stop();
    svc = await startTestService(svc.settings);
    expect((await callA('GET', '/insights/saved')).body).toEqual(insights);
    expect((await callA('GET', '/dashboards')).body).toEqual(dashboards);
    expect((await callA('GET', `/dashboards/${dashboard.id}`)).body).toEqual(dashboard);
    const results = await callA('GET', `/dashboards/${dashboard.id}/results`);
    expect(results.body.results).toEqual([{ insightId: insight.id, kind: 'trends', result: { results: [expect.objectContaining({ data: [2, 1], total: 3 })] }, computedAt: expect.any(String) }]);
  });
});

describe("a dashboard's kept answers", () => {
  let c: CreatedWorkspace;
  beforeAll(async () => {
    c = await createWorkspace(svc, { name: uniqueName('dash-kept') });
    await sendEvents(svc, [0, 1].map((day) => ({ type: 'track', event: 'signup', userId: `k${day}`, timestamp: new Date(DAY0 + day * DAY + HOUR).toISOString() })), c.publicApiKey);
  });
  /** POST /queries statements run so far, of every workspace (the metrics' count of them). */
  const statementsRun = async () => {
    const text = await (await svc.request('GET', '/metrics', { key: svc.privateKey })).text();
    return [...text.matchAll(/^analytics_query_duration_seconds_count\{[^}]*\} (\d+)$/gm)].reduce((sum, m) => sum + Number(m[1]), 0);
  };

  test('an insight tile is asked again only once events were loaded or erased; a SQL tile each time', async () => {
    const trends = await saved(c.privateApiKey, { name: 'Signups', kind: 'trends', query: trendsQuery });
    const sql = await saved(c.privateApiKey, { name: 'Count', kind: 'sql', query: "SELECT count() AS n FROM events WHERE event = 'signup'" });
    const tiles = [trends, sql].map((insight, i) => ({ insightId: insight.id, x: 0, y: i * 4, w: 12, h: 4 }));
    const dashboard = (await call(c.privateApiKey, 'POST', '/dashboards', { name: 'Kept', tiles })).body;
    const answers = async () => {
      const res = await call(c.privateApiKey, 'GET', `/dashboards/${dashboard.id}/results`);
      expect(res.status).toBe(200);
      const [trendsTile, sqlTile] = res.body.results;
      return { signups: trendsTile.result.results[0].data, count: Number(sqlTile.result.results[0].n) };
    };

    expect(await answers()).toEqual({ signups: [1, 1, 0], count: 2 });
    const before = await statementsRun();
    expect(await answers()).toEqual({ signups: [1, 1, 0], count: 2 });
    // The SQL tile ran again; the trends tile answered as before without a statement.
    expect((await statementsRun()) - before).toBe(1);

    // Events loaded: the next answer has them (read-your-writes), then it is kept again.
    await sendEvents(svc, [{ type: 'track', event: 'signup', userId: 'k2', timestamp: new Date(DAY0 + 2 * DAY + HOUR).toISOString() }], c.publicApiKey);
    expect(await answers()).toEqual({ signups: [1, 1, 1], count: 3 });
    const loaded = await statementsRun();
    expect(await answers()).toEqual({ signups: [1, 1, 1], count: 3 });
    expect((await statementsRun()) - loaded).toBe(1);

    // A person's events erased: gone from the next answer.
    const regulation = await settledRegulation(svc, c.privateApiKey, await regulate(svc, c.privateApiKey, 'DELETE', 'userId', ['k1']));
    expect(regulation.status).toBe('finished');
    expect(await answers()).toEqual({ signups: [1, 0, 1], count: 2 });
  });

  test('with ?stale=true a dashboard answers its last answers at once, marked stale once events arrived; never another workspace\'s, nor after an erasure', async () => {
    const d = await createWorkspace(svc, { name: uniqueName('dash-stale') });
    await sendEvents(svc, [0, 1].map((day) => ({ type: 'track', event: 'signup', userId: `s${day}`, timestamp: new Date(DAY0 + day * DAY + HOUR).toISOString() })), d.publicApiKey);
    const dashboardOf = async (key: string) => {
      const trends = await saved(key, { name: 'Signups', kind: 'trends', query: trendsQuery });
      const sql = await saved(key, { name: 'Count', kind: 'sql', query: "SELECT count() AS n FROM events WHERE event = 'signup'" });
      const tiles = [trends, sql].map((insight, i) => ({ insightId: insight.id, x: 0, y: i * 4, w: 12, h: 4 }));
      return (await call(key, 'POST', '/dashboards', { name: 'Stale', tiles })).body.id as string;
    };
    const id = await dashboardOf(d.privateApiKey);
    const answers = async (query = '?stale=true', key = d.privateApiKey, dashboard = id) => {
      const res = await call(key, 'GET', `/dashboards/${dashboard}/results${query}`);
      expect(res.status).toBe(200);
      const [trendsTile, sqlTile] = res.body.results;
      return { signups: trendsTile.result.results[0].data, count: Number(sqlTile.result.results[0].n), stale: [trendsTile.stale, sqlTile.stale], at: [trendsTile.computedAt, sqlTile.computedAt] };
    };

    // Nothing kept yet: answered now.
    const first = await answers();
    expect(first).toMatchObject({ signups: [1, 1, 0], count: 2, stale: [false, false] });
    // Kept: answered without a statement; a SQL tile's answer may not be current (it may read anything), so it is marked.
    let before = await statementsRun();
    expect(await answers()).toEqual({ ...first, stale: [false, true] });
    expect((await statementsRun()) - before).toBe(0);

    // Events arrived: the last answers still come at once, marked stale, with when they were asked.
    await sendEvents(svc, [{ type: 'track', event: 'signup', userId: 's2', timestamp: new Date(DAY0 + 2 * DAY + HOUR).toISOString() }], d.publicApiKey);
    before = await statementsRun();
    expect(await answers()).toEqual({ ...first, stale: [true, true] });
    expect((await statementsRun()) - before).toBe(0);
    // Without it, the current answers; then they are the ones kept.
    const current = await answers('');
    expect(current).toMatchObject({ signups: [1, 1, 1], count: 3, stale: [undefined, undefined] });
    expect(Date.parse(current.at[0])).toBeGreaterThan(Date.parse(first.at[0]));
    expect(await answers()).toEqual({ ...current, stale: [false, true] });

    // Another workspace's dashboard of the same questions answers its own events, never these.
    const other = await createWorkspace(svc, { name: uniqueName('dash-stale-other') });
    expect(await answers('?stale=true', other.privateApiKey, await dashboardOf(other.privateApiKey))).toMatchObject({ signups: [0, 0, 0], count: 0, stale: [false, false] });

    // A person's events erased: their answers are not shown again, even as stale ones.
    const regulation = await settledRegulation(svc, d.privateApiKey, await regulate(svc, d.privateApiKey, 'DELETE', 'userId', ['s1']));
    expect(regulation.status).toBe('finished');
    expect(await answers()).toMatchObject({ signups: [1, 0, 1], count: 2, stale: [false, false] });

    // Anything but true or false is refused.
    const bad = await call(d.privateApiKey, 'GET', `/dashboards/${id}/results?stale=yes`);
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toContain('must be true or false');
  });
});
