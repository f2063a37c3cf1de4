import { afterAll, beforeAll, expect, test } from 'bun:test';
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'puppeteer-core';
import { describeInChromium, launchChromium, type Chromium } from '../helpers/chromium';
import { PROJECT_ROOT } from '../helpers/project-root';
import { sendEvents, startTestService, type TestService } from '../helpers/test-service';
import { insightsLog } from './insights-log';

/**
 * The console's insight builders in headless Chromium, offline but for the service: a known
 * event log (tests/console/insights-log.ts) is sent through the API, then each kind is built with
 * the form, and what the page shows is compared with what the API answers for the query in the
 * page's URL, and with the answers the log was made to have. Screenshots go to docs/screenshots/
 * with CONSOLE_SCREENSHOTS=1 (npm run screenshots), to a temporary folder otherwise.
 */
// The functions passed to page.evaluate run in the page; this file is type-checked without the
// DOM library (as console.browser.test.ts).
declare const document: any;
declare const location: { hash: string };
declare const window: { scrollTo(x: number, y: number): void };

const SHOTS = process.env.CONSOLE_SCREENSHOTS ? join(PROJECT_ROOT, 'docs', 'screenshots') : mkdtempSync(join(tmpdir(), 'insights-shots-'));
/** The workspace's time zone, which new insights count in. */
const TIME_ZONE = 'Europe/Paris';
/** The browser's, which they do not. */
const BROWSER_ZONE = 'America/Los_Angeles';

interface TrendResult {
  label: string;
  series?: number;
  breakdownValue?: string;
  compare?: string;
  labels: string[];
  data: number[];
  total: number;
}

describeInChromium('the insight builders in Chromium', () => {
  let svc: TestService;
  let chromium: Chromium;
  let page: Page;
  const blocked: string[] = [];
  const errors: string[] = [];

  /** A screenshot of the viewport, from the top of the page unless told to keep its scroll. */
  const shot = async (name: string, keepScroll = false) => {
    mkdirSync(SHOTS, { recursive: true });
    if (!keepScroll) await page.evaluate(() => window.scrollTo(0, 0));
    await page.screenshot({ path: join(SHOTS, `insights-${name}.png`) as `${string}.png` });
  };
  /** Light, then dark, of the screen as it is. */
  const shots = async (name: string) => {
    await page.evaluate(() => document.activeElement?.blur());
    await shot(name);
    await page.emulateMediaFeatures([{ name: 'prefers-color-scheme', value: 'dark' }]);
    await Bun.sleep(150);
    await shot(`${name}-dark`);
    await page.emulateMediaFeatures([{ name: 'prefers-color-scheme', value: 'light' }]);
  };
  /** The API's answer to the query the page's URL holds now. */
  const apiAnswer = async <T>(kind: string): Promise<{ query: Record<string, unknown>; answer: T }> => {
    const hash = await page.evaluate(() => location.hash);
    const params = new URLSearchParams(hash.slice(hash.indexOf('?') + 1));
    const query = JSON.parse(params.get('q') ?? 'null') as Record<string, unknown>;
    const res = await svc.request('POST', `/insights/${kind}`, { key: svc.privateKey, body: query });
    expect(res.status).toBe(200);
    return { query, answer: (await res.json()) as T };
  };
  /** Waits until the query has rested and its answer is drawn. */
  const settled = async () => {
    await Bun.sleep(550);
    await page.waitForFunction(() => !document.querySelector('.insight-result-body[aria-busy]') && !document.querySelector('.insight-status')?.textContent?.startsWith('Updating'), { timeout: 20_000 });
    await Bun.sleep(100);
  };
  const openKind = async (kind: string) => {
    await page.evaluate((k: string) => (location.hash = `#/insights/${k}`), kind);
    await page.waitForSelector(`.kind-tab[aria-current="page"][data-kind="${kind}"]`);
    await page.waitForSelector('.insight-query .q-section');
    await settled();
  };
  /** Replaces an input's text as a person would: select it all, then type. */
  const typeInto = async (selector: string, text: string) => {
    await page.click(selector, { clickCount: 3 });
    await page.keyboard.press('Backspace');
    await page.type(selector, text);
    await page.keyboard.press('Tab');
  };
  const press = async (label: string, scope = 'body') => {
    const handle = await page.waitForFunction(
      (s: string, l: string) => [...document.querySelectorAll(`${s} button`)].find((b: any) => b.textContent?.trim().startsWith(l) && !b.disabled),
      {},
      scope,
      label,
    );
    await (handle as unknown as { click(): Promise<void> }).click();
  };
  const texts = (selector: string) => page.$$eval(selector, (els) => els.map((e) => (e.textContent ?? '').trim()));
  /** Moves the mouse over period `index` of the chart and reads the legend's values (series after the x). */
  const legendAt = async (index: number, periods: number, bars: boolean): Promise<string[]> => {
    const box = (await (await page.$('.period-chart .u-over'))!.boundingBox())!;
    const at = bars ? (index + 0.5) / periods : periods === 1 ? 0.5 : index / (periods - 1);
    // Not on the plot's very edge, which is outside it.
    await page.mouse.move(box.x + Math.min(box.width - 2, Math.max(2, at * box.width)), box.y + box.height / 2);
    await Bun.sleep(80);
    return (await texts('.period-chart .u-legend .u-series td.u-value')).slice(1);
  };
  const format = (n: number) => new Intl.NumberFormat('en-US', { maximumFractionDigits: 2 }).format(n);

  beforeAll(async () => {
    svc = await startTestService();
    // The workspace counts in Paris; the browser is elsewhere: a new insight takes the workspace's zone.
    const { workspace } = (await (await svc.request('GET', '/whoami', { key: svc.privateKey })).json()) as { workspace: { workspaceId: string; name: string } };
    expect((await svc.request('PUT', `/workspaces/${workspace.workspaceId}`, { key: svc.privateKey, body: { name: workspace.name, timezone: TIME_ZONE } })).status).toBe(200);
    await sendEvents(svc, insightsLog(Date.now(), TIME_ZONE));
    chromium = await launchChromium();
    ({ page } = await chromium.newPage());
    await page.setViewport({ width: 1280, height: 800 });
    await page.emulateTimezone(BROWSER_ZONE);
    await page.emulateMediaFeatures([{ name: 'prefers-color-scheme', value: 'light' }]);
    await page.setRequestInterception(true);
    page.on('request', (request) => {
      const url = request.url();
      if (url.startsWith(`${svc.url}/`) || url.startsWith('data:') || url.startsWith('blob:')) return void request.continue();
      blocked.push(url);
      void request.abort('internetdisconnected');
    });
    page.on('pageerror', (err) => errors.push(`page error: ${(err as Error).message}`));
    page.on('console', (message) => {
      if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) errors.push(`console: ${message.text()}`);
    });
    await page.evaluateOnNewDocument("document.addEventListener('securitypolicyviolation', (e) => console.error(`CSP violation: ${e.violatedDirective} ${e.blockedURI}`))");
    await page.goto(`${svc.url}/console`);
    await page.waitForSelector('#key');
    await page.type('#key', svc.privateKey);
    await page.keyboard.press('Enter');
    await page.waitForSelector('a.nav-link[data-path="insights"]');
  });
  afterAll(async () => {
    await chromium?.close();
    await svc?.stop();
  });

  test("the navigation opens Insights with its six kinds as tabs; a new trend is in the workspace's time zone, not the browser's", async () => {
    await page.click('a.nav-link[data-path="insights"]');
    await page.waitForSelector('a.nav-link.active[data-path="insights"]');
    expect(await page.$$eval('.kind-tab', (tabs) => tabs.map((t) => t.getAttribute('data-kind')))).toEqual(['trends', 'funnels', 'retention', 'paths', 'stickiness', 'lifecycle']);
    await page.waitForSelector('.insight-query .event-input');
    await settled();
    const { query } = await apiAnswer<unknown>('trends');
    expect(query.timezone).toBe(TIME_ZONE);
    expect(query.dateFrom).toBe('-7d');
    // The tabs are links: the keyboard opens them.
    await page.focus('.kind-tab[data-kind="funnels"]');
    await page.keyboard.press('Enter');
    await page.waitForSelector('.kind-tab[aria-current="page"][data-kind="funnels"]');
    await page.waitForSelector('input[aria-label="Step 2: event"]');
  });

  test('trends: two series built in the form; the line, table and number show the API answer', async () => {
    await openKind('trends');
    await typeInto('input[aria-label="Series A: event"]', 'signup');
    await press('+ Add series');
    await page.waitForSelector('input[aria-label="Series B: event"]');
    await typeInto('input[aria-label="Series B: event"]', '$pageview');
    await page.select('select[aria-label="Series B: math"]', 'persons');
    await settled();
    const { query, answer } = await apiAnswer<{ results: TrendResult[] }>('trends');
    expect(query.series).toEqual([{ event: 'signup' }, { event: '$pageview', math: 'persons' }]);
    const [signup, persons] = answer.results;
    // The log's answers: 8 sign-ups (6 on day -6, 2 on day -4), 10 persons with a page view.
    expect(signup!.total).toBe(8);
    expect(persons!.total).toBe(10);

    // The line: the legend reads the drawn values where the mouse is.
    await page.waitForSelector('.period-chart[data-mode="line"] canvas');
    const periods = signup!.labels.length;
    for (const i of [0, signup!.data.indexOf(6), signup!.data.indexOf(2), periods - 1]) {
      expect(await legendAt(i, periods, false)).toEqual([format(signup!.data[i]!), format(persons!.data[i]!)]);
    }
    await shots('trends');
    // Today is not over: the line's last segment is drawn apart (dashed), the table's column marked.
    expect((answer as { incompleteFrom?: string }).incompleteFrom).toBe(signup!.labels.at(-1));
    expect(await page.$eval('.period-chart', (el) => el.getAttribute('data-incomplete-from'))).toBe(String(periods - 1));

    await press('Table', '.insight-output');
    await page.waitForSelector('.insight-table');
    const rows = await page.$$eval('.insight-table tbody tr', (trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent)));
    expect(rows).toEqual(answer.results.map((r) => [...r.data.map(format), format(r.total)]));
    expect(await page.$$eval('.insight-table thead th.incomplete', (ths) => ths.length)).toBe(1);
    expect(await page.$$eval('.insight-table tbody td.incomplete', (tds) => tds.length)).toBe(2);
    expect(await texts('.insight-table tbody th')).toEqual(['A · signup', 'B · $pageview']);

    await press('Number', '.insight-output');
    await page.waitForSelector('.big-number');
    expect(await texts('.big-number-value')).toEqual(['8', '10']);
    await shot('trends-number');

    await press('Bar', '.insight-output');
    await page.waitForSelector('.period-chart[data-mode="bar"] canvas');
    const sixth = signup!.data.indexOf(6);
    expect(await legendAt(sixth, periods, true)).toEqual([format(6), format(persons!.data[sixth]!)]);
  });

  test('trends: a breakdown by plan and the previous period, drawn dashed beside the current one', async () => {
    await page.click('.insight-query input[aria-label="Breakdown property"]');
    await page.type('.insight-query input[aria-label="Breakdown property"]', 'plan');
    // Only the sign-ups have a plan: the page views would be one "(none)" line.
    await page.click('button[aria-label="Remove series b"]');
    await page.click('.insight-query input[type="checkbox"]');
    await settled();
    const { query, answer } = await apiAnswer<{ results: TrendResult[] }>('trends');
    expect(query).toMatchObject({ breakdown: { property: 'plan' }, compare: true });
    const current = answer.results.filter((r) => r.compare === 'current');
    expect(Object.fromEntries(current.map((r) => [r.breakdownValue, r.total]))).toEqual({ free: 3, pro: 3, team: 2 });
    await press('Line', '.insight-output');
    await page.waitForSelector('.period-chart[data-mode="line"] canvas');
    const names = await texts('.period-chart .u-legend .u-series th');
    expect(names.slice(1)).toEqual(answer.results.map((r) => `A · signup · ${r.breakdownValue}${r.compare === 'previous' ? ' (previous)' : ''}`));
    const day = current[0]!.data.findIndex((v) => v > 0);
    expect(await legendAt(day, current[0]!.labels.length, false)).toEqual(answer.results.map((r) => format(r.data[day]!)));
    await shot('trends-breakdown');
  });

  test('the URL reopens the same insight after a reload, and Save stores it as a saved insight', async () => {
    await press('Table', '.insight-output');
    await page.waitForSelector('.insight-table');
    const table = await texts('.insight-table tbody td');
    const before = await page.evaluate(() => location.hash);
    expect(before).toContain('chart=table');
    expect(before).not.toContain(svc.privateKey);
    await page.reload();
    await page.waitForSelector('.insight-table');
    expect(await page.evaluate(() => location.hash)).toBe(before);
    expect(await texts('.insight-table tbody td')).toEqual(table);
    expect(await page.$eval('.insight-query input[aria-label="Breakdown property"]', (i) => (i as unknown as { value: string }).value)).toBe('plan');

    await press('Save', '.insight-header');
    await page.waitForSelector('dialog[open] input[name="name"]');
    await page.$eval('dialog[open] input[name="name"]', (i) => ((i as unknown as { value: string }).value = ''));
    await page.type('dialog[open] input[name="name"]', 'Sign-ups by plan');
    await shot('save');
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => location.hash.includes('saved='));
    const hash = await page.evaluate(() => location.hash);
    const id = new URLSearchParams(hash.slice(hash.indexOf('?') + 1)).get('saved')!;
    expect(hash).toBe(`#/insights/trends?saved=${id}`);
    const saved = (await (await svc.request('GET', `/insights/saved/${id}`, { key: svc.privateKey })).json()) as { name: string; kind: string; query: Record<string, unknown>; display: Record<string, unknown> };
    expect(saved).toMatchObject({ name: 'Sign-ups by plan', kind: 'trends', display: { chart: 'table' } });
    expect(saved.query).toMatchObject({ series: [{ event: 'signup' }], breakdown: { property: 'plan' }, compare: true, timezone: TIME_ZONE });

    // The saved insight's URL opens it, as saved, in a page that never built it.
    const { page: other } = await chromium.newPage();
    await other.goto(`${svc.url}/console`);
    await other.waitForSelector('#key');
    await other.type('#key', svc.privateKey);
    await other.keyboard.press('Enter');
    await other.waitForSelector('a.nav-link[data-path="insights"]');
    await other.evaluate((h: string) => (location.hash = h), `#/insights/funnels?saved=${id}`);
    await other.waitForFunction(() => location.hash.startsWith('#/insights/trends?saved='));
    await other.waitForSelector('.insight-table');
    expect(await other.$eval('.insight-name', (e) => e.textContent)).toBe('Sign-ups by plan');
    expect(await other.$$eval('.insight-table tbody td', (tds) => tds.map((td) => (td.textContent ?? '').trim()))).toEqual(table);
    await other.close();

    // A change after saving shows in the name and in the URL, which keeps the saved id.
    await page.select('select[aria-label="Series A: math"]', 'persons');
    await page.waitForFunction(() => location.hash.includes('&q='));
    await page.waitForFunction(() => document.querySelector('.insight-name')?.textContent === 'Sign-ups by plan (changed)');
    // Update replaces the saved insight; Save as new would have made another.
    await press('Save', '.insight-header');
    await press('Update', 'dialog[open]');
    await page.waitForFunction((h: string) => location.hash === h, {}, `#/insights/trends?saved=${id}`);
    await page.waitForFunction(() => document.querySelector('.insight-name')?.textContent === 'Sign-ups by plan');
    const updated = (await (await svc.request('GET', `/insights/saved/${id}`, { key: svc.privateKey })).json()) as { query: { series: unknown[] } };
    expect(updated.query.series).toEqual([{ event: 'signup', math: 'persons' }]);
    const list = (await (await svc.request('GET', '/insights/saved', { key: svc.privateKey })).json()) as { total: number };
    expect(list.total).toBe(1);
  });

  test('funnels: three steps; the counts, conversion and drop-off shown are the API answer', async () => {
    await openKind('funnels');
    await typeInto('input[aria-label="Step 1: event"]', '$pageview');
    await typeInto('input[aria-label="Step 2: event"]', 'signup');
    await press('+ Add step');
    await page.waitForSelector('input[aria-label="Step 3: event"]');
    await typeInto('input[aria-label="Step 3: event"]', 'purchase');
    await page.click('.q-dates button[data-range="-7d"]');
    await settled();
    const { query, answer } = await apiAnswer<{ results: Array<{ steps: Array<{ count: number; conversionRate: number; stepConversionRate: number }> }> }>('funnels');
    expect(query.steps).toEqual([{ event: '$pageview' }, { event: 'signup' }, { event: 'purchase' }]);
    const steps = answer.results[0]!.steps;
    // The log's answer: 10 persons viewed a page, 8 of them signed up, 4 of those purchased.
    expect(steps.map((s) => s.count)).toEqual([10, 8, 4]);
    expect(await texts('.funnel-count')).toEqual(['10 persons', '8 persons', '4 persons']);
    expect(await texts('.funnel-rate')).toEqual(['100%', '80.0%', '40.0%']);
    expect(await texts('.funnel-step-rate')).toEqual(['80.0% of step 1', '50.0% of step 2']);
    expect(await texts('.funnel-dropped')).toEqual(['2 dropped off (20.0%)', '4 dropped off (50.0%)']);
    expect(await texts('.funnel-time')).toHaveLength(2);
    await shots('funnels');

    // A breakdown by the person's plan: a funnel per value, side by side.
    await page.select('.insight-query select[aria-label="Breakdown: whose property"]', 'person');
    await page.type('.insight-query input[aria-label="Breakdown property"]', 'plan');
    await settled();
    const split = await apiAnswer<{ results: Array<{ breakdownValue: string; steps: Array<{ count: number }> }> }>('funnels');
    expect(await page.$$eval('.funnel-column', (cols) => cols.map((c) => c.getAttribute('data-breakdown')))).toEqual(split.answer.results.map((r) => r.breakdownValue));
    const counts = await page.$$eval('.funnel-column', (cols) => cols.map((c) => [...c.querySelectorAll('.funnel-count')].map((e) => e.textContent)));
    expect(counts).toEqual(split.answer.results.map((r) => r.steps.map((s) => `${s.count} ${s.count === 1 ? 'person' : 'persons'}`)));
    await shot('funnels-breakdown');
  });

  /** The persons the API lists behind a point of the insight the page's URL holds. */
  const personsBehind = async (kind: string, selector: Record<string, unknown>) => {
    const { query } = await apiAnswer<unknown>(kind);
    const res = await svc.request('POST', `/insights/${kind}/persons`, { key: svc.privateKey, body: { query, ...selector } });
    expect(res.status).toBe(200);
    return (await res.json()) as { results: Array<{ personId: string }>; total: number };
  };
  /** The persons the open dialog lists, once loaded. */
  const listed = async () => {
    await page.waitForFunction(() => document.querySelector('dialog[open] .actors-status')?.textContent?.match(/^\d/));
    return { status: await texts('dialog[open] .actors-status'), ids: await page.$$eval('dialog[open] .actors-list li', (lis) => lis.map((li) => li.getAttribute('data-actor'))) };
  };

  test('opens a person from a funnel step: the step lists the persons it counts, each linking to their page', async () => {
    // The funnel above, broken down by plan: the second step of the first value.
    const column = await page.$eval('.funnel-column', (c) => ({ value: c.getAttribute('data-breakdown'), count: c.querySelectorAll('.funnel-count')[1]?.textContent }));
    const api = await personsBehind('funnels', { step: 1, breakdownValue: column.value });
    expect(`${api.total} ${api.total === 1 ? 'person' : 'persons'}`).toBe(column.count!);
    await page.click('.funnel-column .funnel-step[data-step="1"] button.funnel-rail');
    const shown = await listed();
    expect(shown).toEqual({ status: [column.count!], ids: api.results.map((r) => r.personId) });
    await shot('persons');
    // The keyboard reaches the drop-off too: its list is those of step 1 who are not in step 2's.
    await page.keyboard.press('Escape');
    await page.waitForFunction(() => !document.querySelector('dialog[open]'));
    await page.focus('.funnel-column .funnel-step[data-step="1"] button.funnel-dropped');
    await page.keyboard.press('Enter');
    const dropped = await listed();
    expect(dropped.ids).toEqual((await personsBehind('funnels', { step: 1, dropped: true, breakdownValue: column.value })).results.map((r) => r.personId));
    await page.keyboard.press('Escape');
    await page.waitForFunction(() => !document.querySelector('dialog[open]'));

    await page.click('.funnel-column .funnel-step[data-step="1"] button.funnel-rail');
    await listed();
    const first = api.results[0]!.personId;
    await page.click(`dialog[open] .actors-list li[data-actor="${first}"] a`);
    await page.waitForFunction((id: string) => location.hash === `#/persons/${encodeURIComponent(id)}`, {}, first);
    await page.waitForFunction((id: string) => document.querySelector('h1')?.textContent === id, {}, first);
    expect(await page.$('dialog[open]')).toBeNull();
  });

  test('retention: the cohort table and its curve show the API answer', async () => {
    await openKind('retention');
    await typeInto('input[aria-label="Start event"]', 'signup');
    await typeInto('input[aria-label="Return event"]', '$any');
    await settled();
    const { answer } = await apiAnswer<{ results: Array<{ cohort: string; size: number; values: number[] }> }>('retention');
    const shown = await page.$$eval('.retention-table tbody tr', (trs) =>
      trs.map((tr) => ({ cohort: tr.getAttribute('data-cohort'), size: tr.querySelector('td.size')?.textContent, values: [...tr.querySelectorAll('td[data-count]')].map((td) => Number(td.getAttribute('data-count'))) })),
    );
    expect(shown).toEqual(answer.results.map((r) => ({ cohort: r.cohort, size: String(r.size), values: r.values })));
    // The log's answer: the 6 who signed up on day -6 came back 4, 2 and 1 days later as 4, 2, 1.
    const first = answer.results.find((r) => r.size === 6)!;
    expect(first.values.slice(0, 4)).toEqual([6, 4, 2, 1]);
    expect(await page.$eval(`.retention-table tr[data-cohort="${first.cohort}"] td.ret-heat`, (td) => td.textContent)).toBe('100%');
    await page.waitForSelector('.period-chart canvas');
    await shots('retention');
    // Today is not over: each cohort's last cell (today's) is hatched, and the curve leaves them out:
    // its last point, of the first cohort's day 6 (today), is none, not a drop to 0%.
    const incomplete = await page.$$eval('.retention-table tbody tr', (trs) => trs.map((tr) => [...tr.querySelectorAll('td[data-count]')].map((td) => td.classList.contains('incomplete'))));
    expect(incomplete).toEqual(answer.results.map((r) => r.values.map((_, k) => k === r.values.length - 1)));
    const after = Math.max(...answer.results.map((r) => r.values.length));
    expect((await legendAt(after - 1, after, false))[0]).toBe('—');
    expect((await legendAt(0, after, false))[0]).toBe('100.0%');

    // A cell lists those of its cohort who came back: the 4 of day 1.
    await page.click(`.retention-table tr[data-cohort="${first.cohort}"] td[data-count]:nth-of-type(3) button`);
    const returned = await listed();
    const api = await personsBehind('retention', { cohort: first.cohort, period: 1 });
    expect(api.total).toBe(4);
    expect(returned).toEqual({ status: ['4 persons'], ids: api.results.map((r) => r.personId) });
    await page.keyboard.press('Escape');
    await page.waitForFunction(() => !document.querySelector('dialog[open]'));
  });

  test('paths: a Sankey diagram (SVG) with the nodes of the answer', async () => {
    await openKind('paths');
    await page.waitForSelector('.sankey svg g[data-node]');
    const { answer } = await apiAnswer<{ results: Array<{ source: string; target: string; value: number }> }>('paths');
    const nodes = new Set(answer.results.flatMap((e) => [e.source, e.target]));
    expect(new Set(await page.$$eval('.sankey g[data-node]', (gs) => gs.map((g) => g.getAttribute('data-node'))))).toEqual(nodes);
    for (const node of ['1_/pricing', '2_/signup', '3_signup', '4_purchase', '5_/home']) expect(nodes.has(node)).toBe(true);
    expect(await page.$$eval('.sankey path.sankey-link', (ps) => ps.length)).toBe(answer.results.length);
    expect(await texts('.sankey g[data-node="1_/pricing"] text')).toEqual(['/pricing 8']);
    await shots('paths');
  });

  test('stickiness: bars of persons by the number of days they were active', async () => {
    await openKind('stickiness');
    await typeInto('input[aria-label="Series A: event"]', '$pageview');
    await settled();
    const { answer } = await apiAnswer<{ results: Array<{ labels: string[]; data: number[] }> }>('stickiness');
    const { labels, data } = answer.results[0]!;
    // The log's answer: 6 persons viewed pages on one day, 2 on two, 1 on three, 1 (u1) on four.
    expect(data.slice(0, 4)).toEqual([6, 2, 1, 1]);
    await page.waitForSelector('.period-chart[data-mode="bar"] canvas');
    for (const i of [0, 1, 3]) expect(await legendAt(i, labels.length, true)).toEqual([format(data[i]!)]);
    await shots('stickiness');

    // A click on the bar of two days lists its 2 persons; Enter on the focused plot, the 6 of one day.
    await legendAt(1, labels.length, true);
    await page.mouse.down();
    await page.mouse.up();
    expect(await listed()).toEqual({ status: ['2 persons'], ids: (await personsBehind('stickiness', { series: 0, count: 2 })).results.map((r) => r.personId) });
    await page.keyboard.press('Escape');
    await page.waitForFunction(() => !document.querySelector('dialog[open]'));
    await page.focus('.period-chart .u-over');
    await page.keyboard.press('Enter');
    expect((await listed()).status).toEqual(['6 persons']);
    await page.keyboard.press('Escape');
    await page.waitForFunction(() => !document.querySelector('dialog[open]'));
  });

  test('lifecycle: stacked bars, dormant below the axis', async () => {
    await openKind('lifecycle');
    await page.click('.q-dates button[data-range="-7d"]');
    await settled();
    const { query, answer } = await apiAnswer<{ results: Array<{ label: string; labels: string[]; data: number[] }> }>('lifecycle');
    expect(query.series).toEqual([{ event: '$any' }]);
    expect(answer.results.map((r) => r.label)).toEqual(['new', 'returning', 'resurrecting', 'dormant']);
    const dormant = answer.results[3]!;
    const day = dormant.data.findIndex((v) => v < 0);
    expect(day).toBeGreaterThanOrEqual(0);
    await page.waitForSelector('.period-chart[data-mode="stacked"] canvas');
    expect(await legendAt(day, dormant.labels.length, true)).toEqual(answer.results.map((r) => format(r.data[day]!)));
    await shots('lifecycle');
  });

  test('filters: property names and top values are suggested; a filter and a formula change the answer', async () => {
    await openKind('trends');
    await typeInto('input[aria-label="Series A: event"]', 'signup');
    await page.click('[data-scope="filters"] .add-filter');
    await page.waitForSelector('input[aria-label="Filter 1: property"]');
    expect(await page.$$eval('#insight-props-event option', (os) => os.map((o) => o.getAttribute('value')))).toEqual(expect.arrayContaining(['plan', 'amount', 'path', 'event', 'userId']));
    expect(await page.$$eval('#insight-props-person option', (os) => os.map((o) => o.getAttribute('value')))).toEqual(expect.arrayContaining(['plan', 'company']));
    await typeInto('input[aria-label="Filter 1: property"]', 'plan');
    const valueList = await page.$eval('input[aria-label="Filter 1: value"]', (i) => i.getAttribute('list'));
    await page.waitForFunction((id: string) => document.querySelectorAll(`#${id} option`).length === 3, {}, valueList!);
    expect(new Set(await page.$$eval(`#${valueList} option`, (os) => os.map((o) => o.getAttribute('value'))))).toEqual(new Set(['pro', 'free', 'team']));
    await typeInto('input[aria-label="Filter 1: value"]', 'pro');
    await settled();
    let { query, answer } = await apiAnswer<{ results: TrendResult[] }>('trends');
    expect(query.filters).toEqual([{ property: 'plan', operator: 'eq', value: 'pro' }]);
    expect(answer.results[0]!.total).toBe(3);
    await press('Number', '.insight-output');
    await page.waitForFunction(() => document.querySelector('.big-number-value')?.textContent === '3');

    await press('+ Add series');
    await page.waitForSelector('input[aria-label="Series B: event"]');
    await typeInto('input[aria-label="Series B: event"]', 'purchase');
    await typeInto('input[aria-label="Formula"]', 'B / A * 100');
    await settled();
    ({ query, answer } = await apiAnswer<{ results: TrendResult[] }>('trends'));
    expect(query.formula).toBe('B / A * 100');
    // Every pro sign-up purchased: 3 of 3.
    expect(answer.results.map((r) => r.total)).toEqual([100]);
    expect(await texts('.big-number-value')).toEqual(['100']);
    await shot('trends-formula');
  });

  test('at 390x844 (a phone) the query and the chart stack, with nothing wider than the screen', async () => {
    await page.setViewport({ width: 390, height: 844 });
    // The funnels tab reopens the funnel built above (with its breakdown).
    await page.click('.kind-tab[data-kind="funnels"]');
    await page.waitForSelector('.funnel-column .funnel-step');
    await settled();
    await page.evaluate(() => window.scrollTo(0, 0));
    const widths = [await page.evaluate(() => document.documentElement.scrollWidth)];
    await shot('funnels-phone');
    await page.evaluate(() => document.querySelector('.insight-query').scrollIntoView());
    await shot('funnels-phone-query', true);
    // A URL made elsewhere: sign-ups by plan as an area chart.
    const query = { series: [{ event: 'signup' }], breakdown: { property: 'plan' }, dateFrom: '-7d', interval: 'day', timezone: TIME_ZONE };
    await page.evaluate((h: string) => (location.hash = h), `#/insights/trends?${new URLSearchParams({ q: JSON.stringify(query), chart: 'area' })}`);
    await page.waitForSelector('.period-chart[data-mode="area"] canvas');
    await settled();
    expect(await page.$eval('input[aria-label="Series A: event"]', (i) => (i as unknown as { value: string }).value)).toBe('signup');
    await page.evaluate(() => document.activeElement?.blur());
    await page.evaluate(() => window.scrollTo(0, 0));
    widths.push(await page.evaluate(() => document.documentElement.scrollWidth));
    await shot('trends-phone');
    await page.setViewport({ width: 1280, height: 800 });
    expect(widths).toEqual([390, 390]);
  });

  test('nothing reached another host, nothing failed in the page, and no key reached a URL', async () => {
    expect(blocked).toEqual([]);
    expect(errors).toEqual([]);
    expect(page.url()).not.toContain(svc.privateKey);
  });
});
