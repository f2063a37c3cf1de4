import { afterAll, beforeAll, expect, test } from 'bun:test';
import type { Page } from 'puppeteer-core';
import { describeInChromium, launchChromium, type Chromium } from '../helpers/chromium';
import { consoleMoves, offlinePage, type PageFaults } from '../helpers/console-page';
import { uniqueName } from '../helpers/engine-dir';
import { overviewWaits } from '../helpers/overview-page';
import { createWorkspace, sendEvents, startTestService, type CreatedWorkspace, type TestService } from '../helpers/test-service';

/**
 * The overview's goals panel, its panels' details, its comparisons with a previous period that
 * had no visits, and its last 12 months, in headless Chromium, each checked against the answer of
 * the Stats API (POST /api/v2/query) to the same question. The site is two days old: twelve
 * visitors, each on a page of their own, four of them converting on custom events, nothing before.
 */
declare const document: any;

const SITE = 'goals.example';
const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;
const PAGES = Array.from({ length: 12 }, (_, i) => `/p${i + 1}`);
/** Who converts on what: one visitor signs up twice. */
const GOALS: Array<[string, string]> = [
  ['v1', 'Signed Up'],
  ['v1', 'Signed Up'],
  ['v2', 'Signed Up'],
  ['v3', 'Signed Up'],
  ['v4', 'Purchase'],
];

function events(now: number): unknown[] {
  const context = (path: string) => ({ page: { url: `https://${SITE}${path}`, path, referrer: '' }, location: { country: 'DE' } });
  // Two pages a visitor for the first eight (no bounces), one for the rest (bounces): a bounce rate.
  const visits = PAGES.flatMap((path, i) => {
    const at = now - (1 + (i % 2)) * DAY - i * 10 * MINUTE;
    const pages = i < 8 ? [path, '/pricing'] : [path];
    return pages.map((p, j) => ({ type: 'page', anonymousId: `v${i + 1}`, properties: { path: p }, context: context(p), timestamp: new Date(at + j * MINUTE).toISOString() }));
  });
  const goals = GOALS.map(([visitor, event], j) => {
    const i = Number(visitor.slice(1)) - 1;
    const at = now - (1 + (i % 2)) * DAY - i * 10 * MINUTE + (2 + j) * 10_000;
    return { type: 'track', event, anonymousId: visitor, context: context(PAGES[i]!), timestamp: new Date(at).toISOString() };
  });
  return [...visits, ...goals];
}

const iso = (d: Date) => d.toISOString().slice(0, 10);
/** The first and last days of the twelve months up to this one (UTC, the test service's zone). */
function twelveMonths(): [string, string] {
  const now = new Date();
  return [iso(new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 11, 1))), iso(new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 0)))];
}

describeInChromium('the overview: goals, details, comparisons, 12 months', () => {
  let svc: TestService;
  let ws: CreatedWorkspace;
  let chromium: Chromium;
  let page: Page;
  let faults: PageFaults;
  let moves: ReturnType<typeof consoleMoves>;

  const query = async (body: Record<string, unknown>) => {
    const res = await svc.request('POST', '/api/v2/query', { key: ws.privateApiKey, body: { site_id: SITE, ...body } });
    if (!res.ok) throw new Error(`POST /api/v2/query answered ${res.status}: ${await res.text()}`);
    return (await res.json()) as { results: Array<{ metrics: Array<number | null>; dimensions: string[] }>; meta: Record<string, unknown> };
  };
  const loaded = (filters = '') => overviewWaits(page).loaded(filters);
  const settled = () => overviewWaits(page).settled();

  beforeAll(async () => {
    svc = await startTestService();
    ws = await createWorkspace(svc, { name: uniqueName('goals'), siteDomains: [SITE] });
    await sendEvents(svc, events(Date.now()), ws.publicApiKey);
    chromium = await launchChromium();
    ({ page, faults } = await offlinePage(chromium, svc.url));
    await page.emulateMediaFeatures([{ name: 'prefers-color-scheme', value: 'light' }]);
    await page.setViewport({ width: 1440, height: 900 });
    moves = consoleMoves(page);
    await page.goto(`${svc.url}/console`);
    await moves.signInWith(ws.privateApiKey);
    await page.waitForSelector('a.nav-link.active');
  });
  afterAll(async () => {
    await chromium?.close();
    await svc?.stop();
  });

  test("the goals panel: each custom event's unique and total conversions and conversion rate, as the Stats API's event:goal breakdown answers them", async () => {
    await moves.go('overview?period=7d');
    await loaded();
    const answer = await query({ metrics: ['visitors', 'events', 'conversion_rate'], date_range: '7d', dimensions: ['event:goal'], order_by: [['visitors', 'desc']], pagination: { limit: 9 } });
    await page.waitForSelector('.ov-panel[data-panel="goals"] .ov-row');
    const rows = await page.$$eval('.ov-panel[data-panel="goals"] .ov-row', (els) => els.map((e: any) => [e.dataset.value, ...[...e.querySelectorAll('.ov-row-count')].map((c: any) => c.textContent)]));
    // The rate as the screen rounds it, to a tenth of a point.
    expect(rows).toEqual(answer.results.map((r) => [r.dimensions[0], String(r.metrics[0]), String(r.metrics[1]), `${Math.round(Number(r.metrics[2]) * 10) / 10}%`]));
    // Three visitors signed up (one twice) of twelve: 25%; one purchased.
    expect(rows).toEqual([
      ['Signed Up', '3', '4', '25%'],
      ['Purchase', '1', '1', '8.3%'],
    ]);
    expect(await page.$$eval('.ov-panel[data-panel="goals"] .ov-panel-columns > span:first-child, .ov-panel[data-panel="goals"] .ov-panel-columns .ov-row-count', (els) => els.map((e: any) => e.textContent))).toEqual(['Goal', 'Uniques', 'Total', 'CR']);

    // A goal filters the screen: its converting visitors.
    await page.click('.ov-panel[data-panel="goals"] .ov-row[data-value="Signed Up"]');
    await loaded('event:goal=Signed Up');
    expect(await page.$eval('.ov-chip', (e: any) => e.textContent)).toContain('Goal isSigned Up');
    expect(await page.$eval('.ov-number[data-metric="visitors"]', (e: any) => Number(e.dataset.value))).toBe(3);
    await page.click('.ov-chip-remove');
    await loaded('');
    expect(faults).toEqual({ blocked: [], errors: [] });
  });

  test('details: a full panel opens every row of its breakdown with its numbers, searchable, a row filtering the screen', async () => {
    await settled();
    const pages = page.$$eval('.ov-panel[data-panel="pages"] .ov-row', (els) => els.length);
    expect(await pages).toBe(9);
    await page.click('.ov-panel[data-panel="pages"] .ov-details-open');
    await page.waitForSelector('dialog[open] .ov-details-status[data-total]');
    const all = await query({ metrics: ['visitors'], date_range: '7d', dimensions: ['event:page'], order_by: [['visitors', 'desc']], pagination: { limit: 100 }, include: { total_rows: true } });
    const listed = await page.$$eval('dialog[open] .ov-details-table tbody tr', (els) => els.map((e: any) => [e.dataset.value, e.querySelector('td.num').textContent]));
    // Pages of one visitor tie: compared as sets, /pricing (eight visitors) first.
    expect(listed.toSorted()).toEqual(all.results.map((r) => [r.dimensions[0], String(r.metrics[0])]).toSorted());
    expect(listed[0]).toEqual(['/pricing', '8']);
    // Thirteen pages (twelve and /pricing): more than a panel's nine.
    expect(listed).toHaveLength(13);
    expect(await page.$eval('dialog[open] .ov-details-status', (e: any) => e.textContent)).toBe('13 of 13');
    expect(await page.$eval('dialog[open]', (e: any) => e.getAttribute('aria-label'))).toBe('Top pages');
    await moves.shot('overview-details');

    // Searched: the API's contains filter, any case.
    await page.type('dialog[open] input[type="search"]', 'P1');
    await page.waitForFunction(() => document.querySelector('dialog[open] .ov-details-status')?.textContent === '4 of 4');
    const found = await query({ metrics: ['visitors'], date_range: '7d', dimensions: ['event:page'], filters: [['contains', 'event:page', ['P1'], { case_sensitive: false }]], order_by: [['visitors', 'desc']] });
    expect(await page.$$eval('dialog[open] .ov-details-table tbody tr', (els) => els.map((e: any) => e.dataset.value).sort())).toEqual(found.results.map((r) => r.dimensions[0]).sort());
    expect(found.results.map((r) => r.dimensions[0]).sort()).toEqual(['/p1', '/p10', '/p11', '/p12']);

    // A row filters the screen and closes the details.
    await page.click('dialog[open] tr[data-value="/p11"] button');
    await loaded('event:page=/p11');
    expect(await page.$('dialog[open]')).toBeNull();
    expect(await page.$eval('.ov-number[data-metric="visitors"]', (e: any) => Number(e.dataset.value))).toBe(1);
    // A page filter leaves the API no views per visit (as Plausible): the other numbers are shown.
    expect(await page.$eval('.ov-number[data-metric="views_per_visit"] .ov-number-value', (e: any) => e.textContent)).toBe('—');
    await page.click('.ov-chip-remove');
    await loaded('');
    expect(faults).toEqual({ blocked: [], errors: [] });
  });

  test("a country's flag is an image (country-flag-icons), asked for only when its country is shown", async () => {
    // The test before ends once the numbers are back: the panels may still be drawing their rows.
    await settled();
    await page.waitForSelector('.ov-row[data-dimension="visit:country"][data-value="DE"] img.ov-flag');
    await page.waitForFunction(() => [...document.querySelectorAll('img.ov-flag')].every((i: any) => i.complete));
    const flag = await page.$eval('.ov-row[data-value="DE"] img.ov-flag', (i: any) => ({ src: i.src, drawn: i.naturalWidth > 0, width: i.getBoundingClientRect().width, label: i.parentElement.textContent }));
    expect(flag).toEqual({ src: expect.stringMatching(/\/console\/assets\/flag-[0-9a-f]{12}-DE\.svg$/), drawn: true, width: 18, label: 'Germany' });
    const res = await fetch(flag.src);
    expect([res.status, res.headers.get('content-type')]).toEqual([200, 'image/svg+xml']);
    // Of the 250-odd flags, the page asked for Germany's only.
    const asked = await page.evaluate(() => (globalThis as any).performance.getEntriesByType('resource').map((e: any) => e.name).filter((n: string) => n.includes('/flag-')));
    expect([...new Set(asked.map((n: string) => n.replace(/.*-/, '')))]).toEqual(['DE.svg']);
  });

  test('a previous period without visits: counts read "new", rates and means no arrow and no "vs 0%"', async () => {
    const numbers = await page.$$eval('.ov-number', (els) =>
      Object.fromEntries(els.map((e: any) => [e.dataset.metric, { change: e.querySelector('.ov-change')?.textContent ?? null, bad: !!e.querySelector('.ov-change-bad'), vs: e.querySelector('.ov-number-previous').textContent }])),
    );
    const before = (await query({ metrics: ['visitors', 'visits', 'bounce_rate'], date_range: [iso(new Date(Date.now() - 14 * DAY)), iso(new Date(Date.now() - 8 * DAY))] })).results[0]!.metrics;
    expect(before).toEqual([0, 0, 0]);
    expect(numbers.visitors).toEqual({ change: 'new', bad: false, vs: 'vs 0' });
    expect(numbers.pageviews).toEqual({ change: 'new', bad: false, vs: 'vs 0' });
    for (const metric of ['bounce_rate', 'visit_duration', 'views_per_visit']) expect({ metric, ...numbers[metric] }).toEqual({ metric, change: null, bad: false, vs: '' });
    // The bounce rate itself is there: 4 of 12 visits bounced.
    expect(await page.$eval('.ov-number[data-metric="bounce_rate"] .ov-number-value', (e: any) => e.textContent)).toBe('33%');
    await settled();
    await page.evaluate(() => (globalThis as any).scrollTo(0, 0));
    await moves.shot('overview-new-site');
  });

  test('last 12 months: the months up to this one, so a site a few weeks old shows its visits; the screen is what the API answers for them', async () => {
    await page.select('.ov-period', '12mo');
    const [from, to] = twelveMonths();
    await page.waitForFunction((f: string) => document.querySelector('.overview')?.dataset.loaded?.startsWith(f), { timeout: 20_000 }, `${from}/${to}`);
    const now = (await query({ metrics: ['visitors', 'pageviews'], date_range: [from, to] })).results[0]!.metrics;
    expect(now).toEqual([12, 20]);
    expect(await page.$eval('.ov-number[data-metric="visitors"]', (e: any) => Number(e.dataset.value))).toBe(12);
    expect(await page.$eval('.ov-number[data-metric="pageviews"]', (e: any) => Number(e.dataset.value))).toBe(20);
    expect(await page.$('.ov-empty')).toBeNull();
    await settled();
    // Twelve monthly points, this month's holding the visits.
    const points = (await page.$eval('.ov-chart', (e: any) => e.dataset.points)).split(',').map(Number);
    expect(points).toHaveLength(12);
    const byMonth = await query({ metrics: ['visitors'], date_range: [from, to], dimensions: ['time:month'] });
    expect(points.reduce((a: number, b: number) => a + b, 0)).toBe(byMonth.results.reduce((a, r) => a + Number(r.metrics[0]), 0));
    await page.select('.ov-period', '7d');
    await loaded();
  });

  test('screenshots: the overview with its goals panel at 1440x900 and on a phone, light and dark', async () => {
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMediaFeatures([{ name: 'prefers-color-scheme', value: scheme }]);
      const suffix = scheme === 'dark' ? '-dark' : '';
      await page.setViewport({ width: 1440, height: 900 });
      await settled();
      await page.$eval('.ov-panel[data-panel="goals"]', (e: any) => e.scrollIntoView({ block: 'end' }));
      await moves.shot(`overview-goals${suffix}`);
      await page.setViewport({ width: 390, height: 844 });
      await settled();
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
      await page.$eval('.ov-panel[data-panel="goals"]', (e: any) => e.scrollIntoView({ block: 'start' }));
      await moves.shot(`overview-goals-phone${suffix}`);
    }
    await page.emulateMediaFeatures([{ name: 'prefers-color-scheme', value: 'light' }]);
    await page.setViewport({ width: 1440, height: 900 });
    expect(faults).toEqual({ blocked: [], errors: [] });
  });
});
