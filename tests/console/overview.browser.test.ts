import { afterAll, beforeAll, expect, test } from 'bun:test';
import type { Page } from 'puppeteer-core';
import { describeInChromium, launchChromium, type Chromium } from '../helpers/chromium';
import { clearOfMidnight } from '../helpers/clear-of-midnight';
import { consoleMoves, offlinePage, signedInConsole, type PageFaults } from '../helpers/console-page';
import { uniqueName } from '../helpers/engine-dir';
import { eventually } from '../helpers/eventually';
import { overviewWaits } from '../helpers/overview-page';
import { createWorkspace, sendEvents, startTestService, type CreatedWorkspace, type TestService } from '../helpers/test-service';

/**
 * The overview screen (console/src/views/overview) in headless Chromium with every host but the
 * service blocked: visits with known countries, browsers, sources and pages are sent with the
 * context the service's enrichment stores, and every number the screen shows is compared with
 * the answer of Plausible's Stats API v2 (POST /api/v2/query) to the same question, which is the
 * only thing the screen asks. A country row filters the whole screen; the previous period is
 * beside each number; the live count is the last five minutes' visitors.
 */
declare const document: any;
declare const location: { hash: string };

const SITE = 'shop.example';
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const METRICS = ['visitors', 'visits', 'pageviews', 'views_per_visit', 'bounce_rate', 'visit_duration'];

interface Visit {
  visitor: string;
  /** How long ago the visit began. */
  at: number;
  pages: string[];
  /** Between two page views of the visit. */
  gap?: number;
  country: string;
  browser: string;
  os: string;
  device: 'desktop' | 'mobile' | 'tablet';
  source?: string;
  referrer?: string;
  campaign?: { source: string; medium: string; name: string };
}

/** A visit's page events, with the context fields the service's enrichment stores. */
function pageEvents(visit: Visit, now: number): unknown[] {
  return visit.pages.map((path, i) => {
    const search = visit.campaign && i === 0 ? `?utm_source=${visit.campaign.source}&utm_medium=${visit.campaign.medium}&utm_campaign=${visit.campaign.name}` : '';
    return {
      type: 'page',
      anonymousId: visit.visitor,
      properties: { path },
      context: {
        page: { url: `https://${SITE}${path}${search}`, path, referrer: i === 0 ? (visit.referrer ?? '') : `https://${SITE}${visit.pages[i - 1]}`, search },
        location: { country: visit.country },
        browser: { name: visit.browser },
        os: { name: visit.os },
        device: { type: visit.device },
        ...(visit.source ? { source: visit.source } : {}),
        ...(visit.campaign ? { campaign: visit.campaign } : {}),
      },
      timestamp: new Date(now - visit.at + i * (visit.gap ?? MINUTE)).toISOString(),
    };
  });
}

const google = { source: 'Google', referrer: 'https://www.google.com/' };
/** Five visitors this week (one of them twice), three the week before, two on the site now. */
const VISITS: Visit[] = [
  { visitor: 'v1', at: 1 * DAY + 2 * HOUR, pages: ['/', '/pricing', '/signup'], gap: 2 * MINUTE, country: 'DE', browser: 'Chrome', os: 'Windows', device: 'desktop', ...google },
  { visitor: 'v1', at: 3 * DAY, pages: ['/pricing'], country: 'DE', browser: 'Chrome', os: 'Windows', device: 'desktop' },
  { visitor: 'v2', at: 2 * DAY, pages: ['/'], country: 'DE', browser: 'Safari', os: 'iOS', device: 'mobile' },
  { visitor: 'v3', at: 3 * DAY + HOUR, pages: ['/blog/launch', '/pricing'], country: 'US', browser: 'Firefox', os: 'Linux', device: 'desktop', campaign: { source: 'newsletter', medium: 'email', name: 'launch' } },
  { visitor: 'v4', at: 4 * DAY, pages: ['/blog/launch'], country: 'FR', browser: 'Chrome', os: 'Android', device: 'mobile', source: 'Twitter', referrer: 'https://t.co/abc' },
  { visitor: 'v5', at: 5 * DAY, pages: ['/', '/docs'], gap: 3 * MINUTE, country: 'US', browser: 'Chrome', os: 'Mac OS', device: 'desktop', ...google },
  { visitor: 'p1', at: 8 * DAY, pages: ['/'], country: 'DE', browser: 'Chrome', os: 'Windows', device: 'desktop' },
  { visitor: 'p2', at: 9 * DAY, pages: ['/', '/pricing'], country: 'GB', browser: 'Firefox', os: 'Windows', device: 'desktop', ...google },
  { visitor: 'p3', at: 10 * DAY, pages: ['/docs'], country: 'DE', browser: 'Edge', os: 'Windows', device: 'desktop' },
  { visitor: 'now-1', at: 2 * MINUTE, pages: ['/'], country: 'NL', browser: 'Chrome', os: 'Windows', device: 'desktop' },
  { visitor: 'now-2', at: MINUTE, pages: ['/pricing'], country: 'DE', browser: 'Safari', os: 'Mac OS', device: 'desktop' },
];

const isoDay = (t: number) => new Date(t).toISOString().slice(0, 10);
/** A day `n` days before today (UTC, the test service's time zone). */
const day = (n: number) => isoDay(Date.now() - n * DAY);
/**
 * The screen's "Last 7 days", asked as Plausible's shortcut (the 7 whole days ending yesterday),
 * and the 7 days before, asked as a pair of dates.
 */
function weeks(): { current: string; previous: [string, string] } {
  return { current: '7d', previous: [day(14), day(8)] };
}

// The visitors on the site now are today's, and the periods are whole UTC days: the file runs
// clear of midnight (CI failed it at 00:0x, when those visitors were yesterday's).
await clearOfMidnight();

describeInChromium('the overview screen', () => {
  let svc: TestService;
  let ws: CreatedWorkspace;
  let chromium: Chromium;
  let page: Page;
  let faults: PageFaults;
  let moves: ReturnType<typeof consoleMoves>;
  /** What the page asked the service for, in order. */
  const requests: Array<{ method: string; path: string; body?: any }> = [];

  /** The Stats API's answer, as the test asks it. */
  const query = async (body: Record<string, unknown>) => {
    const res = await svc.request('POST', '/api/v2/query', { key: ws.privateApiKey, body: { site_id: SITE, ...body } });
    if (!res.ok) throw new Error(`POST /api/v2/query answered ${res.status}: ${await res.text()}`);
    return (await res.json()) as { results: Array<{ metrics: Array<number | null>; dimensions: string[] }> };
  };
  const totals = async (dateRange: string | [string, string], filters: unknown[] = []) => {
    const row = (await query({ metrics: METRICS, date_range: dateRange, filters })).results[0];
    return Object.fromEntries(METRICS.map((m, i) => [m, row ? (row.metrics[i] ?? null) : 0]));
  };
  /** What the screen shows: each number's value and the previous period's, as numbers. */
  const shown = () =>
    page.$$eval('.ov-number', (els) =>
      Object.fromEntries(els.map((e: any) => [e.dataset.metric, { value: e.dataset.value === '' ? null : Number(e.dataset.value), previous: e.dataset.previous === '' ? null : Number(e.dataset.previous), text: e.textContent }])),
    );
  const loaded = (filters = '') => overviewWaits(page).loaded(filters);
  const settled = () => overviewWaits(page).settled();

  beforeAll(async () => {
    svc = await startTestService();
    ws = await createWorkspace(svc, { name: uniqueName('overview'), siteDomains: [SITE] });
    const now = Date.now();
    await sendEvents(svc, VISITS.flatMap((v) => pageEvents(v, now)), ws.publicApiKey);
    chromium = await launchChromium();
    ({ page, faults } = await offlinePage(chromium, svc.url));
    page.on('request', (r) => {
      const path = r.url().replace(svc.url, '');
      if (path.startsWith('/console')) return;
      let body: unknown;
      try {
        body = r.postData() ? JSON.parse(r.postData()!) : undefined;
      } catch {}
      requests.push({ method: r.method(), path, body });
    });
    await page.emulateMediaFeatures([{ name: 'prefers-color-scheme', value: 'light' }]);
    moves = consoleMoves(page);
    await page.goto(`${svc.url}/console`);
    await moves.signInWith(ws.privateApiKey);
    await page.waitForSelector('.status-live');
    // The live page, opened first, reads the last stored events once its stream is open: that
    // read is waited for here, so that no test counts it among the overview's requests.
    await eventually('the live page read the last events', async () => requests.some((r) => r.method === 'GET' && r.path.startsWith('/events?')));
  });
  afterAll(async () => {
    await chromium?.close();
    await svc?.stop();
  });

  test("the numbers, with the previous period's beside them, are the Stats API's answers; the chart and panels too; only the Stats API is asked", async () => {
    const before = requests.length;
    await moves.go('overview?period=7d');
    await loaded();
    const { current, previous } = weeks();
    const [now, then] = [await totals(current), await totals(previous)];
    const numbers = await shown();
    for (const metric of METRICS) {
      expect({ metric, value: numbers[metric]!.value }).toEqual({ metric, value: now[metric] });
      expect({ metric, previous: numbers[metric]!.previous }).toEqual({ metric, previous: then[metric] });
    }
    // The visits sent: 5 visitors in the last 7 days (the 2 on the site now are today's); 3 the week before.
    expect(now.visitors).toBe(5);
    expect(now.visits).toBe(6);
    expect(now.pageviews).toBe(10);
    expect(then.visitors).toBe(3);
    expect(then.pageviews).toBe(4);
    expect(numbers.visitors!.text).toContain('Unique visitors');
    expect(await page.$eval('.ov-zone .zone-note', (e: any) => e.textContent)).toBe('Times in UTC');
    // 5 against 3: up 67%.
    expect(await page.$eval('.ov-number[data-metric="visitors"] .ov-change', (e: any) => [e.textContent, e.dataset.direction])).toEqual(['↑67%', 'up']);
    expect(await page.$eval('.ov-number[data-metric="visitors"] .ov-number-previous', (e: any) => e.textContent)).toBe('vs 3');
    if (now.visit_duration !== null && Number(now.visit_duration) >= 60) expect(numbers.visit_duration!.text).toMatch(/\dm \d\ds/);

    // The chart: visitors per day, as the API counts them by time:day.
    const byDay = await query({ metrics: ['visitors'], date_range: current, dimensions: ['time:day'] });
    const expected = Array.from({ length: 7 }, (_, i) => Number(byDay.results.find((r) => r.dimensions[0]?.slice(0, 10) === day(7 - i))?.metrics[0] ?? 0));
    await page.waitForSelector('.ov-chart[data-metric="visitors"] canvas');
    expect(await page.$eval('.ov-chart', (e: any) => e.dataset.points)).toBe(expected.join(','));

    // A panel: countries, as the API ranks them.
    const countries = await query({ metrics: ['visitors'], date_range: current, dimensions: ['visit:country'], order_by: [['visitors', 'desc']], pagination: { limit: 9 } });
    await page.waitForSelector('.ov-row[data-dimension="visit:country"]');
    const rows = await page.$$eval('.ov-row[data-dimension="visit:country"]', (els) => els.map((e: any) => [e.dataset.value, Number(e.dataset.count)]));
    expect(rows).toEqual(countries.results.map((r) => [r.dimensions[0], r.metrics[0]]));
    expect(rows[0]).toEqual(['DE', 2]);
    expect(await page.$eval('.ov-row[data-value="DE"] .ov-row-label', (e: any) => e.textContent)).toBe('Germany');
    // Each country's flag an image (country-flag-icons), drawn: no emoji font is needed.
    await page.waitForFunction(() => [...document.querySelectorAll('.ov-row[data-dimension="visit:country"] img.ov-flag')].every((i: any) => i.complete && i.naturalWidth > 0));
    expect(await page.$$eval('.ov-row[data-dimension="visit:country"] img.ov-flag', (els) => els.map((i: any) => i.src.replace(/.*\/flag-[0-9a-f]+-/, '')))).toEqual(rows.map(([code]) => `${code}.svg`));

    // Another number charted: its points follow.
    await page.click('.ov-number[data-metric="pageviews"]');
    await page.waitForSelector('.ov-chart[data-metric="pageviews"] canvas');
    expect(await page.$eval('.ov-number[data-metric="pageviews"]', (e: any) => e.getAttribute('aria-selected'))).toBe('true');
    await page.click('.ov-number[data-metric="visitors"]');
    await page.waitForSelector('.ov-chart[data-metric="visitors"] canvas');

    // What the screen asked: the workspace, then Plausible's Stats API only, with the documented request shape.
    const asked = requests.slice(before);
    expect([...new Set(asked.map((r) => `${r.method} ${r.path}`))].sort()).toEqual(['GET /whoami', 'POST /api/v2/query']);
    for (const r of asked.filter((x) => x.method === 'POST')) expect(r.body.site_id).toBe(SITE);
    expect(asked.some((r) => r.body?.dimensions?.[0] === 'visit:country' && r.body.pagination?.limit === 9)).toBe(true);

    await page.setViewport({ width: 1280, height: 1180 });
    await settled();
    await moves.shot('overview');
    await page.setViewport({ width: 1280, height: 800 });
  });

  test('a country row filters the whole screen: a removable chip, every number and panel asked again with the filter', async () => {
    const { current, previous } = weeks();
    await page.click('.ov-row[data-dimension="visit:country"][data-value="DE"]');
    await page.waitForSelector('.ov-chip[data-dimension="visit:country"][data-value="DE"]');
    expect(await page.$eval('.ov-chip', (e: any) => e.textContent)).toContain('Country isGermany');
    expect(await page.$eval('.ov-chip img.ov-flag', (i: any) => i.src)).toMatch(/\/console\/assets\/flag-[0-9a-f]+-DE\.svg$/);
    await loaded('visit:country=DE');
    const filter = [['is', 'visit:country', ['DE']]];
    const [now, then] = [await totals(current, filter), await totals(previous, filter)];
    const numbers = await shown();
    for (const metric of METRICS) {
      expect({ metric, value: numbers[metric]!.value }).toEqual({ metric, value: now[metric] });
      expect({ metric, previous: numbers[metric]!.previous }).toEqual({ metric, previous: then[metric] });
    }
    // v1 and v2 this week; p1 and p3 the week before: no change.
    expect(now.visitors).toBe(2);
    expect(then.visitors).toBe(2);
    expect(await page.$eval('.ov-number[data-metric="visitors"] .ov-change', (e: any) => [e.textContent, e.dataset.direction])).toEqual(['0%', 'flat']);
    // The panels too: only Germany is left among the countries, and the browsers are Germany's.
    await page.waitForFunction(() => [...document.querySelectorAll('.ov-row[data-dimension="visit:country"]')].map((e: any) => e.dataset.value).join() === 'DE');
    const browsers = await query({ metrics: ['visitors'], date_range: current, dimensions: ['visit:browser'], filters: filter, order_by: [['visitors', 'desc']], pagination: { limit: 9 } });
    await page.waitForFunction(
      (want: string) => [...document.querySelectorAll('.ov-row[data-dimension="visit:browser"]')].map((e: any) => `${e.dataset.value}:${e.dataset.count}`).join() === want,
      { timeout: 10_000 },
      browsers.results.map((r) => `${r.dimensions[0]}:${r.metrics[0]}`).join(),
    );
    expect(await page.evaluate(() => location.hash)).toContain('f=visit%3Acountry%3DDE');

    // A second filter, from another panel: both chips, both filters asked.
    await page.click('.ov-tab[data-dimension="visit:device"]');
    // Plausible's device names: Desktop, Mobile, Tablet.
    await page.waitForSelector('.ov-row[data-dimension="visit:device"][data-value="Desktop"]');
    await page.click('.ov-row[data-dimension="visit:device"][data-value="Desktop"]');
    await loaded('visit:country=DE&visit:device=Desktop');
    expect(await page.$$eval('.ov-chip', (els) => els.map((e: any) => e.dataset.dimension))).toEqual(['visit:country', 'visit:device']);
    const both = await totals(current, [...filter, ['is', 'visit:device', ['Desktop']]]);
    expect((await shown()).visitors!.value).toBe(both.visitors as number);
    await page.setViewport({ width: 1280, height: 1180 });
    await settled();
    await moves.shot('overview-filtered');
    await page.setViewport({ width: 1280, height: 800 });

    // Removed, one at a time: the screen is back to the whole week.
    await page.click('.ov-chip[data-dimension="visit:device"] .ov-chip-remove');
    await loaded('visit:country=DE');
    await page.click('.ov-chip[data-dimension="visit:country"] .ov-chip-remove');
    await loaded('');
    expect(await page.$$('.ov-chip')).toHaveLength(0);
    expect((await shown()).visitors!.value).toBe((await totals(current)).visitors as number);
  });

  test('live visitors: the last five minutes, from the same API', async () => {
    await page.waitForSelector('.ov-live[data-value]');
    const live = Number(await page.$eval('.ov-live', (e: any) => e.dataset.value));
    const end = new Date();
    const asked = requests.filter((r) => r.path === '/api/v2/query' && Array.isArray(r.body?.date_range) && String(r.body.date_range[0]).includes('T'));
    expect(asked.length).toBeGreaterThan(0);
    const last = asked.at(-1)!.body;
    expect(last.metrics).toEqual(['visitors']);
    expect(Date.parse(last.date_range[1]) - Date.parse(last.date_range[0])).toBe(5 * MINUTE);
    const answer = await query({ metrics: ['visitors'], date_range: [new Date(end.getTime() - 5 * MINUTE).toISOString().slice(0, 19) + '+00:00', end.toISOString().slice(0, 19) + '+00:00'] });
    expect(live).toBe(Number(answer.results[0]?.metrics[0] ?? 0));
    expect(live).toBe(2);
    expect(await page.$eval('.ov-live', (e: any) => e.textContent)).toBe('2 current visitors');
  });

  test('other periods: the date range picker asks for the range and the one before it', async () => {
    const before = requests.length;
    await page.select('.ov-period', '30d');
    await page.waitForFunction((from: string) => document.querySelector('.overview')?.dataset.loaded?.startsWith(from), {}, day(30));
    const asked = requests.slice(before).filter((r) => r.body?.metrics?.length === 6).map((r) => r.body.date_range);
    expect(asked).toContainEqual('30d');
    expect(asked).toContainEqual([day(60), day(31)]);
    const numbers = await shown();
    expect(numbers.visitors!.value).toBe(8);
    expect(numbers.visitors!.previous).toBe(0);
    expect(await page.$eval('.ov-number[data-metric="visitors"] .ov-change', (e: any) => e.textContent)).toBe('new');

    await page.select('.ov-period', 'custom');
    await page.$eval('.ov-custom input[name="from"]', (i: any, v: string) => (i.value = v), day(13));
    await page.$eval('.ov-custom input[name="to"]', (i: any, v: string) => (i.value = v), day(7));
    await moves.press('Apply', '.ov-custom');
    await page.waitForFunction((from: string) => document.querySelector('.overview')?.dataset.loaded?.startsWith(from), {}, day(13));
    expect((await shown()).visitors!.value).toBe(3);
    expect(await page.evaluate(() => location.hash)).toContain(`from=${day(13)}`);
    await page.select('.ov-period', '7d');
    await page.waitForFunction((from: string) => document.querySelector('.overview')?.dataset.loaded === `${from}/`, {}, `${day(7)}/${day(1)}`);
    await settled();
    // The last 7 days end yesterday: every bucket is over.
    expect(await page.$eval('.ov-chart .period-chart', (e: any) => e.dataset.incompleteFrom ?? null)).toBeNull();
  });

  test("today by the hour: the hour not over is drawn apart from where the Stats API's present_index says", async () => {
    await page.select('.ov-period', 'today');
    await page.waitForFunction(() => document.querySelector('.ov-chart .period-chart[data-incomplete-from]'), { timeout: 20_000 });
    await settled();
    const asked = requests.filter((r) => r.body?.dimensions?.[0] === 'time:hour').at(-1)!.body;
    expect(asked.include).toEqual({ time_labels: true, partial_time_labels: true, present_index: true });
    expect(await page.$eval('.ov-chart .period-chart', (e: any) => e.dataset.incompleteFrom)).toBe(String(new Date().getUTCHours()));
    await moves.shot('overview-today');
    await page.select('.ov-period', '7d');
    await settled();
  });

  test('dark and phone size', async () => {
    await page.emulateMediaFeatures([{ name: 'prefers-color-scheme', value: 'dark' }]);
    await page.setViewport({ width: 1280, height: 1180 });
    await settled();
    await moves.shot('overview-dark');
    await page.emulateMediaFeatures([{ name: 'prefers-color-scheme', value: 'light' }]);
    await page.setViewport({ width: 390, height: 844 });
    await settled();
    // Narrow: the panels stack, one a row.
    const lefts = await page.$$eval('.ov-panel', (els) => els.map((e: any) => Math.round(e.getBoundingClientRect().left)));
    expect(new Set(lefts).size).toBe(1);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await page.$eval('.overview', (e: any) => e.scrollIntoView());
    await moves.shot('overview-phone');
    await page.setViewport({ width: 1280, height: 800 });
  });

  test('a new user: a workspace without a site domain has its overview (its events are its site); an admin adds domains on the Workspaces page; a site without visits is told how to send them', async () => {
    const bare = await createWorkspace(svc, { name: uniqueName('no-site'), timezone: 'Asia/Kolkata' });
    const quiet = await createWorkspace(svc, { name: uniqueName('quiet'), siteDomains: ['quiet.example'] });
    const { page: other, faults: otherFaults } = await offlinePage(chromium, svc.url);
    const otherMoves = consoleMoves(other);
    await other.goto(`${svc.url}/console`);
    await otherMoves.signInWith(bare.privateApiKey);
    await other.waitForSelector('.status-live');
    await otherMoves.go('overview');
    // No domain asked for: the overview answers at once, by the workspace's id, and offers this service's script.
    await otherMoves.waitForText('.ov-empty', 'No visits in this period yet');
    expect(await other.$eval('.ov-empty', (e: any) => e.textContent)).toContain('data-key="PUBLIC_KEY"');
    expect(await other.$eval('.ov-number[data-metric="visitors"]', (e: any) => e.dataset.value)).toBe('0');
    expect(await other.$('.ov-site-select')).toBeNull();
    // Its days are Kolkata's (the Stats API counts in the workspace's zone): the header says so.
    expect(await other.$eval('.ov-zone .zone-note', (e: any) => e.textContent)).toBe('Times in Asia/Kolkata');
    await other.waitForFunction(() => !document.querySelector('.overview [aria-busy], .overview[aria-busy]'));
    await otherMoves.shot('overview-no-domain');
    await otherMoves.press('Sign out');
    // An admin gives it a site on the Workspaces page (Edit, Sites); the overview then reads it.
    await otherMoves.signInWith(svc.privateKey);
    await other.waitForSelector('a.nav-link.active');
    await otherMoves.go('workspaces');
    await otherMoves.press('Edit', `tr[data-name="${bare.name}"]`);
    await other.waitForSelector('dialog[open] input[name="siteDomains"]');
    expect(await other.$eval('dialog[open] input[name="siteDomains"]', (i: any) => i.value)).toBe('');
    await other.type('dialog[open] input[name="siteDomains"]', 'bare.example, www.bare.example');
    await otherMoves.press('Save', 'dialog[open]');
    await otherMoves.waitForText('.notice', 'Saved');
    const edited = (await (await svc.request('GET', `/workspaces/${bare.workspaceId}`, { key: svc.privateKey })).json()) as { siteDomains: string[] };
    expect(edited.siteDomains).toEqual(['bare.example', 'www.bare.example']);
    await otherMoves.press('Sign out');
    await otherMoves.signInWith(bare.privateApiKey);
    await other.waitForSelector('a.nav-link.active');
    await otherMoves.go('overview');
    await other.waitForSelector('.ov-site-select');
    expect(await other.$$eval('.ov-site-select option', (els) => els.map((e: any) => e.value))).toEqual(['bare.example', 'www.bare.example']);
    await otherMoves.press('Sign out');
    await otherMoves.signInWith(quiet.privateApiKey);
    // Signed in again, the console reopens the page it was on: the overview.
    await other.waitForSelector('a.nav-link.active');
    await otherMoves.go('overview');
    await otherMoves.waitForText('.ov-empty', 'No visits in this period yet');
    expect(await other.$eval('.ov-empty', (e: any) => e.textContent)).toContain("init({ domain: 'quiet.example'");
    expect(await other.$eval('.ov-number[data-metric="visitors"]', (e: any) => e.dataset.value)).toBe('0');
    await otherMoves.waitForText('.ov-panel[data-panel="locations"] .ov-panel-empty', 'Nothing in this period yet');
    await other.waitForFunction(() => !document.querySelector('.overview [aria-busy], .overview[aria-busy]'));
    await otherMoves.shot('overview-empty');
    // The last 30 days end yesterday: the notice offers today, where a new site's first visits are.
    await otherMoves.press('Show today', '.ov-empty');
    await other.waitForFunction((d: string) => document.querySelector('.overview')?.dataset.loaded === `${d}/${d}/`, {}, day(0));
    expect(await other.$eval('.ov-period', (e: any) => e.value)).toBe('today');
    expect(await other.evaluate(() => location.hash)).toContain('period=today');
    await other.close();
    expect(otherFaults).toEqual({ blocked: [], errors: [] });
    expect(faults).toEqual({ blocked: [], errors: [] });
  });

  test('another page chosen just as the overview reads its workspace opens that page, not the overview again', async () => {
    const { page: leaving, faults: leavingFaults } = await signedInConsole(chromium, svc.url, ws.privateApiKey);
    // The race CI met under load, made certain: the user picks the SQL page (its hashchange is
    // queued) in the very turn the overview's read of its workspace is answered, so the overview
    // handles that answer before the shell handles the hashchange.
    await leaving.evaluate(() => {
      const json = Response.prototype.json;
      Response.prototype.json = async function (this: Response) {
        const value = await json.call(this);
        if (this.url.endsWith('/whoami') && location.hash.startsWith('#/overview')) {
          Response.prototype.json = json;
          location.hash = '#/sql';
        }
        return value;
      };
    });
    // Opened by its address: the overview is left at once, too soon for a wait for its link.
    await leaving.evaluate(() => (location.hash = '#/overview'));
    await leaving.waitForSelector('a.nav-link.active[data-path="sql"]', { timeout: 10_000 });
    expect(await leaving.evaluate(() => location.hash)).toBe('#/sql');
    await leaving.close();
    expect(leavingFaults).toEqual({ blocked: [], errors: [] });
  });
});
