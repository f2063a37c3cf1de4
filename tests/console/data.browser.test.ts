import { afterAll, beforeAll, expect, test } from 'bun:test';
import type { Page } from 'puppeteer-core';
import { describeInChromium, launchChromium, type Chromium } from '../helpers/chromium';
import { consoleMoves, signedInConsole, type PageFaults } from '../helpers/console-page';
import { eventually } from '../helpers/eventually';
import { sendEvents, startTestService, type TestService } from '../helpers/test-service';

/**
 * Data management in Chromium: the catalog's events and properties as the API lists them, a
 * property sent with two types marked, and the curated fields saved from the dialog. Screenshots
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
  let svc: TestService;
  let chromium: Chromium;
  let page: Page;
  let faults: PageFaults;
  let moves: ReturnType<typeof consoleMoves>;
  const catalog = async (what: string) => ((await (await svc.request('GET', `/catalog/${what}?limit=1000`, { key: svc.privateKey })).json()) as { results: any[] }).results;

  beforeAll(async () => {
    svc = await startTestService();
    await sendEvents(svc, seedEvents());
    await eventually('the catalog has the events', async () => (await catalog('events')).length === 3);
    chromium = await launchChromium();
    ({ page, faults } = await signedInConsole(chromium, svc.url, svc.privateKey));
    await page.setViewport({ width: 1440, height: 900 });
    moves = consoleMoves(page);
  });
  afterAll(async () => {
    await chromium?.close();
    await svc?.stop();
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

  test('dark and phone size', async () => {
    await page.select('select[name="hidden"]', '');
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
    expect(faults).toEqual({ blocked: [], errors: [] });
  });
});
