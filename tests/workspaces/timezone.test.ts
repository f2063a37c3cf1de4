import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { SERVED_BY_DENO, testInProcess } from '../helpers/deno-service';
import { uniqueName } from '../helpers/engine-dir';
import { serviceOverOldMetadata } from '../helpers/old-metadata';
import { createWorkspace, sendEvents, startTestService, type CreatedWorkspace, type TestService } from '../helpers/test-service';

/**
 * The workspace time zone (`timezone`, CONTRACT.md section 13): set on create and PUT, checked
 * against the engine's and the runtime's zones, and where days start for the Stats API, insights
 * that name no zone, and dashboards' tiles. Known answers: a page view at 03:00 UTC is on the
 * previous day in New York (22:00 EST).
 */

const NY = 'America/New_York';
// 2026-03-02 22:00 in New York, and 2026-03-03 10:00 there.
const LATE_EVENING = '2026-03-03T03:00:00.000Z';
const MORNING = '2026-03-03T15:00:00.000Z';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(() => svc?.stop());

const admin = async (method: string, path: string, body?: unknown) => {
  const res = await svc.request(method, path, { key: svc.privateKey, body });
  return { status: res.status, body: (await res.json()) as any };
};
const as = async (ws: CreatedWorkspace, method: string, path: string, body?: unknown) => {
  const res = await svc.request(method, path, { key: ws.privateApiKey, body });
  return { status: res.status, body: (await res.json()) as any };
};
const page = (anonymousId: string, timestamp: string) => ({ type: 'page', anonymousId, context: { page: { path: '/' } }, timestamp });

/** A workspace in `timezone` with one page view at 03:00 UTC and one at 15:00 UTC on 2026-03-03, by two visitors. */
async function twoPageViews(label: string, timezone?: string): Promise<CreatedWorkspace> {
  const ws = await createWorkspace(svc, { name: uniqueName(label), ...(timezone ? { timezone } : {}) });
  await sendEvents(svc, [page('late', LATE_EVENING), page('morning', MORNING)], ws.publicApiKey);
  return ws;
}

const visitorsByDay = async (ws: CreatedWorkspace) =>
  (await as(ws, 'POST', '/api/v2/query', { site_id: ws.workspaceId, metrics: ['visitors'], date_range: ['2026-03-02', '2026-03-03'], dimensions: ['time:day'] })).body.results;

const trendsByDay = { series: [{ event: '$pageview' }], dateFrom: '2026-03-02', dateTo: '2026-03-03', interval: 'day' };
const trendsData = async (ws: CreatedWorkspace, query: Record<string, unknown> = trendsByDay) => {
  const res = await as(ws, 'POST', '/insights/trends', query);
  expect(res.status).toBe(200);
  return res.body.results[0].data;
};

describe('the workspace field', () => {
  test('UTC by default; set on POST, answered by GET and the list, changed by PUT, kept when PUT leaves it out', async () => {
    const plain = await createWorkspace(svc, { name: uniqueName('tz-plain') });
    expect((plain as any).timezone).toBe('UTC');
    const ws = await createWorkspace(svc, { name: uniqueName('tz-ny'), timezone: NY });
    expect((ws as any).timezone).toBe(NY);
    expect((await admin('GET', `/workspaces/${ws.workspaceId}`)).body.timezone).toBe(NY);
    expect((await admin('GET', '/workspaces?limit=1000')).body.results.find((w: any) => w.workspaceId === ws.workspaceId).timezone).toBe(NY);
    expect((await admin('PUT', `/workspaces/${ws.workspaceId}`, { name: ws.name, timezone: 'Asia/Tokyo' })).body.timezone).toBe('Asia/Tokyo');
    expect((await admin('PUT', `/workspaces/${ws.workspaceId}`, { name: ws.name })).body.timezone).toBe('Asia/Tokyo');
    expect((await as(ws, 'GET', '/whoami')).body.workspace.timezone).toBe('Asia/Tokyo');
  });

  test('a zone the engine or the runtime does not know by that exact name is 400 at /timezone, and changes nothing', async () => {
    const ws = await twoPageViews('tz-bad', NY);
    const before = await visitorsByDay(ws);
    const count = (await admin('GET', '/workspaces?limit=1000')).body.total;
    // Unknown; another spelling of a known one; one only the engine knows (Bun's Intl refuses
    // Factory, Deno's knows it); one that is no name at all.
    for (const timezone of ['Mars/Olympus_Mons', 'america/new_york', ...(SERVED_BY_DENO ? [] : ['Factory']), "UTC') --", '', 5]) {
      const put = await admin('PUT', `/workspaces/${ws.workspaceId}`, { name: ws.name, timezone });
      expect(put.status, String(timezone)).toBe(400);
      expect(put.body.errors.map((e: any) => e.pointer), String(timezone)).toEqual(['/timezone']);
      const post = await admin('POST', '/workspaces', { name: uniqueName('tz-bad-new'), timezone });
      expect(post.status, String(timezone)).toBe(400);
      expect(post.body.errors.map((e: any) => e.pointer), String(timezone)).toEqual(['/timezone']);
    }
    expect((await admin('GET', `/workspaces/${ws.workspaceId}`)).body.timezone).toBe(NY);
    expect((await admin('GET', '/workspaces?limit=1000')).body.total).toBe(count);
    expect(await visitorsByDay(ws)).toEqual(before);
  });

  // A second service over the same engine directory: one process only (a Deno service locks its own).
  testInProcess('workspaces stored before the field existed read as UTC', async () => {
    const { upgraded, database } = await serviceOverOldMetadata(svc, 15);
    try {
      const listed = (await (await upgraded.request('GET', '/workspaces', { key: upgraded.privateKey })).json()) as any;
      expect(listed.results).toEqual([expect.objectContaining({ databaseName: database, timezone: 'UTC' })]);
    } finally {
      await upgraded.stop();
    }
  });
});

describe("the Stats API counts days in the workspace's zone", () => {
  test('time:day: 03:00 UTC is the previous day in New York; in UTC both are the same day', async () => {
    const ny = await twoPageViews('tz-stats-ny', NY);
    const utc = await twoPageViews('tz-stats-utc');
    expect(await visitorsByDay(ny)).toEqual([
      { dimensions: ['2026-03-02'], metrics: [1] },
      { dimensions: ['2026-03-03'], metrics: [1] },
    ]);
    expect(await visitorsByDay(utc)).toEqual([{ dimensions: ['2026-03-03'], metrics: [2] }]);
    const oneDay = await as(ny, 'POST', '/api/v2/query', { site_id: ny.workspaceId, metrics: ['visitors'], date_range: ['2026-03-03', '2026-03-03'] });
    expect(oneDay.body.results).toEqual([{ dimensions: [], metrics: [1] }]);
    expect(oneDay.body.query.date_range).toEqual(['2026-03-03T00:00:00-05:00', '2026-03-03T23:59:59-05:00']);
  });

  test("`day` and `7d` end at New York's midnight: a page view a second before it is yesterday's", async () => {
    const ws = await createWorkspace(svc, { name: uniqueName('tz-relative'), timezone: NY });
    const parts = Object.fromEntries(new Intl.DateTimeFormat('en-US', { timeZone: NY, year: 'numeric', month: '2-digit', day: '2-digit' }).formatToParts(new Date()).map((p) => [p.type, p.value]));
    const todayInNY = `${parts.year}-${parts.month}-${parts.day}`;
    // New York's midnight today: the instant whose New York date is today, at 00:00 there.
    const offsetHours = [4, 5].find((h) => new Date(Date.parse(`${todayInNY}T00:00:00Z`) + h * 3_600_000).toLocaleString('en-US', { timeZone: NY, hourCycle: 'h23' }).includes(', 00:00:00'))!;
    const midnight = Date.parse(`${todayInNY}T00:00:00Z`) + offsetHours * 3_600_000;
    await sendEvents(svc, [page('today', new Date(midnight).toISOString()), page('yesterday', new Date(midnight - 1000).toISOString())], ws.publicApiKey);
    const ask = async (date_range: string) => (await as(ws, 'POST', '/api/v2/query', { site_id: ws.workspaceId, metrics: ['visitors'], date_range, dimensions: ['time:day'] })).body.results;
    const yesterdayInNY = new Date(midnight - 1000).toLocaleDateString('en-CA', { timeZone: NY });
    expect(await ask('day')).toEqual([{ dimensions: [todayInNY], metrics: [1] }]);
    expect(await ask('7d')).toEqual([{ dimensions: [yesterdayInNY], metrics: [1] }]);
  });

  test('PUT changing the zone changes the answers at once', async () => {
    const ws = await twoPageViews('tz-put', NY);
    expect(await visitorsByDay(ws)).toHaveLength(2);
    expect((await admin('PUT', `/workspaces/${ws.workspaceId}`, { name: ws.name, timezone: 'UTC' })).status).toBe(200);
    expect(await visitorsByDay(ws)).toEqual([{ dimensions: ['2026-03-03'], metrics: [2] }]);
  });
});

describe("insights default to the workspace's zone", () => {
  test('a trend by day without timezone counts in New York; an explicit timezone wins', async () => {
    const ny = await twoPageViews('tz-trends-ny', NY);
    expect(await trendsData(ny)).toEqual([1, 1]);
    expect(await trendsData(ny, { ...trendsByDay, timezone: 'UTC' })).toEqual([0, 2]);
    expect(await trendsData(await twoPageViews('tz-trends-utc'))).toEqual([0, 2]);
    // The persons behind New York's 2 March: the late evening's visitor.
    const persons = await as(ny, 'POST', '/insights/trends/persons', { query: trendsByDay, series: 0, label: '2026-03-02' });
    expect(persons.status).toBe(200);
    expect(persons.body.results.map((p: any) => p.personId)).toEqual(['late']);
  });

  test("a dashboard's tile follows the zone, and its kept answer is not served after the zone changes", async () => {
    const ws = await twoPageViews('tz-tile', NY);
    const insight = await as(ws, 'POST', '/insights/saved', { name: 'Views', kind: 'trends', query: trendsByDay });
    const dashboard = await as(ws, 'POST', '/dashboards', { name: 'Views', tiles: [{ insightId: insight.body.id, x: 0, y: 0, w: 6, h: 4 }] });
    const tile = async () => (await as(ws, 'GET', `/dashboards/${dashboard.body.id}/results`)).body.results[0].result.results[0].data;
    expect(await tile()).toEqual([1, 1]);
    expect(await tile()).toEqual([1, 1]);
    await admin('PUT', `/workspaces/${ws.workspaceId}`, { name: ws.name, timezone: 'UTC' });
    expect(await tile()).toEqual([0, 2]);
    await admin('PUT', `/workspaces/${ws.workspaceId}`, { name: ws.name, timezone: NY });
    expect(await tile()).toEqual([1, 1]);
  });
});
