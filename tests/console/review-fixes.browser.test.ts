import { afterAll, beforeAll, expect, test } from 'bun:test';
import type { Page } from 'puppeteer-core';
import { describeInChromium, launchChromium, type Chromium } from '../helpers/chromium';
import { consoleMoves, signedInConsole, type PageFaults } from '../helpers/console-page';
import { sendEvents, startTestService, type TestService } from '../helpers/test-service';

/**
 * What a new user's Monday-morning review found misleading (issue 41), in headless Chromium with
 * every host but the service blocked: trends saved as bars drawn as bars, a long legend that
 * leaves the plot its height, a reload that saves nothing, "Last 7 days" on a weekly tile, the
 * live view's counter, the pickers' suggestions and unknown event names, SQL's answer to HogQL's
 * `properties.plan` and its blank and numeric cells.
 */
declare const document: any;
declare const location: { hash: string };
declare const getComputedStyle: (e: unknown) => { textAlign: string };

const DAY = 86_400_000;
const ZONE = 'America/New_York';
const ago = (ms: number) => new Date(Date.now() - ms).toISOString();
/** Eight plans: a breakdown by plan draws eight series. */
const PLANS = ['free', 'hobby', 'starter', 'team', 'pro', 'business', 'enterprise', 'education'];
/** One `visit` at noon (UTC) on each of the last 14 days: the weekly tile counts those of the last 7 days. */
const VISIT_DAYS = 14;
const CHROME_UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';

function seedEvents(): unknown[] {
  const events: unknown[] = [];
  PLANS.forEach((plan, i) => {
    for (let d = 0; d <= i % 4; d++) events.push({ type: 'track', event: 'signup', userId: `u-${plan}`, properties: { plan, internal_note: 'x' }, timestamp: ago((d + 1) * DAY) });
  });
  const noon = new Date();
  noon.setUTCHours(12, 0, 0, 0);
  for (let d = 1; d <= VISIT_DAYS; d++) events.push({ type: 'track', event: 'visit', userId: 'reader', timestamp: new Date(noon.getTime() - d * DAY).toISOString() });
  events.push({ type: 'page', anonymousId: 'anon-1', properties: { path: '/pricing' }, context: { userAgent: CHROME_UA, page: { referrer: 'https://www.google.com/' } }, timestamp: ago(DAY / 2) });
  events.push({ type: 'track', event: 'internal_test', userId: 'reader', timestamp: ago(DAY / 3) });
  return events;
}

describeInChromium('the review fixes of issue 41 in the console', () => {
  let svc: TestService;
  let chromium: Chromium;
  let page: Page;
  let faults: PageFaults;
  let moves: ReturnType<typeof consoleMoves>;
  /** Every request the page made to the service: method, path and body. */
  const requests: Array<{ method: string; path: string; body: string }> = [];
  const ids: Record<string, string> = {};
  let dashboardId = '';
  let weeklyDashboardId = '';
  let overlappingId = '';

  const call = async (method: string, path: string, body?: unknown) => {
    const res = await svc.request(method, path, { key: svc.privateKey, body });
    if (!res.ok) throw new Error(`${method} ${path} answered ${res.status}: ${await res.text()}`);
    return (await res.json()) as any;
  };
  const tile = (name: string) => `.tile[data-insight="${ids[name]}"]`;
  const openDashboard = async (id: string) => {
    await page.evaluate((v: string) => (location.hash = `#/dashboards/${v}`), id);
    await page.waitForFunction(() => {
      const bodies = [...document.querySelectorAll('.tile .tile-body')];
      return bodies.length > 0 && bodies.every((b: any) => b.firstElementChild && !b.firstElementChild.classList.contains('tile-loading'));
    });
  };

  beforeAll(async () => {
    svc = await startTestService();
    // The workspace counts in New York: the live view's times are in its zone, and say so.
    const { workspace } = await call('GET', '/whoami');
    await call('PUT', `/workspaces/${workspace.workspaceId}`, { name: workspace.name, timezone: ZONE });
    await sendEvents(svc, seedEvents());
    const save = async (key: string, name: string, query: unknown, display: unknown) =>
      (ids[key] = (await call('POST', '/insights/saved', { name, kind: 'trends', query, display })).id);
    await save('bar', 'Signups as bars', { series: [{ event: 'signup' }], dateFrom: '-7d', interval: 'day' }, { chart: 'bar' });
    await save('stacked', 'Signups by plan, stacked', { series: [{ event: 'signup' }], dateFrom: '-7d', interval: 'day', breakdown: { property: 'plan', limit: 10 } }, { chart: 'stacked' });
    await save('weekly', 'Visits by week', { series: [{ event: 'visit' }], dateFrom: '-30d', interval: 'week', timezone: 'UTC' }, { chart: 'number' });
    ids.retention = (await call('POST', '/insights/saved', { name: 'Readers coming back', kind: 'retention', query: { startEvent: { event: 'visit' }, returnEvent: { event: 'visit' }, period: 'day', periods: 4 } })).id;
    ({ id: dashboardId } = await call('POST', '/dashboards', {
      name: 'Charts',
      tiles: [
        { insightId: ids.bar, x: 0, y: 0, w: 6, h: 4 },
        { insightId: ids.stacked, x: 6, y: 0, w: 6, h: 4 },
      ],
    }));
    // Tiles may overlap and leave rows empty above them (docs/api/dashboards.md): the grid draws
    // them apart, which is no change of the user's.
    ({ id: overlappingId } = await call('POST', '/dashboards', {
      name: 'Overlapping',
      tiles: [
        { insightId: ids.bar, x: 0, y: 3, w: 6, h: 4 },
        { insightId: ids.stacked, x: 3, y: 5, w: 6, h: 4 },
      ],
    }));
    ({ id: weeklyDashboardId } = await call('POST', '/dashboards', { name: 'Weekly', dateFrom: '-7d', tiles: [
      { insightId: ids.weekly, x: 0, y: 0, w: 4, h: 3 },
      { insightId: ids.retention, x: 4, y: 0, w: 8, h: 5 },
    ] }));
    chromium = await launchChromium();
    ({ page, faults } = await signedInConsole(chromium, svc.url, svc.privateKey));
    page.on('request', (r) => void requests.push({ method: r.method(), path: r.url().replace(svc.url, ''), body: r.postData() ?? '' }));
    await page.setViewport({ width: 1440, height: 900 });
    moves = consoleMoves(page);
  });
  afterAll(async () => {
    await chromium?.close();
    await svc?.stop();
  });

  test('a trend saved as bars is drawn as bars, stacked as stacked bars, on its tile and in its builder; eight series leave the plot its height', async () => {
    await openDashboard(dashboardId);
    await page.waitForSelector(`${tile('bar')} .period-chart[data-mode="bar"] canvas`);
    await page.waitForSelector(`${tile('stacked')} .period-chart[data-mode="stacked"] canvas`);
    // Eight series and a total: the legend scrolls within its box, the plot keeps the height a tile gives it.
    const legend = await page.$eval(`${tile('stacked')} .u-legend`, (l: any) => ({ rows: l.querySelectorAll('.u-series').length, height: l.clientHeight, scrolls: l.scrollHeight > l.clientHeight }));
    expect(legend.rows).toBe(PLANS.length + 1);
    expect(legend.scrolls).toBe(true);
    const plots = await page.$$eval('.tile .u-over', (e) => e.map((o: any) => o.getBoundingClientRect().height));
    expect(plots).toEqual([plots[0], plots[0]]);
    await moves.shot('dashboard-bars-legend');
    // The tile's body shows the plot and the legend's box without scrolling.
    expect(await page.$eval(`${tile('stacked')} .tile-body`, (b: any) => b.scrollHeight <= b.clientHeight)).toBe(true);

    await page.evaluate((v: string) => (location.hash = `#/insights/trends?saved=${v}`), ids.bar!);
    await page.waitForSelector('.insight-result .period-chart[data-mode="bar"] canvas');
    await page.evaluate((v: string) => (location.hash = `#/insights/trends?saved=${v}`), ids.stacked!);
    await page.waitForSelector('.insight-result .period-chart[data-mode="stacked"] canvas');
  });

  test('opening or reloading a dashboard sends no PUT, even where the grid draws overlapping tiles apart; a move by hand saves the layout', async () => {
    const stored = JSON.stringify((await call('GET', `/dashboards/${overlappingId}`)).tiles);
    requests.length = 0;
    await openDashboard(overlappingId);
    await page.reload();
    await page.waitForSelector('.tile .period-chart canvas');
    await page.waitForFunction(() => document.querySelector('.toolbar [role="status"]')?.textContent.startsWith('Updated'));
    // The layout is saved 400 ms after a change settles: wait past that, then nothing was PUT.
    await Bun.sleep(1500);
    expect(requests.filter((r) => r.method === 'PUT')).toEqual([]);
    // Each opening asks the tiles' last answers first (`?stale=true`).
    expect(requests.filter((r) => r.method === 'GET' && r.path === `/dashboards/${overlappingId}/results?stale=true`)).toHaveLength(2);
    // Reloaded on a narrow window (one column) and widened: the twelve columns come back, unsaved.
    await page.setViewport({ width: 600, height: 900 });
    await page.reload();
    await page.waitForSelector('.tile .period-chart canvas');
    await page.setViewport({ width: 1440, height: 900 });
    await Bun.sleep(1500);
    expect(requests.filter((r) => r.method === 'PUT')).toEqual([]);
    expect(JSON.stringify((await call('GET', `/dashboards/${overlappingId}`)).tiles)).toBe(stored);
    // A move from the keyboard is saved.
    await page.focus(tile('bar'));
    await page.keyboard.press('ArrowRight');
    await page.waitForFunction(() => document.querySelector('.toolbar [role="status"]')?.textContent === 'Layout saved');
    expect(requests.filter((r) => r.method === 'PUT').map((r) => r.path)).toEqual([`/dashboards/${overlappingId}`]);
  });

  test('"Last 7 days" on a weekly tile counts the last 7 days, not the weeks they touch', async () => {
    await openDashboard(weeklyDashboardId);
    const shown = Number(await page.$eval(`${tile('weekly')} .tile-number-value`, (e: any) => e.dataset.value));
    // One visit a day at noon, from yesterday back: the last 7 days (from the start of the day 7
    // days ago) hold 7 of them; the weeks they touch held up to 6 more.
    expect(shown).toBe(7);
    const answer = await call('POST', '/insights/trends', { series: [{ event: 'visit' }], dateFrom: '-7d', interval: 'week', timezone: 'UTC' });
    expect(answer.results[0].total).toBe(7);
  });

  test('one date format: tiles, retention cohorts, the builder\'s axes and table; the table keeps its Total in view at 1440 px; no scrollbar beside the tabs', async () => {
    const DAY_TEXT = /^\d{1,2} (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)( \d{4})?$/;
    await openDashboard(weeklyDashboardId);
    const cohorts = await page.$$eval(`${tile('retention')} tbody tr > td:first-child`, (c) => c.map((x: any) => x.textContent));
    expect(cohorts.length).toBeGreaterThan(0);
    for (const c of cohorts) expect(c).toMatch(DAY_TEXT);
    await moves.shot('dashboard-weekly');

    const query = { series: [{ event: 'visit' }, { event: 'signup' }], dateFrom: '-30d', interval: 'day' };
    await page.evaluate((q: string) => (location.hash = `#/insights/trends?q=${encodeURIComponent(q)}&chart=table`), JSON.stringify(query));
    await page.waitForSelector('.insight-table');
    const heads = await page.$$eval('.insight-table thead th', (t) => t.map((x: any) => x.textContent));
    expect(heads[0]).toBe('Series');
    expect(heads.at(-1)).toBe('Total');
    for (const label of heads.slice(1, -1)) expect(label).toMatch(DAY_TEXT);
    // 31 days do not fit: the periods scroll, the Total column stays in view at the right.
    const box = await page.$eval('.insight-result .table-scroll', (e: any) => {
      const r = e.getBoundingClientRect();
      return { left: r.left, right: r.right, scrolls: e.scrollWidth > e.clientWidth };
    });
    expect(box.scrolls).toBe(true);
    const total = await page.$eval('.insight-table thead th:last-child', (e: any) => {
      const r = e.getBoundingClientRect();
      return { left: r.left as number, right: r.right as number };
    });
    expect(total.right).toBeLessThanOrEqual(box.right + 1);
    expect(total.left).toBeGreaterThan(box.left);
    // No scrollbar on the tabs' row: its box is as wide and high as its content box (and 1 px of border below).
    const tabs = await page.$eval('.kind-tabs', (e: any) => ({ beside: e.offsetWidth - e.clientWidth, below: e.offsetHeight - e.clientHeight }));
    expect(tabs).toEqual({ beside: 0, below: 1 });
    await moves.shot('insights-trends-table');
  });

  test('the live view counts the events it shows and those arrived since, and shows when each arrived', async () => {
    await moves.go('live');
    await page.waitForFunction(() => Number(document.querySelector('.page-header .muted[data-shown]')?.dataset.shown) > 0);
    const stored = (await call('GET', '/events?limit=1')).total as number;
    const counter = await page.$eval('.page-header .muted[data-shown]', (c: any) => ({ shown: Number(c.dataset.shown), text: c.textContent }));
    expect(counter.shown).toBe(Math.min(500, stored));
    expect(counter.text).toContain(`${counter.shown} shown`);
    await sendEvents(svc, [{ type: 'track', event: 'live-one', userId: 'reader' }]);
    await moves.waitForText('.live-list li:first-child', 'live-one');
    await page.waitForFunction(() => document.querySelector('.page-header .muted[data-shown]').dataset.received === '1');
    // Rows are in the order of arrival, and the time shown is the arrival's.
    const times = await page.$$eval('.live-list time.live-arrived', (t) => t.map((x: any) => x.getAttribute('datetime')));
    const ms = times.map((t) => Date.parse(t));
    expect(ms.every((t, i) => i === 0 || t <= ms[i - 1]!)).toBe(true);
    // In the workspace's zone, which the header names.
    expect(await page.$eval('.page-header .zone-note', (z: any) => z.dataset.timezone)).toBe(ZONE);
    const first = await page.$eval('.live-list li:first-child time', (t: any) => ({ iso: t.getAttribute('datetime'), text: t.textContent }));
    const wall = new Intl.DateTimeFormat('en-CA', { timeZone: ZONE, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit' }).format(new Date(first.iso));
    expect(first.text.slice(0, 19)).toBe(wall.replace(', ', ' '));
    await moves.shot('live-arrivals');
  });

  test('pickers suggest enriched fields and first touch, leave hidden items out; an unknown event name is said, not asked', async () => {
    // The catalog records what arrived; hide a property and an event.
    for (let i = 0; i < 100 && !(await call('GET', '/catalog/properties?search=internal_note')).results.length; i++) await Bun.sleep(100);
    await call('PATCH', '/catalog/properties/internal_note', { hidden: true });
    await call('PATCH', '/catalog/events/internal_test', { hidden: true });
    // The builder keeps its suggestions for a minute: a new page reads them again.
    await page.reload();
    await page.waitForSelector('.status-live');
    await page.evaluate(() => (location.hash = `#/insights/trends?q=${encodeURIComponent(JSON.stringify({ series: [{ event: 'signup' }], dateFrom: '-7d' }))}`));
    await page.waitForSelector('.insight-result .period-chart canvas');
    const list = (id: string) => page.$$eval(`datalist#${id} option`, (o) => o.map((x: any) => x.value));
    await page.waitForFunction(() => document.querySelectorAll('datalist#insight-props-person option').length > 2);
    const eventProps = await list('insight-props-event');
    expect(eventProps).toEqual(expect.arrayContaining(['context.source', 'context.location.country', 'context.browser.name', 'context.os.name', 'context.device.type', 'context.campaign.source', 'plan']));
    expect(eventProps).not.toContain('internal_note');
    expect(await list('insight-props-person')).toEqual(expect.arrayContaining(['$initial_source', '$initial_country', '$initial_utm_campaign']));
    const events = await list('insight-events');
    expect(events).toContain('signup');
    expect(events).not.toContain('internal_test');

    // A name typed halfway: said, and never sent.
    requests.length = 0;
    const input = '.insight-query .event-input';
    await page.click(input, { clickCount: 3 });
    await page.keyboard.press('Backspace');
    await page.type(input, 'sig');
    await moves.waitForText('.insight-result .notice', 'No event named “sig”');
    await moves.shot('insights-unknown-event');
    await Bun.sleep(800);
    expect(requests.filter((r) => r.path === '/insights/trends' && r.body.includes('"sig"'))).toEqual([]);
    await page.type(input, 'nup');
    await page.waitForSelector('.insight-result .period-chart canvas');
  });

  test("SQL: properties.plan is answered with how to read a property here; blanks are said, numbers right-aligned", async () => {
    await moves.go('sql');
    await page.waitForSelector('pierce/.cm-content');
    const run = async (sql: string) => {
      await page.click('pierce/.cm-content');
      await page.keyboard.down('Control');
      await page.keyboard.press('a');
      await page.keyboard.up('Control');
      await page.keyboard.press('Backspace');
      await page.keyboard.sendCharacter(sql);
      await page.keyboard.press('Escape');
      await moves.press('Run');
    };
    await run("SELECT count() FROM events WHERE properties.plan = 'pro'");
    await moves.waitForText('.notice-error', "JSONExtractString(properties, 'plan')");
    expect(await page.$eval('.notice-error', (e: any) => e.textContent)).not.toContain('outside this workspace');
    await moves.shot('sql-hogql-property');

    await run("SELECT event, JSONExtractString(properties, 'plan') AS plan, count() AS n FROM events WHERE type = 'track' GROUP BY event, plan ORDER BY event, plan");
    await page.waitForSelector('.sql-output .vt-body .vt-row');
    const cells = await page.$$eval('.sql-output .vt-body .vt-row', (rows) =>
      rows.map((r: any) => [...r.children].map((c: any) => ({ text: c.textContent, blank: c.classList.contains('vt-blank'), align: getComputedStyle(c).textAlign }))),
    );
    const visit = cells.find((r) => r[0]!.text === 'visit')!;
    expect(visit[1]).toEqual({ text: '(empty)', blank: true, align: 'start' });
    expect(visit[2]).toEqual({ text: String(VISIT_DAYS), blank: false, align: 'right' });
    expect(await page.$$eval('.sql-output .vt-header .vt-cell', (h) => h.map((c: any) => getComputedStyle(c).textAlign))).toEqual(['start', 'start', 'right']);
    await moves.shot('sql-blank-and-numbers');
    expect(faults).toEqual({ blocked: [], errors: [] });
  });

  test('the changed screens at 1440x900 and on a phone, light and dark (docs/console.md)', async () => {
    const screens: Array<[string, () => Promise<unknown>]> = [
      ['dashboard-bars-legend', () => openDashboard(dashboardId).then(() => page.waitForSelector(`${tile('stacked')} canvas`))],
      ['dashboard-weekly', () => openDashboard(weeklyDashboardId)],
      ['insights-trends-table', async () => {
        await page.evaluate((q: string) => (location.hash = `#/insights/trends?q=${encodeURIComponent(q)}&chart=table`), JSON.stringify({ series: [{ event: 'visit' }, { event: 'signup' }], dateFrom: '-30d', interval: 'day' }));
        await page.waitForSelector('.insight-table');
      }],
      ['live-arrivals', async () => {
        await moves.go('live');
        await page.waitForSelector('.live-list li');
      }],
      ['sql-blank-and-numbers', async () => {
        await moves.go('sql');
        await moves.press('Run');
        await page.waitForSelector('.sql-output .vt-body .vt-row');
      }],
    ];
    for (const [width, height, size] of [[1440, 900, ''], [390, 844, '-phone']] as const) {
      await page.setViewport({ width, height });
      for (const scheme of ['light', 'dark'] as const) {
        await page.emulateMediaFeatures([{ name: 'prefers-color-scheme', value: scheme }]);
        for (const [name, open] of screens) {
          // The light 1440x900 shots are the other tests' own.
          if (!size && scheme === 'light') continue;
          await page.evaluate(() => (location.hash = '#/'));
          await open();
          await moves.shot(`${name}${size}${scheme === 'dark' ? '-dark' : ''}`);
        }
      }
    }
    await page.setViewport({ width: 1440, height: 900 });
    await page.emulateMediaFeatures([{ name: 'prefers-color-scheme', value: 'light' }]);
    expect(faults).toEqual({ blocked: [], errors: [] });
  });
});
