import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { uniqueName } from '../helpers/engine-dir';
import { testInProcess } from '../helpers/deno-service';
import { createWorkspace, sendEvents, startTestService, type CreatedWorkspace, type TestService } from '../helpers/test-service';

/**
 * Known answers for who is counted (docs/web-analytics.md#visits, docs/api/insights.md#bots): a
 * crawler (Googlebot) and a headless browser (puppeteer's HeadlessChrome) are left out of the Stats
 * API, insights, persons and cohorts, and counted with `includeBots`; a backend's track after a
 * visit (no page, no browser) neither extends it nor makes one, and insights still count it. The
 * workspace has no site domain: the Stats API answers by its id.
 */

const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const GOOGLEBOT = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';
const HEADLESS = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/156.0.0.0 Safari/537.36';
const DAY = '2026-06-10';
const at = (time: string) => `${DAY}T${time}Z`;
const browser = (path: string, userAgent: string) => ({ page: { path, url: `https://bots.example${path}`, referrer: '' }, userAgent });

const EVENTS = [
  // A visitor: one page view and a search.
  { type: 'page', anonymousId: 'human', context: browser('/', CHROME), timestamp: at('10:00:00') },
  { type: 'track', event: 'Search', anonymousId: 'human', context: browser('/', CHROME), timestamp: at('10:00:10') },
  // A crawler's two page views and search, a headless browser's page view and search.
  { type: 'page', anonymousId: 'crawler', context: browser('/', GOOGLEBOT), timestamp: at('10:05:00') },
  { type: 'page', anonymousId: 'crawler', context: browser('/pricing', GOOGLEBOT), timestamp: at('10:05:01') },
  { type: 'track', event: 'Search', anonymousId: 'crawler', context: browser('/pricing', GOOGLEBOT), timestamp: at('10:05:02') },
  { type: 'page', anonymousId: 'headless', context: browser('/', HEADLESS), timestamp: at('10:07:00') },
  { type: 'track', event: 'Search', anonymousId: 'headless', context: browser('/', HEADLESS), timestamp: at('10:07:01') },
  // A visitor who signs in on one page view; the backend then tracks the upgrade twice, once by
  // the user id alone and once forwarding the browser's anonymous id: no page, no browser.
  { type: 'page', anonymousId: 'buyer-device', userId: 'buyer', context: browser('/checkout', CHROME), timestamp: at('11:00:00') },
  { type: 'track', event: 'Upgraded', userId: 'buyer', timestamp: at('11:20:00') },
  { type: 'track', event: 'Upgraded', anonymousId: 'buyer-device', userId: 'buyer', timestamp: at('11:25:00') },
];

let svc: TestService;
let ws: CreatedWorkspace;
beforeAll(async () => {
  svc = await startTestService();
  ws = await createWorkspace(svc, { name: uniqueName('bots') });
  await sendEvents(svc, EVENTS, ws.publicApiKey);
});
afterAll(() => svc?.stop());

async function call(method: string, path: string, body?: unknown) {
  const res = await svc.request(method, path, { key: ws.privateApiKey, body });
  const answer = (await res.json()) as any;
  if (res.status !== 200 && res.status !== 201) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(answer)}`);
  return answer;
}

const range = { dateFrom: `${DAY}T00:00:00Z`, dateTo: `${DAY}T23:59:59Z` };

describe('the Stats API', () => {
  test('counts the two visitors of browsers, by the workspace id and with no site domain: no robot, and the backend calls neither extend the buyer visit nor make one', async () => {
    const answer = await call('POST', '/api/v2/query', {
      site_id: ws.workspaceId,
      date_range: [DAY, DAY],
      metrics: ['visitors', 'visits', 'pageviews', 'events', 'bounce_rate', 'visit_duration'],
    });
    // human: a page view and an interactive event (10 s, no bounce); buyer: one page view (a bounce, 0 s).
    expect(answer.results).toEqual([{ metrics: [2, 2, 2, 3, 50, 5], dimensions: [] }]);
    const pages = await call('POST', '/api/v2/query', { site_id: ws.workspaceId, date_range: [DAY, DAY], metrics: ['visits'], dimensions: ['visit:device'] });
    expect(pages.results).toEqual([{ metrics: [2], dimensions: ['Desktop'] }]);
  });

  test("a workspace with site domains answers to its id and to its domains, not to another's", async () => {
    const listed = await createWorkspace(svc, { name: uniqueName('bots-site'), siteDomains: ['listed.example'] });
    const ask = (site_id: string) => svc.request('POST', '/api/v2/query', { key: listed.privateApiKey, body: { site_id, metrics: ['visitors'], date_range: [DAY, DAY] } });
    expect((await ask(listed.workspaceId)).status).toBe(200);
    expect((await ask('listed.example')).status).toBe(200);
    expect((await ask('someone-else.example')).status).toBe(401);
    expect((await ask(ws.workspaceId)).status).toBe(401);
  });
});

describe('insights', () => {
  test('page views leave the robots out unless includeBots; backend calls are counted', async () => {
    const trends = (extra: Record<string, unknown>) =>
      call('POST', '/insights/trends', { ...range, interval: 'day', series: [{ event: '$pageview' }, { event: 'Upgraded' }, { event: 'Search', math: 'persons' }], ...extra });
    const people = await trends({});
    expect(people.results.map((r: any) => r.total)).toEqual([2, 2, 1]);
    const all = await trends({ includeBots: true });
    expect(all.results.map((r: any) => r.total)).toEqual([5, 2, 3]);
  });

  test('a funnel and a retention count no robot unless includeBots', async () => {
    const funnel = (extra: Record<string, unknown>) => call('POST', '/insights/funnels', { ...range, steps: [{ event: '$pageview' }, { event: 'Search' }], ...extra });
    expect((await funnel({})).results[0].steps.map((s: any) => s.count)).toEqual([2, 1]);
    expect((await funnel({ includeBots: true })).results[0].steps.map((s: any) => s.count)).toEqual([4, 3]);
    const retention = (extra: Record<string, unknown>) =>
      call('POST', '/insights/retention', { dateTo: `${DAY}T23:59:59Z`, period: 'day', periods: 1, startEvent: { event: '$pageview' }, returnEvent: { event: '$any' }, ...extra });
    expect((await retention({})).results[0].size).toBe(2);
    expect((await retention({ includeBots: true })).results[0].size).toBe(4);
  });
});

describe('persons and cohorts', () => {
  test('GET /persons lists the two people; includeBots=true the robots too', async () => {
    const people = await call('GET', '/persons?limit=100');
    expect(people.results.map((p: any) => p.personId).sort()).toEqual(['buyer', 'human']);
    expect(people.total).toBe(2);
    const all = await call('GET', '/persons?limit=100&includeBots=true');
    expect(all.results.map((p: any) => p.personId).sort()).toEqual(['buyer', 'crawler', 'headless', 'human']);
  });

  test("a cohort of those who searched has no robot, unless it includes bots", async () => {
    const cohort = await call('POST', '/cohorts', { name: 'searched', filters: [{ performed: 'Search', withinDays: 3650 }] });
    expect([cohort.size, cohort.includeBots]).toEqual([1, false]);
    const withBots = await call('POST', '/cohorts', { name: 'searched, robots too', filters: [{ performed: 'Search', withinDays: 3650 }], includeBots: true });
    expect([withBots.size, withBots.includeBots]).toEqual([3, true]);
    expect((await call('GET', `/cohorts/${withBots.id}`)).includeBots).toBe(true);
    // As a filter: the cohort's own choice decides who is in it.
    const members = await call('GET', `/persons?limit=100&includeBots=true&cohort=${withBots.id}`);
    expect(members.results.map((p: any) => p.personId).sort()).toEqual(['crawler', 'headless', 'human']);
  });
});

describe('stored visits of an earlier definition', () => {
  // A second service over the same engine directory (as an upgrade's restart): one process only.
  testInProcess('are built again once, under the definition of today (visit_progress.definition)', async () => {
    const db = `\`${ws.databaseName}\``;
    const ask = (service: TestService) => service.request('POST', '/api/v2/query', { key: ws.privateApiKey, body: { site_id: ws.workspaceId, date_range: [DAY, DAY], metrics: ['visitors', 'visits'] } });
    expect(((await (await ask(svc)).json()) as any).results).toEqual([{ metrics: [2, 2], dimensions: [] }]);
    // As an earlier version left them: a visit the definition of today makes no more (the
    // crawler's), and progress recorded without a definition (0).
    await svc.storage.command(`INSERT INTO ${db}.visits (visitKey, anonymousId, start, end, pageviews, events, bounce, entryPage, exitPage, sign)
      VALUES ('crawler', 'crawler', '${DAY} 10:05:00', '${DAY} 10:05:02', 2, 3, 0, '/', '/pricing', 1)`);
    await svc.storage.command(`INSERT INTO ${db}.visit_progress (builtThrough, complete, historyThrough, timeoutMinutes, definition, version)
      SELECT builtThrough, complete, historyThrough, timeoutMinutes, 0, version + 1 FROM ${db}.visit_progress FINAL`);
    expect(((await (await ask(svc)).json()) as any).results).toEqual([{ metrics: [3, 3], dimensions: [] }]);
    const upgraded = await startTestService({ ...svc.settings, PORT: '0' });
    try {
      while (!(await upgraded.visits.built(ws.databaseName))) await Bun.sleep(50);
      expect(((await (await ask(upgraded)).json()) as any).results).toEqual([{ metrics: [2, 2], dimensions: [] }]);
      const [progress] = await upgraded.storage.query(`SELECT definition FROM ${db}.visit_progress FINAL`);
      expect(Number(progress!.definition)).toBe(1);
    } finally {
      await upgraded.stop();
    }
  });
});
