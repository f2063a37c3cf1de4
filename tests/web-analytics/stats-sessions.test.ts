import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { uniqueName } from '../helpers/engine-dir';
import { testInProcess } from '../helpers/deno-service';
import { createWorkspace, sendEvents, startTestService, type CreatedWorkspace, type TestService } from '../helpers/test-service';

/**
 * Visits with known answers, made by hand: the timeout's edge, bounces and non-interactive events,
 * an anonymous visitor who signs in mid-visit, a different timeout setting, and a Plausible
 * tracker's cookieless visitor (POST /api/event) counted like any other.
 */

const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const DAY_TEXT = '2026-06-10';
const at = (time: string) => `${DAY_TEXT}T${time}Z`;
const page = (path: string) => ({ page: { path, url: `https://hand.example${path}`, referrer: '' } });

const EVENTS = [
  // A: 10:00 page, 10:29:59 custom event (same visit), 10:59:59 page (exactly 30 minutes later: a new visit).
  { type: 'page', anonymousId: 'a', context: { ...page('/'), source: 'Google' }, timestamp: at('10:00:00') },
  { type: 'track', event: 'Signup', anonymousId: 'a', context: page('/'), timestamp: at('10:29:59') },
  { type: 'page', anonymousId: 'a', context: page('/pricing'), timestamp: at('10:59:59') },
  // B: one page view and a non-interactive event: a bounce.
  { type: 'page', anonymousId: 'b', context: page('/docs'), timestamp: at('11:00:00') },
  { type: 'track', event: 'Scroll', anonymousId: 'b', context: { ...page('/docs'), interactive: false }, timestamp: at('11:00:30') },
  // C: one page view and an interactive event: no bounce, 60 s.
  { type: 'page', anonymousId: 'c', context: page('/docs'), timestamp: at('12:00:00') },
  { type: 'track', event: 'Download', anonymousId: 'c', context: page('/docs'), timestamp: at('12:01:00') },
  // D: browses anonymously, signs in during the visit (an event with both ids links them): one visitor, one visit.
  { type: 'page', anonymousId: 'd-anon', context: page('/'), timestamp: at('13:00:00') },
  { type: 'page', anonymousId: 'd-anon', userId: 'd', context: page('/blog'), timestamp: at('13:10:00') },
  // (Browser SDKs keep the anonymous id after sign-in: the device's visit goes on.)
  { type: 'track', event: 'Signup', anonymousId: 'd-anon', userId: 'd', context: page('/blog'), timestamp: at('13:20:00') },
  // Identify calls make no visits.
  { type: 'identify', userId: 'e', traits: { plan: 'pro' }, timestamp: at('14:00:00') },
];

let svc: TestService;
let ws: CreatedWorkspace;
let domain: string;
beforeAll(async () => {
  svc = await startTestService({ TRUSTED_PROXIES: '127.0.0.1, ::1' });
  domain = `${uniqueName('hand').toLowerCase().replace(/_/g, '-')}.example`;
  ws = await createWorkspace(svc, { name: uniqueName('sessions'), siteDomains: [domain] });
  await sendEvents(svc, EVENTS, ws.publicApiKey);
});
afterAll(() => svc?.stop());

async function stats(body: Record<string, unknown>, service = svc, key = ws.privateApiKey) {
  const res = await service.request('POST', '/api/v2/query', { key, body: { site_id: domain, date_range: [DAY_TEXT, DAY_TEXT], ...body } });
  const answer = (await res.json()) as any;
  if (res.status !== 200) throw new Error(`${res.status}: ${JSON.stringify(answer)}`);
  return answer.results as Array<{ metrics: number[]; dimensions: string[] }>;
}

describe('visits made by hand', () => {
  test('visitors, visits, page views, events, bounce rate, duration and views per visit', async () => {
    // Visits: A1 (0-1799 s, 1 page + interactive event), A2 (0 s, bounce), B (30 s, bounce), C (60 s), D (1200 s, 2 pages).
    const results = await stats({ metrics: ['visitors', 'visits', 'pageviews', 'events', 'bounce_rate', 'visit_duration', 'views_per_visit'] });
    const bounce = Math.round((2 / 5) * 100);
    const duration = Math.round((1799 + 0 + 30 + 60 + 1200) / 5);
    expect(results).toEqual([{ metrics: [4, 5, 6, 10, bounce, duration, 1.2], dimensions: [] }]);
  });

  test('entry and exit pages', async () => {
    const results = await stats({ metrics: ['visits'], dimensions: ['visit:entry_page', 'visit:exit_page'] });
    expect(results).toEqual([
      { metrics: [2], dimensions: ['/docs', '/docs'] },
      { metrics: [1], dimensions: ['/', '/'] },
      { metrics: [1], dimensions: ['/', '/blog'] },
      { metrics: [1], dimensions: ['/pricing', '/pricing'] },
    ]);
  });

  test('sources come from the first event of a visit', async () => {
    const results = await stats({ metrics: ['visits'], dimensions: ['visit:source'] });
    expect(results).toEqual([
      { metrics: [4], dimensions: ['Direct / None'] },
      { metrics: [1], dimensions: ['Google'] },
    ]);
  });

  test('goals and their conversion rate', async () => {
    const results = await stats({ metrics: ['visitors', 'events', 'conversion_rate'], dimensions: ['event:goal'] });
    expect(results).toEqual([
      { metrics: [2, 2, 50], dimensions: ['Signup'] },
      { metrics: [1, 1, 25], dimensions: ['Download'] },
      { metrics: [1, 1, 25], dimensions: ['Scroll'] },
    ]);
  });

  // A second service over the same engine directory: one process only (a Deno service locks its own).
  testInProcess('a longer timeout (SESSION_TIMEOUT_MINUTES=60) joins A\'s two visits, the stored visits built again with it', async () => {
    const other = await startTestService({ ...svc.settings, SESSION_TIMEOUT_MINUTES: '60', PORT: '0' });
    try {
      const expected = [4, Math.round((3599 + 30 + 60 + 1200) / 4)];
      // Answered from events while the stored visits are built again with the new timeout, then from them.
      expect((await stats({ metrics: ['visits', 'visit_duration'] }, other))[0]!.metrics).toEqual(expected);
      while (!(await other.visits.built(ws.databaseName))) await Bun.sleep(50);
      expect((await stats({ metrics: ['visits', 'visit_duration'] }, other))[0]!.metrics).toEqual(expected);
    } finally {
      await other.stop();
    }
  });
});

test("a new workspace's first events are answered from its stored visits at once: a visit across midnight counts whole on the day after", async () => {
  const site = `${uniqueName('midnight').toLowerCase().replace(/_/g, '-')}.example`;
  const fresh = await createWorkspace(svc, { name: uniqueName('midnight'), siteDomains: [site] });
  await sendEvents(svc, [
    { type: 'page', anonymousId: 'm', context: page('/late'), timestamp: at('23:55:00') },
    { type: 'page', anonymousId: 'm', context: page('/later'), timestamp: '2026-06-11T00:05:00Z' },
  ], fresh.publicApiKey);
  // Cut at midnight, the day after would hold a bounce of 0 s (how events were read before stored visits).
  const results = await stats({ site_id: site, metrics: ['visits', 'pageviews', 'bounce_rate', 'visit_duration'], date_range: ['2026-06-11', '2026-06-11'] }, svc, fresh.privateApiKey);
  expect(results).toEqual([{ metrics: [1, 1, 0, 600], dimensions: [] }]);
});

describe("a Plausible tracker's visitor", () => {
  test('pageviews sent to POST /api/event are visits and visitors of the site', async () => {
    const send = (name: string, url: string, props: Record<string, unknown> = {}) =>
      fetch(`${svc.url}/api/event`, { method: 'POST', headers: { 'content-type': 'text/plain', 'user-agent': CHROME, 'x-forwarded-for': '8.8.8.8' }, body: JSON.stringify({ name, url, domain, referrer: 'https://news.ycombinator.com/item?id=1', props }) });
    const now = Date.now();
    expect((await send('pageview', `https://${domain}/landing?utm_source=hn`)).status).toBe(202);
    expect((await send('pageview', `https://${domain}/next`)).status).toBe(202);
    expect((await send('Signup', `https://${domain}/next`)).status).toBe(202);
    const today = new Date(now).toISOString().slice(0, 10);
    const results = await stats({ metrics: ['visitors', 'visits', 'pageviews', 'events', 'bounce_rate'], date_range: [today, today] });
    expect(results).toEqual([{ metrics: [1, 1, 2, 3, 0], dimensions: [] }]);
    const pages = await stats({ metrics: ['visitors'], date_range: [today, today], dimensions: ['visit:entry_page', 'visit:country'] });
    expect(pages).toEqual([{ metrics: [1], dimensions: ['/landing', 'US'] }]);
  });
});
