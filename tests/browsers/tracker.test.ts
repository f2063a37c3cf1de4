import { expect, test } from 'bun:test';
import { browserSuite, type StoredEvent } from '../helpers/browser-suite';
import { describeInChromium, launchChromium } from '../helpers/chromium';
import { docSnippet } from '../helpers/doc-snippets';
import type { CreatedWorkspace } from '../helpers/test-service';

const suite = browserSuite();

/**
 * A page with the documentation's tracker tag, given `attributes` beyond the snippet's (the
 * browser here is automated: the tracker skips it unless told otherwise), and `body`.
 */
function trackerPage(path: string, ws: CreatedWorkspace, options: { attributes?: string; head?: string; body?: string } = {}): string {
  const values = { collector: suite.svc.url, publicKey: ws.publicApiKey };
  const tag = docSnippet('tracker', values).replace('<script defer ', `<script defer ${options.attributes ?? 'data-allow-automation'} `);
  return suite.pages.page(path, `<!doctype html><title>Shop</title>${options.head ?? ''}${tag}<body>${options.body ?? ''}</body>`);
}

/** How many of `requests` went to the tracker's collection path. */
const sent = (requests: readonly string[]) => requests.filter((r) => r === `${suite.svc.url}/v1/batch`).length;

const pagePaths = (events: StoredEvent[]) => events.filter((e) => e.type === 'page').map((e) => e.properties.path);

describeInChromium('the tracker in Chromium, from a page on another origin', () => {
  const { newWorkspace, awaitEvents } = suite;
  test('a load and two pushState navigations give three page events with their paths; an early track lands; pagehide lands', async () => {
    const ws = await newWorkspace();
    const values = { collector: suite.svc.url, publicKey: ws.publicApiKey };
    // The queueing line, a track call before the tracker loads, and a handler that sends as the page goes away.
    const head = `${docSnippet('tracker-queue', values)}<script>ea.track('Early Bird', { plan: 'pro' }); addEventListener('pagehide', () => ea.track('Page Hidden'));</script>`;
    const url = trackerPage('/shop/index.html', ws, { head });
    const { page, requests } = await suite.chromium.newPage();
    const userAgent = await page.evaluate(() => navigator.userAgent);
    await page.goto(`${url}?utm_source=newsletter&utm_campaign=spring`);
    await page.evaluate(() => {
      (globalThis as any).history.pushState({}, '', '/shop/cart');
      (globalThis as any).history.pushState({}, '', '/shop/checkout');
    });
    await awaitEvents(ws, 'three page events and the early track', (events) => events.length >= 4);
    // Leaving the page fires pagehide: its track goes out as a beacon.
    await page.goto(`${suite.pages.origin}/elsewhere.html`);
    const events = await awaitEvents(ws, 'the pagehide track', (all) => all.some((e) => e.event === 'Page Hidden'));
    await page.close();

    expect(pagePaths(events).sort()).toEqual(['/shop/cart', '/shop/checkout', '/shop/index.html']);
    expect(events.filter((e) => e.type === 'track').map((e) => e.event).sort()).toEqual(['Early Bird', 'Page Hidden']);
    expect(events.find((e) => e.event === 'Early Bird')!.properties).toEqual({ plan: 'pro' });
    const [first, cart] = ['/shop/index.html', '/shop/cart'].map((p) => events.find((e) => e.type === 'page' && e.properties.path === p)!);
    expect(first!.context).toEqual(
      expect.objectContaining({
        page: { path: '/shop/index.html', url: `${url}?utm_source=newsletter&utm_campaign=spring`, title: 'Shop', referrer: '', search: '?utm_source=newsletter&utm_campaign=spring' },
        campaign: { source: 'newsletter', name: 'spring' },
        screen: expect.objectContaining({ width: expect.any(Number), height: expect.any(Number) }),
        locale: expect.any(String),
        userAgent,
        library: { name: 'event-analytics-tracker', version: '1' },
      }),
    );
    // A navigation's referrer is the page before it.
    expect(cart!.properties.referrer).toBe(`${url}?utm_source=newsletter&utm_campaign=spring`);
    expect(new Set(events.map((e) => e.anonymousId)).size).toBe(1);
    // The page's beacons are seen here (the one sent as it went away is not): the tests below count them.
    expect(sent(requests)).toBeGreaterThanOrEqual(4);
  });

  test('identify names the visitor for later events; the ids stay in localStorage, or nowhere when cookieless', async () => {
    const ws = await newWorkspace();
    const { page } = await suite.chromium.newPage();
    await page.goto(trackerPage('/account.html', ws));
    await page.evaluate(() => (globalThis as any).ea.identify('user-42', { plan: 'pro' }));
    await page.evaluate(() => (globalThis as any).ea.track('Upgraded'));
    const stored = await page.evaluate(() => [localStorage.getItem('ea_aid'), localStorage.getItem('ea_uid')]);
    await page.goto(trackerPage('/cookieless.html', ws, { attributes: 'data-allow-automation data-cookieless' }));
    const cookieless = await page.evaluate(() => [localStorage.getItem('ea_aid'), localStorage.length]);
    const events = await awaitEvents(ws, 'identify, track and two pages', (all) => all.length >= 4);
    await page.close();

    const identify = events.find((e) => e.type === 'identify')!;
    expect(identify).toEqual(expect.objectContaining({ userId: 'user-42', traits: { plan: 'pro' } }));
    expect(events.find((e) => e.event === 'Upgraded')!.userId).toBe('user-42');
    expect(stored).toEqual([identify.anonymousId, 'user-42']);
    // The cookieless page's own localStorage is the same origin's: it read nothing and wrote nothing new.
    expect(cookieless).toEqual([identify.anonymousId, 2]);
    const cookielessPage = events.find((e) => e.type === 'page' && e.properties.path === '/cookieless.html')!;
    expect(cookielessPage.anonymousId).not.toBe(identify.anonymousId);
    expect(cookielessPage.userId).toBeUndefined();
  });

  test('outbound link clicks and file downloads, with data-track-links', async () => {
    const ws = await newWorkspace();
    const body = '<a id="out" href="http://localhost:9/partner" onclick="return false">partner</a><a id="file" href="/files/report.pdf" onclick="return false">report</a>';
    const { page } = await suite.chromium.newPage();
    await page.goto(trackerPage('/links.html', ws, { attributes: 'data-allow-automation data-track-links', body }));
    await page.click('#out');
    await page.click('#file');
    const events = await awaitEvents(ws, 'two link events', (all) => all.filter((e) => e.type === 'track').length >= 2);
    await page.close();
    const tracks = Object.fromEntries(events.filter((e) => e.type === 'track').map((e) => [e.event, e.properties.url]));
    expect(tracks).toEqual({ 'Outbound Link: Click': 'http://localhost:9/partner', 'File Download': `${suite.pages.origin}/files/report.pdf` });
  });

  test('an automated browser is skipped unless the page allows it', async () => {
    const ws = await newWorkspace();
    const { page, requests } = await suite.chromium.newPage();
    await page.goto(trackerPage('/skipped.html', ws, { attributes: '' }));
    await page.evaluate(() => (globalThis as any).ea.track('Skipped'));
    // A page that allows automation, in the same browser: once its event is stored, the first one's would be too.
    await page.goto(trackerPage('/control.html', ws));
    const events = await awaitEvents(ws, 'the control page', (all) => all.length >= 1);
    await page.close();
    expect(events.map((e) => e.properties.path)).toEqual(['/control.html']);
    expect(sent(requests)).toBe(1);
  });

  test('with Do Not Track set in the browser and honoured by the page (data-respect-dnt), nothing is sent', async () => {
    const dnt = await launchChromium({ doNotTrack: true });
    try {
      const ws = await newWorkspace();
      const { page, requests } = await dnt.newPage();
      expect(await page.evaluate(() => (navigator as any).doNotTrack)).toBe('1');
      await page.goto(trackerPage('/private.html', ws, { attributes: 'data-allow-automation data-respect-dnt' }));
      await page.evaluate(() => {
        (globalThis as any).history.pushState({}, '', '/private/next');
        (globalThis as any).ea.track('Private Click');
      });
      // The same browser, a page that does not ask: its event lands, the first page's never went out.
      await page.goto(trackerPage('/control.html', ws));
      const events = await awaitEvents(ws, 'the control page', (all) => all.length >= 1);
      await page.close();
      expect(events.map((e) => e.properties.path)).toEqual(['/control.html']);
      expect(sent(requests)).toBe(1);
    } finally {
      await dnt.close();
    }
  });
});
