import { beforeAll, expect, test } from 'bun:test';
import type { Page } from 'puppeteer-core';
import { describeInChromium } from '../helpers/chromium';
import { consoleMoves, type PageFaults } from '../helpers/console-page';
import { consoleSuite } from '../helpers/console-suite';
import { eventually } from '../helpers/eventually';
import { sendEvents, type TestService } from '../helpers/test-service';

/**
 * Data management in Chromium: the catalog's events and properties as the API lists them, a
 * property sent with two types marked, the curated fields saved from the dialog, a tracking plan
 * saved from the editor, its violations and quarantine, and a replay. Screenshots
 * at 1440x900 and phone size, light and dark (docs/console.md).
 */
declare const document: any;

/** A small SaaS log whose `plan` is sent as text by one SDK and as a number by another. */
function seedEvents(): unknown[] {
  const events: unknown[] = [];
  const now = Date.now();
  for (let i = 0; i < 60; i++) {
    const timestamp = new Date(now - i * 3_600_000).toISOString();
    const library = { name: i % 2 ? 'analytics.js' : '@segment/analytics-node', version: '1.0.0' };
    events.push({ type: 'track', event: i % 3 ? 'Order Completed' : 'Signed Up', userId: `u${i % 7}`, properties: { plan: i % 4 ? 'pro' : 3, revenue: i * 2 }, context: { library }, timestamp });
    if (i % 5 === 0) events.push({ type: 'page', anonymousId: `a${i}`, properties: { path: '/pricing' }, context: { library }, timestamp });
  }
  return events;
}

describeInChromium('data management in Chromium', () => {
  const suite = consoleSuite(seedEvents);
  let svc: TestService;
  let page: Page;
  let faults: PageFaults;
  let moves: ReturnType<typeof consoleMoves>;
  const catalog = async (what: string) => ((await (await svc.request('GET', `/catalog/${what}?limit=1000`, { key: svc.privateKey })).json()) as { results: any[] }).results;

  beforeAll(async () => {
    ({ svc, page, faults } = suite);
    moves = consoleMoves(page);
    await eventually('the catalog has the events', async () => (await catalog('events')).length === 3);
  });

  const rows = () => page.evaluate(() => [...document.querySelectorAll('.catalog-table tbody tr')].map((tr: any) => tr.dataset.name));

  test('the events are listed as the API lists them, most received first', async () => {
    await moves.go('data/events');
    await page.waitForSelector('.catalog-events tbody tr');
    expect(await rows()).toEqual((await catalog('events')).map((e) => e.name));
    await moves.shot('data-events');
  });

  test('a property sent with two types is marked, with each type counted', async () => {
    await moves.go('data/properties');
    await page.waitForSelector('.catalog-properties tbody tr');
    expect(await rows()).toEqual((await catalog('properties')).map((p) => p.name));
    const plan = await page.$eval('.catalog-properties tr[data-name="plan"] .catalog-mixed', (td: any) => td.textContent);
    const types = (await catalog('properties')).find((p) => p.name === 'plan').types as Array<{ type: string; count: number }>;
    expect(types.length).toBe(2);
    for (const t of types) expect(plan).toContain(`${t.type} ${t.count}`);
    await moves.shot('data-properties');
  });

  test('the curated fields are saved from the dialog, and the row shows them', async () => {
    await moves.go('data/events');
    await page.waitForSelector('.catalog-events tr[data-name="Signed Up"]');
    await page.locator('.catalog-events tr[data-name="Signed Up"] button').click();
    await page.waitForSelector('dialog[open] textarea[name="description"]');
    await page.type('dialog[open] input[name="displayName"]', 'Sign-up');
    await page.type('dialog[open] textarea[name="description"]', 'A visitor created an account.');
    await page.type('dialog[open] input[name="tags"]', 'growth, funnel');
    await page.locator('dialog[open] input[name="verified"]').click();
    await moves.shot('data-curate');
    await moves.press('Save', 'dialog[open]');
    await moves.waitForText('.catalog-events tr[data-name="Signed Up"]', 'A visitor created an account.');
    const saved = (await catalog('events')).find((e) => e.name === 'Signed Up');
    expect([saved.displayName, saved.description, saved.tags, saved.verified, saved.hidden]).toEqual(['Sign-up', 'A visitor created an account.', ['growth', 'funnel'], true, false]);
    expect(await page.$eval('.catalog-events tr[data-name="Signed Up"]', (tr: any) => tr.textContent)).toContain('verified');
  });

  test("the insight builder's filters use the catalog: a property's types and description beside its name, its types deciding the operators", async () => {
    const patched = await svc.request('PATCH', '/catalog/properties/revenue', { key: svc.privateKey, body: { description: 'Order value in USD' } });
    expect(patched.status).toBe(200);
    await moves.go('insights/trends');
    await page.waitForSelector('[data-scope="filters"] .add-filter');
    await page.waitForFunction(() => document.querySelector('#insight-props-event option[value="revenue"]')?.label);
    expect(await page.$eval('#insight-props-event option[value="revenue"]', (o: any) => o.label)).toBe('number · Order value in USD');
    expect(await page.$eval('#insight-props-event option[value="plan"]', (o: any) => o.label)).toBe('string or number');
    await page.locator('[data-scope="filters"] .add-filter').click();
    const operatorsOf = async (property: string) => {
      await page.$eval('[data-scope="filters"] .f-property', (input: any, p: string) => {
        input.value = p;
        input.dispatchEvent(new Event('input', { bubbles: true }));
        input.dispatchEvent(new Event('change', { bubbles: true }));
      }, property);
      return page.$$eval('[data-scope="filters"] .f-operator option', (os: any[]) => os.map((o) => o.value));
    };
    const numeric = await operatorsOf('revenue');
    expect(numeric).toContain('gt');
    expect(numeric).not.toContain('contains');
    expect(numeric).not.toContain('regex');
    const mixed = await operatorsOf('plan');
    expect(mixed).toContain('gt');
    expect(mixed).toContain('contains');
    const text = await operatorsOf('path');
    expect(text).toContain('contains');
    expect(text).not.toContain('gt');
  });

  test('hiding a property takes it out of "Shown only"', async () => {
    await moves.go('data/properties');
    await page.waitForSelector('.catalog-properties tr[data-name="revenue"] button');
    await page.locator('.catalog-properties tr[data-name="revenue"] button').click();
    await page.waitForSelector('dialog[open] input[name="hidden"]');
    await page.locator('dialog[open] input[name="hidden"]').click();
    await moves.press('Save', 'dialog[open]');
    await moves.waitForText('.catalog-properties tr[data-name="revenue"]', 'hidden');
    await page.select('select[name="hidden"]', 'false');
    await page.waitForFunction(() => document.querySelector('.result-summary')?.textContent.includes('of') && !document.querySelector('.catalog-properties tr[data-name="revenue"]'));
    expect((await catalog('properties')).find((p) => p.name === 'revenue').hidden).toBe(true);
  });

  const PLAN = {
    events: {
      'Order Completed': {
        type: 'object',
        properties: { plan: { type: 'string', enum: ['free', 'pro', 'team'] }, revenue: { type: 'number' }, coupon: { type: 'string', pattern: '^[A-Z]{4}$' } },
        required: ['plan', 'revenue'],
      },
    },
  };

  test('a plan pasted in the editor is saved as a version, and shown as rules per event', async () => {
    await moves.go('data/plan');
    await moves.waitForText('.result-summary', 'No plan saved yet');
    await page.$eval('textarea[name="plan"]', (t: any, text: string) => (t.value = text), JSON.stringify(PLAN, null, 2));
    await page.select('select[name="mode"]', 'quarantine');
    await moves.press('Save as a new version');
    await moves.waitForText('.result-summary', 'Version 1');
    const saved = (await (await svc.request('GET', '/tracking-plan', { key: svc.privateKey })).json()) as any;
    expect([saved.version, saved.mode, saved.plan]).toEqual([1, 'quarantine', PLAN]);
    const rules = await page.$$eval('.plan-event[data-event="Order Completed"] tbody tr', (trs: any[]) => trs.map((tr) => [...tr.children].map((td: any) => td.textContent)));
    expect(rules).toEqual([
      ['plan', 'string, one of "free" "pro" "team"', 'required'],
      ['revenue', 'number', 'required'],
      ['coupon', 'string, matching ^[A-Z]{4}$', 'optional'],
    ]);
    await moves.shot('data-plan');
  });

  test('a plan the service refuses shows each problem at its place, and changes nothing', async () => {
    await page.$eval('textarea[name="plan"]', (t: any) => (t.value = JSON.stringify({ events: { Broken: 'not a schema' } })));
    await moves.press('Save as a new version');
    await moves.waitForText('.notice-error', 'The plan was not saved');
    expect(await page.$eval('.plan-problems', (ul: any) => ul.textContent)).toContain('/plan/events/Broken');
    expect(((await (await svc.request('GET', '/tracking-plan', { key: svc.privateKey })).json()) as any).version).toBe(1);
  });

  test('violations by event and by property as the API counts them; quarantined events listed, then replayed once the plan is fixed', async () => {
    await sendEvents(svc, [
      { type: 'track', event: 'Order Completed', userId: 'q1', properties: { plan: 'gold', revenue: 10 } },
      { type: 'track', event: 'Order Completed', userId: 'q2', properties: { plan: 'pro', revenue: '10' } },
      { type: 'track', event: 'Order Completed', userId: 'q3', properties: { plan: 'pro', revenue: 5, coupon: 'x1' } },
      { type: 'track', event: 'Order Completed', userId: 'q4', properties: { revenue: 5 } },
    ]);
    const counted = ((await (await svc.request('GET', '/violations', { key: svc.privateKey })).json()) as any).results as any[];
    expect(counted.length).toBe(4);
    await moves.go('data/violations');
    await page.waitForSelector('.violations-table tbody tr');
    const shown = await page.$$eval('.violations-table tbody tr', (trs: any[]) => trs.map((tr) => [tr.dataset.event, tr.dataset.path]));
    expect(shown).toEqual(counted.map((v) => [v.event, v.path]));
    expect(await page.$eval('.violations-by-event tr[data-key="Order Completed"]', (tr: any) => tr.lastChild.textContent)).toBe(String(counted.reduce((n, v) => n + v.count, 0)));
    await moves.waitForText('.quarantine h2', 'Quarantine (4)');
    await moves.shot('data-violations');
    const relaxed = { events: { 'Order Completed': { type: 'object', properties: { revenue: { type: 'number' } } } } };
    expect((await svc.request('PUT', '/tracking-plan', { key: svc.privateKey, body: { format: 'native', plan: relaxed, mode: 'quarantine' } })).status).toBe(200);
    await moves.press('Replay against the current plan');
    await moves.waitForText('.notice-info', '3 now keep the plan');
    await moves.waitForText('.quarantine h2', 'Quarantine (1)');
    const stored = ((await (await svc.request('GET', '/events?event=Order%20Completed&limit=1000', { key: svc.privateKey })).json()) as any).results.map((e: any) => e.userId);
    expect(stored.filter((u: string) => u.startsWith('q')).sort()).toEqual(['q1', 'q3', 'q4']);
  });

  test("times in lists are in the workspace's time zone, once the workspace names one", async () => {
    const { workspace } = (await (await svc.request('GET', '/whoami', { key: svc.privateKey })).json()) as any;
    const put = await svc.request('PUT', `/workspaces/${workspace.workspaceId}`, { key: svc.privateKey, body: { name: workspace.name, timezone: 'Asia/Kolkata' } });
    expect(put.status).toBe(200);
    await page.reload();
    await page.waitForSelector('a.nav-link.active');
    await moves.go('data/events');
    await page.waitForSelector('.catalog-events tbody tr');
    const [first] = await catalog('events');
    // Kolkata keeps +05:30 all year: the stored time moved by it, written as the console writes times.
    const expected = new Date(Date.parse(first.lastSeen) + 330 * 60_000).toISOString().replace('T', ' ').slice(0, 23);
    const shown = await page.$eval(`.catalog-events tr[data-name="${first.name}"] td:nth-child(4)`, (td: any) => td.textContent);
    expect(shown).toBe(expected);
    await svc.request('PUT', `/workspaces/${workspace.workspaceId}`, { key: svc.privateKey, body: { name: workspace.name, timezone: 'UTC' } });
    await page.reload();
    await page.waitForSelector('a.nav-link.active');
  });

  test('dark and phone size', async () => {
    await moves.go('data/properties');
    await page.emulateMediaFeatures([{ name: 'prefers-color-scheme', value: 'dark' }]);
    await page.waitForSelector('.catalog-properties tr[data-name="revenue"]');
    await moves.shot('data-properties-dark');
    await page.setViewport({ width: 390, height: 844 });
    await moves.go('data/events');
    await page.waitForSelector('.catalog-events tbody tr');
    await moves.shot('data-events-phone-dark');
    await page.emulateMediaFeatures([{ name: 'prefers-color-scheme', value: 'light' }]);
    await moves.shot('data-events-phone');
    await moves.go('data/violations');
    await page.waitForSelector('.violations-table tbody tr');
    await moves.shot('data-violations-phone');
    expect(faults).toEqual({ blocked: [], errors: [] });
  });
});
