import { afterAll, beforeAll, expect, test } from 'bun:test';
import type { Page } from 'puppeteer-core';
import { describeInChromium, launchChromium, type Chromium } from '../helpers/chromium';
import { consoleMoves, offlinePage, type PageFaults } from '../helpers/console-page';
import { sendEvents, startTestService, type TestService } from '../helpers/test-service';

/**
 * Saved insights, dashboards, persons and cohorts in the console, in headless Chromium with every
 * host but the service blocked: the numbers on the page are compared with the API's answers for
 * the same questions, and every change made on the page is read back through the API.
 */
declare const document: any;
declare const location: { hash: string; href: string };
declare const window: any;

const HOUR = 3_600_000;
const ZONE = 'America/New_York';
const DAY = 24 * HOUR;
const ago = (ms: number) => new Date(Date.now() - ms).toISOString();

/** Four persons with known histories and a crowd of one-time visitors who signed up. */
function seedEvents(): unknown[] {
  const events: unknown[] = [
    // Ada browses anonymously, signs up, buys twice.
    { type: 'page', anonymousId: 'anon-ada', properties: { path: '/pricing' }, timestamp: ago(3 * DAY + 2 * HOUR) },
    { type: 'identify', userId: 'ada', anonymousId: 'anon-ada', traits: { email: 'ada@example.com', plan: 'pro', seats: 12 }, timestamp: ago(3 * DAY + HOUR) },
    { type: 'track', event: 'signup', userId: 'ada', properties: { plan: 'pro' }, timestamp: ago(3 * DAY) },
    { type: 'track', event: 'purchase', userId: 'ada', properties: { amount: 30 }, timestamp: ago(2 * DAY) },
    { type: 'track', event: 'purchase', userId: 'ada', properties: { amount: 19 }, timestamp: ago(DAY) },
    // Bob signs up and never buys.
    { type: 'identify', userId: 'bob', traits: { email: 'bob@example.com', plan: 'free' }, timestamp: ago(2 * DAY + HOUR) },
    { type: 'track', event: 'signup', userId: 'bob', properties: { plan: 'free' }, timestamp: ago(2 * DAY) },
    // Cy signs up and buys an hour later.
    { type: 'identify', userId: 'cy', traits: { email: 'cy@example.com', plan: 'pro', seats: 3 }, timestamp: ago(DAY + 2 * HOUR) },
    { type: 'track', event: 'signup', userId: 'cy', properties: { plan: 'pro' }, timestamp: ago(DAY + HOUR) },
    { type: 'track', event: 'purchase', userId: 'cy', properties: { amount: 49 }, timestamp: ago(DAY) },
    // Dee never signs in.
    { type: 'page', anonymousId: 'anon-dee', properties: { path: '/' }, timestamp: ago(5 * HOUR) },
  ];
  for (let i = 0; i < 24; i++) {
    events.push({ type: 'track', event: 'signup', userId: `visitor-${i}`, properties: { plan: 'free' }, timestamp: ago((i % 6) * DAY + (i + 1) * 7 * 60_000) });
  }
  return events;
}

describeInChromium('dashboards, persons and cohorts in the console', () => {
  let svc: TestService;
  let chromium: Chromium;
  let page: Page;
  let faults: PageFaults;
  let moves: ReturnType<typeof consoleMoves>;
  /** Every URL the page asked the service for, in order. */
  const requests: string[] = [];
  const ids: Record<string, string> = {};
  let dashboardId = '';
  /** Where the last tile was dragged to. */
  let movedX = 0;

  const call = async (method: string, path: string, body?: unknown) => {
    const res = await svc.request(method, path, { key: svc.privateKey, body });
    if (!res.ok) throw new Error(`${method} ${path} answered ${res.status}: ${await res.text()}`);
    return (await res.json()) as any;
  };
  const dashboard = () => call('GET', `/dashboards/${dashboardId}`);
  /** Waits until the dashboard as stored passes `check`. */
  const stored = async (check: (d: any) => boolean, what: string) => {
    for (let i = 0; i < 100; i++) {
      if (check(await dashboard())) return;
      await Bun.sleep(100);
    }
    throw new Error(`the dashboard was never saved with ${what}: ${JSON.stringify(await dashboard())}`);
  };
  const tile = (name: string) => `.tile[data-insight="${ids[name]}"]`;
  const tileText = (name: string) => page.$eval(tile(name), (e) => e.textContent as string);

  const QUERIES = {
    trends: { series: [{ event: 'signup' }], dateFrom: '-7d', interval: 'day' },
    funnel: { steps: [{ event: 'signup' }, { event: 'purchase' }], dateFrom: '-7d' },
    retention: { startEvent: { event: 'signup' }, returnEvent: { event: 'purchase' }, period: 'day', periods: 4 },
    purchases: "SELECT count() AS purchases FROM events WHERE event = 'purchase'",
    broken: 'SELECT no_such_column FROM events',
  };

  beforeAll(async () => {
    svc = await startTestService();
    // The workspace counts days in New York: the dashboard says so.
    const { workspace } = await call('GET', '/whoami');
    await call('PUT', `/workspaces/${workspace.workspaceId}`, { name: workspace.name, timezone: ZONE });
    await sendEvents(svc, seedEvents());
    const save = async (key: string, name: string, kind: string, query: unknown, display?: unknown) =>
      (ids[key] = (await call('POST', '/insights/saved', { name, kind, query, ...(display ? { display } : {}) })).id);
    await save('trends', 'Daily signups', 'trends', QUERIES.trends, { chart: 'line' });
    await save('funnel', 'Signup to purchase', 'funnels', QUERIES.funnel);
    await save('purchases', 'Purchases so far', 'sql', QUERIES.purchases);
    await save('broken', 'Broken statement', 'sql', QUERIES.broken);
    await save('retention', 'Buyers coming back', 'retention', QUERIES.retention);
    chromium = await launchChromium();
    ({ page, faults } = await offlinePage(chromium, svc.url));
    page.on('request', (r) => void requests.push(`${r.method()} ${r.url().replace(svc.url, '')}`));
    await page.emulateMediaFeatures([{ name: 'prefers-color-scheme', value: 'light' }]);
    moves = consoleMoves(page);
    await page.goto(`${svc.url}/console`);
    await moves.signInWith(svc.privateKey);
    await page.waitForSelector('.status-live');
  });
  afterAll(async () => {
    await chromium?.close();
    await svc?.stop();
  });

  test('saved insights: listed; renamed, duplicated and deleted; each opens in its builder or the SQL page', async () => {
    const { go, press, waitForText } = moves;
    await go('saved');
    await waitForText('.data-table', 'Daily signups');
    expect(await page.$eval('tr[data-name="Daily signups"] a', (a) => a.getAttribute('href'))).toBe(`#/insights/trends?saved=${ids.trends}`);
    expect(await page.$eval('tr[data-name="Purchases so far"] a', (a) => a.getAttribute('href'))).toBe(`#/sql?saved=${ids.purchases}`);

    await press('Rename', 'tr[data-name="Signup to purchase"]');
    await page.waitForSelector('dialog[open] input[name="name"]');
    await page.$eval('dialog[open] input[name="name"]', (i) => ((i as any).value = ''));
    await page.type('dialog[open] input[name="name"]', 'Signup → purchase');
    await page.keyboard.press('Enter');
    await waitForText('.data-table', 'Signup → purchase');
    expect((await call('GET', `/insights/saved/${ids.funnel}`)).name).toBe('Signup → purchase');

    await press('Duplicate', 'tr[data-name="Daily signups"]');
    await waitForText('.data-table', 'Daily signups (copy)');
    const copies = (await call('GET', '/insights/saved')).results.filter((s: any) => s.name === 'Daily signups (copy)');
    expect(copies).toHaveLength(1);
    expect(copies[0].query).toEqual(QUERIES.trends);
    await press('Delete', 'tr[data-name="Daily signups (copy)"]');
    await press('Delete insight', 'dialog[open]');
    await waitForText('.notice', 'Deleted Daily signups (copy)');
    expect((await call('GET', '/insights/saved')).total).toBe(5);

    // A saved statement opens in the SQL page, in its editor.
    await page.click('tr[data-name="Purchases so far"] a');
    await page.waitForSelector('a.nav-link.active[data-path="sql"]');
    await page.waitForFunction((sql: string) => document.querySelector('.editor')?.shadowRoot?.querySelector('.cm-content')?.textContent === sql, {}, QUERIES.purchases);
  });

  test("a dashboard: created, saved insights added as tiles, drawn from the results calls with the API's numbers; a failing tile shows its error", async () => {
    const { go, press, waitForText } = moves;
    await go('dashboards');
    await waitForText('.notice', 'No dashboards yet');
    await page.type('form[aria-label="New dashboard"] input[name="name"]', 'Growth');
    await press('Create dashboard');
    await page.waitForFunction(() => /^#\/dashboards\/[0-9a-f-]{36}$/.test(location.hash));
    dashboardId = (await page.evaluate(() => location.hash)).split('/')[2]!;
    await waitForText('.notice', 'No tiles yet');
    for (const name of ['trends', 'funnel', 'purchases', 'broken', 'retention']) {
      await press('+ Add insight');
      await page.waitForSelector('dialog[open] select[name="insight"]');
      await page.select('dialog[open] select[name="insight"]', ids[name]!);
      await press('Add tile', 'dialog[open]');
      await page.waitForSelector(`${tile(name)} .tile-body > :not(.tile-loading)`);
    }
    expect((await dashboard()).tiles.map((t: any) => t.insightId)).toEqual(['trends', 'funnel', 'purchases', 'broken', 'retention'].map((n) => ids[n]));

    // Reopened, the page answers every tile with the last answers kept, then (a SQL tile's is never
    // current: a statement may read anything) with the current ones; it asks nothing else of the insights.
    await go('dashboards');
    const before = requests.length;
    const opened = performance.now();
    await go(`dashboards/${dashboardId}`);
    await page.waitForSelector(`${tile('purchases')} .tile-number-value`);
    console.log(`console: a dashboard of 5 tiles drawn ${Math.round(performance.now() - opened)} ms after it was opened (${(await call('GET', '/events?limit=0')).total} events)`);
    await page.waitForFunction(() => !document.querySelector('[data-stale]') && !document.querySelector('.tile-stale'));
    const asked = requests.slice(before).filter((r) => !r.includes('/assets/'));
    expect(asked.filter((r) => r.includes('/results'))).toEqual([`GET /dashboards/${dashboardId}/results?stale=true`, `GET /dashboards/${dashboardId}/results`]);
    expect(asked.filter((r) => (r.includes('/insights/') && !r.includes('/insights/saved')) || r.includes('/queries'))).toEqual([]);

    const purchases = (await call('POST', '/queries', { queries: [QUERIES.purchases] })).results[0].results[0].purchases;
    expect(Number(await page.$eval(`${tile('purchases')} .tile-number-value`, (e) => e.getAttribute('data-value')))).toBe(Number(purchases));

    const funnel = (await call('POST', '/insights/funnels', QUERIES.funnel)).results[0].steps.map((s: any) => s.count);
    expect(funnel).toEqual([27, 2]);
    expect(await page.$$eval(`${tile('funnel')} .funnel-step`, (steps) => steps.map((s) => Number(s.getAttribute('data-count'))))).toEqual(funnel);
    expect(await tileText('funnel')).toContain('7.4%');

    const retention = (await call('POST', '/insights/retention', QUERIES.retention)).results;
    const cells = await page.$$eval(`${tile('retention')} tbody tr`, (rows) => rows.map((r) => [...r.querySelectorAll('[data-value]')].map((c) => Number(c.getAttribute('data-value')))));
    expect(cells).toEqual(retention.map((r: any) => [r.size, ...r.values]));
    // Today is not over: each cohort's cell of today is hatched (cohort i's value k is of day i + k).
    const hatched = await page.$$eval(`${tile('retention')} tbody tr`, (rows) => rows.map((r) => [...r.querySelectorAll('td.heat')].map((c) => c.classList.contains('incomplete'))));
    expect(hatched).toEqual(retention.map((r: any, i: number) => r.values.map((_: number, k: number) => i + k === retention.length - 1)));

    // The trend is drawn as the builder draws it, today's segment apart (dashed).
    const trend = await call('POST', '/insights/trends', QUERIES.trends);
    await page.waitForSelector(`${tile('trends')} .period-chart[data-mode="line"] canvas`);
    expect(trend.incompleteFrom).toBe(trend.results[0].labels.at(-1));
    expect(await page.$eval(`${tile('trends')} .period-chart`, (e) => e.getAttribute('data-incomplete-from'))).toBe(String(trend.results[0].labels.length - 1));
    // The dates are the workspace's: its time zone is named.
    expect(await page.$eval('.dashboard-zone .zone-note', (e) => [e.textContent, e.getAttribute('data-timezone')])).toEqual([`Times in ${ZONE}`, ZONE]);
    expect(await tileText('broken')).toContain('no_such_column');
    await moves.shot('dashboard');
    await page.$eval(tile('retention'), (e) => e.scrollIntoView({ block: 'center' }));
    await moves.shot('dashboard-retention');
  });

  test('tiles move and resize by hand and with the keyboard, and the layout is saved', async () => {
    // Two a row: the last tile is alone on the third row, and is dragged by its header half the
    // grid to the right, 6 of 12 columns.
    expect((await dashboard()).tiles.map((t: any) => [t.x, t.y])).toEqual([[0, 0], [6, 0], [0, 4], [6, 4], [0, 8]]);
    await page.$eval(tile('retention'), (e) => e.scrollIntoView({ block: 'center' }));
    const retention = (await page.$(`${tile('retention')} .tile-header`))!;
    const box = (await retention.boundingBox())!;
    const grid = (await (await page.$('.dashboard-grid'))!.boundingBox())!;
    await page.mouse.move(box.x + 40, box.y + box.height / 2);
    await page.mouse.down();
    for (let i = 1; i <= 10; i++) await page.mouse.move(box.x + 40 + (i * grid.width) / 20, box.y + box.height / 2);
    await page.mouse.up();
    await stored((d) => d.tiles[4].x >= 5 && d.tiles[4].y === 8, 'the last tile moved right');
    movedX = (await dashboard()).tiles[4].x;

    // Resized from its corner: wider by two columns' width.
    await page.$eval(tile('purchases'), (e) => e.scrollIntoView({ block: 'center' }));
    const item = (await page.$(`${tile('purchases')}`))!;
    const itemBox = (await item.boundingBox())!;
    await page.mouse.move(itemBox.x + itemBox.width / 2, itemBox.y + itemBox.height / 2);
    const handle = (await page.waitForSelector(`.grid-stack-item:has(${tile('purchases')}) > .ui-resizable-se`, { visible: true }))!;
    const handleBox = (await handle.boundingBox())!;
    const before = (await dashboard()).tiles[2];
    await page.mouse.move(handleBox.x + handleBox.width / 2, handleBox.y + handleBox.height / 2);
    await page.mouse.down();
    for (let i = 1; i <= 10; i++) await page.mouse.move(handleBox.x + (i * grid.width) / 60, handleBox.y + i * 12);
    await page.mouse.up();
    await stored((d) => d.tiles[2].w > before.w && d.tiles[2].h > before.h, 'the third tile wider and higher');

    // The keyboard: a focused tile moves with the arrows and grows with Shift.
    const third = (await dashboard()).tiles[2];
    await page.focus(tile('purchases'));
    await page.keyboard.press('ArrowDown');
    await page.keyboard.down('Shift');
    await page.keyboard.press('ArrowLeft');
    await page.keyboard.up('Shift');
    await stored((d) => d.tiles[2].y === third.y + 1 && d.tiles[2].w === third.w - 1, 'the third tile one row lower and one column narrower');
  });

  test("the dashboard's date range replaces the tiles' own; the refresh interval reloads the tiles by itself", async () => {
    const { press } = moves;
    await page.select('select[name="range"]', '-30d');
    await stored((d) => d.dateFrom === '-30d' && d.dateTo === undefined, 'the last 30 days');
    const trendLabels = async () => (await call('GET', `/dashboards/${dashboardId}/results`)).results[0].result.results[0].labels.length;
    expect(await trendLabels()).toBeGreaterThanOrEqual(30);

    await page.select('select[name="range"]', 'custom');
    const from = new Date(Date.now() - 4 * DAY).toISOString().slice(0, 10);
    const to = new Date(Date.now() - DAY).toISOString().slice(0, 10);
    await page.$eval('input[name="dateFrom"]', (i, v) => ((i as any).value = v), from);
    await page.$eval('input[name="dateTo"]', (i, v) => ((i as any).value = v), to);
    await press('Apply');
    await stored((d) => d.dateFrom === from && d.dateTo === to, `${from} to ${to}`);
    expect(await trendLabels()).toBe(4);
    await page.select('select[name="range"]', '');
    await stored((d) => d.dateFrom === undefined, "the tiles' own ranges");

    await page.select('select[name="refresh"]', '30');
    await stored((d) => d.refreshSeconds === 30, 'a refresh every 30 s');
    const shown = Number(await page.$eval(`${tile('purchases')} .tile-number-value`, (e) => e.getAttribute('data-value')));
    await sendEvents(svc, [{ type: 'track', event: 'purchase', userId: 'bob', properties: { amount: 5 } }]);
    await page.waitForFunction(
      (sel: string, n: number) => Number(document.querySelector(sel)?.getAttribute('data-value')) === n,
      { timeout: 45_000 },
      `${tile('purchases')} .tile-number-value`,
      shown + 1,
    );
  }, 90_000);

  test('the URL reopens the dashboard after a reload, with the same tiles and numbers; dark and phone-sized too', async () => {
    const url = page.url();
    const numbers = await page.$$eval('.tile-number-value', (e) => e.map((x) => x.getAttribute('data-value')));
    await page.reload();
    await page.waitForSelector(`${tile('purchases')} .tile-number-value`);
    expect(page.url()).toBe(url);
    expect(await page.$eval('.page-header h1', (e) => e.textContent)).toBe('Growth');
    expect(await page.$$eval('.tile-number-value', (e) => e.map((x) => x.getAttribute('data-value')))).toEqual(numbers);
    expect(await page.$$eval('.tile', (e) => e.length)).toBe(5);

    await page.emulateMediaFeatures([{ name: 'prefers-color-scheme', value: 'dark' }]);
    await page.reload();
    await page.waitForSelector(`${tile('trends')} canvas`);
    await moves.shot('dashboard-dark');
    await page.emulateMediaFeatures([{ name: 'prefers-color-scheme', value: 'light' }]);

    await page.setViewport({ width: 390, height: 844 });
    await page.reload();
    await page.waitForSelector(`${tile('trends')} canvas`);
    // One column on a phone: every tile as wide as the page, none beside another.
    const widths = await page.$$eval('.grid-stack-item', (items) => items.map((i) => Math.round(i.getBoundingClientRect().width)));
    const gridWidth = await page.$eval('.dashboard-grid', (g) => Math.round(g.getBoundingClientRect().width));
    for (const w of widths) expect(Math.abs(w - gridWidth)).toBeLessThanOrEqual(2);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await moves.shot('dashboard-phone');
    await page.setViewport({ width: 1280, height: 800 });
    // The phone's one column was not saved over the layout.
    expect((await dashboard()).tiles[4].x).toBe(movedX);
  });

  test('opened again after events arrived: the last answers at once, each marked with its time, then the current ones', async () => {
    const purchases = `${tile('purchases')} .tile-number-value`;
    const shown = Number(await page.$eval(purchases, (e) => e.getAttribute('data-value')));
    await sendEvents(svc, [{ type: 'track', event: 'purchase', userId: 'bob', properties: { amount: 7 } }]);
    // The current answers are held until released, so the earlier ones stay on screen to be looked at.
    await page.evaluate(() => {
      const fetchOf = (window.unheldFetch = window.fetch);
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      window.releaseCurrent = release;
      window.fetch = async (input: any, init?: any) => {
        const res = await fetchOf(input, init);
        if (/\/results$/.test(String(input))) await released;
        return res;
      };
    });
    const url = page.url();
    await page.evaluate(() => (location.hash = '#/sql'));
    await page.waitForSelector('.sql-layout');
    await page.goto(url);
    await page.waitForSelector(`${tile('purchases')}.tile-stale ${'.tile-number-value'}`);
    // Every tile with an answer read events, which changed: each is marked with the time it was asked, faded, and shows what it showed (the failing one has none kept).
    expect(await page.$$eval('.tile-stale', (e) => e.length)).toBe(4);
    expect(await page.$eval(`${tile('trends')} .tile-age`, (e) => e.textContent)).toMatch(/^as of \d\d:\d\d$/);
    expect(await page.$eval(`${tile('trends')} .tile-age`, (e) => e.getAttribute('title'))).toContain('Events arrived since');
    expect(Number(await page.$eval(purchases, (e) => e.getAttribute('data-value')))).toBe(shown);
    expect(await page.$eval('.toolbar [role="status"]', (e) => e.textContent)).toContain('computing the current ones');
    await moves.shot('dashboard-stale');

    await page.evaluate(() => window.releaseCurrent());
    await page.waitForFunction((sel: string, n: number) => Number(document.querySelector(sel)?.getAttribute('data-value')) === n && !document.querySelector('.tile-stale'), {}, purchases, shown + 1);
    expect(await page.$$eval('.tile-age', (e) => e.map((x) => x.textContent))).toEqual(['', '', '', '', '']);
    expect(await page.$eval('.toolbar [role="status"]', (e) => e.textContent)).toStartWith('Updated');
    await page.evaluate(() => (window.fetch = window.unheldFetch));
  });

  test('dashboards: listed, renamed, a tile removed, deleted (its saved insights stay)', async () => {
    const { go, press, waitForText } = moves;
    await page.waitForSelector(tile('broken'));
    // Removed while a layout change waits to be saved (the last tile moved with the keyboard), and
    // the service slow to answer the removal: the layout's save, due meanwhile, must not store
    // the tiles as they were before it (CI's Deno run lost a removal so).
    await page.evaluate(() => {
      const fetchOf = window.fetch;
      // The tiles of each dashboard saved from here on, in the order sent.
      const sent: number[] = (window.savedTileCounts = []);
      window.fetch = async (input: any, init?: any) => {
        const tiles = init?.method === 'PUT' ? JSON.parse(String(init.body)).tiles?.length : undefined;
        if (tiles !== undefined) sent.push(tiles);
        const res = await fetchOf(input, init);
        if (tiles === 4 && sent.indexOf(4) === sent.length - 1) await new Promise((resolve) => setTimeout(resolve, 1500));
        return res;
      };
    });
    await page.focus(tile('retention'));
    await page.keyboard.press('ArrowLeft');
    await page.$eval(`${tile('broken')} .icon-button`, (b) => (b as any).click());
    // Once the page has the removal's answer, the layout's save was due long before: none was
    // sent after the removal with the tile in it.
    await page.waitForFunction(() => document.querySelectorAll('.tile').length === 4);
    const sent: number[] = await page.evaluate(() => window.savedTileCounts);
    expect(sent.slice(sent.indexOf(4))).not.toContain(5);
    await stored((d) => d.tiles.length === 4 && !d.tiles.some((t: any) => t.insightId === ids.broken), 'the failing tile removed');

    await go('dashboards');
    await waitForText('.data-table', 'Growth');
    expect(await page.$eval('tr[data-name="Growth"]', (e) => e.textContent)).toContain('4 tiles');
    await press('Rename', 'tr[data-name="Growth"]');
    await page.waitForSelector('dialog[open] input[name="name"]');
    await page.$eval('dialog[open] input[name="name"]', (i) => ((i as any).value = 'Growth weekly'));
    await press('Save', 'dialog[open]');
    await waitForText('.data-table', 'Growth weekly');
    expect((await dashboard()).name).toBe('Growth weekly');
    await moves.shot('dashboards');

    // From the saved insights, onto a new dashboard.
    await go('saved');
    await press('Add to dashboard', 'tr[data-name="Broken statement"]');
    await page.waitForSelector('dialog[open] select[name="dashboard"]');
    await page.select('dialog[open] select[name="dashboard"]', '');
    await page.type('dialog[open] input[name="dashboardName"]', 'Spare');
    await press('Add tile', 'dialog[open]');
    await waitForText('.notice', 'Added to Spare');
    const spare = (await call('GET', '/dashboards')).results.find((d: any) => d.name === 'Spare');
    expect(spare.tiles).toEqual([{ insightId: ids.broken, x: 0, y: 0, w: 6, h: 4 }]);
    await go('dashboards');
    await press('Delete', 'tr[data-name="Spare"]');
    await press('Delete dashboard', 'dialog[open]');
    await waitForText('.notice', 'Deleted Spare');
    expect((await svc.request('GET', `/dashboards/${spare.id}`, { key: svc.privateKey })).status).toBe(404);
    expect((await call('GET', '/insights/saved')).total).toBe(5);
  });

  test('persons: searched, paged, and a person page with ids, traits, first and last seen and the event timeline', async () => {
    const { go, waitForText } = moves;
    await go('persons');
    // (limit=1: GET /persons?limit=0 answers a total of 0.)
    const all = await call('GET', '/persons?limit=1');
    await waitForText('.result-summary', `of ${all.total} persons`);
    expect(all.total).toBe(28);
    // 50 a page: all of them on one; the pager's next page is off.
    expect(await page.$$eval('tbody tr', (r) => r.length)).toBe(28);
    await moves.shot('persons');

    await page.type('input[name="search"]', 'example.com');
    await waitForText('.result-summary', 'of 3 persons');
    expect(await page.evaluate(() => location.hash)).toBe('#/persons?search=example.com');
    expect((await page.$$eval('tbody tr', (r) => r.map((x) => x.getAttribute('data-person')))).toSorted()).toEqual(['ada', 'bob', 'cy']);

    await page.click('tr[data-person="ada"] a');
    await page.waitForSelector('[data-field="eventCount"]');
    const ada = await call('GET', '/persons/ada');
    expect(ada.anonymousIds).toEqual(['anon-ada']);
    expect(await page.$eval('.person-cards', (e) => e.textContent)).toContain('anon-ada');
    expect(await page.$eval('.person-cards', (e) => e.textContent)).toContain('ada@example.com');
    expect(await page.$eval('[data-field="eventCount"]', (e) => e.textContent)).toBe(String(ada.eventCount));
    const events = await call('GET', '/persons/ada/events?limit=50');
    await waitForText('.timeline-card', `${events.total} of ${events.total} events`);
    expect(await page.$$eval('.timeline-row', (r) => r.length)).toBe(events.total);
    // Newest first; the anonymous page view before sign-up is Ada's, shown by its path.
    expect(await page.$eval('.timeline-row .timeline-event', (e) => e.textContent)).toBe('purchase');
    expect(await page.$$eval('.timeline-row .timeline-event', (e) => e.at(-1)?.textContent)).toBe('/pricing');
    await moves.shot('person');
    await page.$eval('.timeline-row', (b) => (b as any).click());
    await page.waitForSelector('dialog[open] .json');
    await page.keyboard.press('Escape');

    // The address reopens the person.
    expect(await page.evaluate(() => location.hash)).toBe('#/persons/ada');
    await page.reload();
    await page.waitForSelector('[data-field="eventCount"]');
  });

  test('cohorts: created with a person-property and a behavioural filter, its size shown as the API counts it; edited, deleted', async () => {
    const { go, press, waitForText } = moves;
    await go('cohorts');
    await waitForText('.notice', 'No cohorts yet');
    await page.click('a[href="#/cohorts/new"]');
    await page.waitForSelector('form[aria-label="Cohort"] input[name="name"]');
    await page.type('input[name="name"]', 'Pro buyers');
    await page.type('.cohort-filter input[name="property"]', 'plan');
    await page.type('.cohort-filter input[name="value"]', 'pro');
    await press('+ Performed event');
    await page.type('.cohort-filter:nth-child(2) input[name="performed"]', 'purchase');
    await press('Create cohort');
    await page.waitForFunction(() => /^#\/cohorts\/[0-9a-f-]{36}$/.test(location.hash));
    const id = (await page.evaluate(() => location.hash)).split('/')[2]!;
    const cohort = await call('GET', `/cohorts/${id}`);
    expect(cohort.filters).toEqual([
      { property: 'plan', operator: 'eq', value: 'pro' },
      { performed: 'purchase', atLeast: 1, withinDays: 30 },
    ]);
    expect(cohort.size).toBe(2);
    await page.waitForSelector('.cohort-size-value');
    expect(await page.$eval('.cohort-size-value', (e) => Number(e.getAttribute('data-value')))).toBe(2);
    await moves.shot('cohort-editor');

    // Twice: only Ada bought twice.
    await page.$eval('.cohort-filter:nth-child(2) input[name="atLeast"]', (i) => ((i as any).value = '2'));
    await press('Save');
    await waitForText('.notice', 'Saved Pro buyers');
    await page.waitForFunction(() => document.querySelector('.cohort-size-value')?.getAttribute('data-value') === '1');
    expect((await call('GET', `/cohorts/${id}`)).size).toBe(1);

    // Its members in the persons list.
    await page.click('.cohort-size a');
    await waitForText('.result-summary', 'of 1 persons');
    expect(await page.$$eval('tbody tr', (r) => r.map((x) => x.getAttribute('data-person')))).toEqual(['ada']);

    await page.setViewport({ width: 390, height: 844 });
    await go(`cohorts/${id}`);
    await page.waitForSelector('.cohort-size-value');
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await moves.shot('cohort-editor-phone');
    await page.setViewport({ width: 1280, height: 800 });

    await page.emulateMediaFeatures([{ name: 'prefers-color-scheme', value: 'dark' }]);
    await go('persons/cy');
    await page.waitForSelector('.timeline-row');
    await moves.shot('person-dark');
    await page.emulateMediaFeatures([{ name: 'prefers-color-scheme', value: 'light' }]);

    await go(`cohorts/${id}`);
    await page.waitForSelector('.cohort-size-value');
    await press('Delete');
    await press('Delete cohort', 'dialog[open]');
    await page.waitForFunction(() => location.hash === '#/cohorts');
    expect((await svc.request('GET', `/cohorts/${id}`, { key: svc.privateKey })).status).toBe(404);
  });

  test('every control is reached with Tab; nothing reached another host; nothing failed in the page', async () => {
    await moves.go(`dashboards/${dashboardId}`);
    await page.waitForSelector(`${tile('purchases')} .tile-number-value`);
    // Tab from the top reaches the dashboard's controls and its tiles.
    await page.focus('.skip-link');
    const reached = new Set<string>();
    for (let i = 0; i < 80; i++) {
      await page.keyboard.press('Tab');
      reached.add(await page.evaluate(() => {
        const e = document.activeElement;
        return e?.matches('.tile') ? 'tile' : e?.getAttribute('name') ?? e?.textContent?.trim().slice(0, 20) ?? '';
      }));
    }
    for (const control of ['range', 'refresh', '+ Add insight', 'tile']) expect(reached).toContain(control);
    expect(faults.blocked).toEqual([]);
    expect(faults.errors).toEqual([]);
    expect(page.url()).not.toContain(svc.privateKey);
  });
});
