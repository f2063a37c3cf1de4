import { expect, test } from 'bun:test';
import { browserSuite, type StoredEvent } from '../helpers/browser-suite';
import { describeInChromium, offLoopback } from '../helpers/chromium';
import { bundleSnippet } from '../helpers/doc-snippets';
import { uniqueName } from '../helpers/engine-dir';
import { createWorkspace, type CreatedWorkspace } from '../helpers/test-service';

const suite = browserSuite();

/** A desktop Chrome's user agent: Plausible drops headless browsers as robots, as the service does. */
const CHROME = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';

async function site(): Promise<{ ws: CreatedWorkspace; domain: string }> {
  const domain = `${uniqueName('tracked').toLowerCase().replace(/_/g, '-')}.example`;
  return { ws: await createWorkspace(suite.svc, { name: uniqueName('plausible-browser'), siteDomains: [domain] }), domain };
}

/** The events a person would count: not the new tracker's engagement pings (time on page, scroll depth). */
const visible = (events: StoredEvent[]) => events.filter((e) => e.event !== 'engagement');
const pagePaths = (events: StoredEvent[]) => visible(events).filter((e) => e.type === 'page').map((e) => e.properties.path);

/** A page of the page server's origin (another than the service's) that runs `script` once the bundle has loaded. */
async function trackerPage(path: string, bundle: string, script: string): Promise<string> {
  suite.pages.script(`${path}.js`, bundle);
  // __plausible tells the new tracker an automated browser is wanted (it skips webdriver otherwise).
  return suite.pages.page(path, `<!doctype html><title>Shop</title><script>window.__plausible = true</script><script src="${path}.js"></script><script>${script}</script><body></body>`);
}

describeInChromium("Plausible's trackers in Chromium, from a page on another origin", () => {
  test('@plausible-analytics/tracker: page views, a custom event with props and revenue, SPA navigation', async () => {
    const { ws, domain } = await site();
    const bundle = await bundleSnippet('plausible-analytics-tracker', `import { init, track } from '@plausible-analytics/tracker'; window.PA = { init, track };`);
    const url = await trackerPage(
      '/npm/shop.html',
      bundle,
      `PA.init({ domain: ${JSON.stringify(domain)}, endpoint: ${JSON.stringify(`${suite.svc.url}/api/event`)}, captureOnLocalhost: true, logging: false });`,
    );
    const { page, requests } = await suite.chromium.newPage();
    await page.setUserAgent(CHROME);
    await page.goto(`${url}?utm_source=newsletter`);
    await page.evaluate(() => {
      (globalThis as any).PA.track('Purchase', { props: { plan: 'pro' }, revenue: { currency: 'EUR', amount: 29.9 } });
      (globalThis as any).history.pushState({}, '', '/npm/cart');
    });
    const events = await suite.awaitEvents(ws, 'two page views and a purchase', (all) => visible(all).length >= 3);
    expect(offLoopback(requests)).toEqual([]);
    await page.close();

    expect(pagePaths(events).sort()).toEqual(['/npm/cart', '/npm/shop.html']);
    const purchase = events.find((e) => e.event === 'Purchase')!;
    expect(purchase.type).toBe('track');
    expect(purchase.properties).toEqual({ plan: 'pro', revenue: 29.9, currency: 'EUR' });
    const first = events.find((e) => e.properties.path === '/npm/shop.html')!;
    expect(first.context).toEqual(
      expect.objectContaining({
        page: { url: `${url}?utm_source=newsletter`, path: '/npm/shop.html', referrer: '', search: '?utm_source=newsletter' },
        userAgent: CHROME,
        library: expect.objectContaining({ name: 'plausible' }),
        browser: { name: 'Chrome', version: '131.0.0.0' },
        os: { name: 'Linux' },
        device: { type: 'desktop' },
        campaign: { source: 'newsletter' },
        source: 'newsletter',
      }),
    );
    expect(first.context.ip).toBeUndefined();
    // One visitor: the same address, user agent and site all day.
    expect(new Set(events.map((e) => e.anonymousId)).size).toBe(1);
  });

  test('plausible-tracker: page views by enableAutoPageviews (pushState too) and a custom event with props', async () => {
    const { ws, domain } = await site();
    const bundle = await bundleSnippet('plausible-tracker', `import Plausible from 'plausible-tracker'; window.PT = Plausible;`);
    const url = await trackerPage(
      '/legacy/home.html',
      bundle,
      `window.tracker = PT({ domain: ${JSON.stringify(domain)}, apiHost: ${JSON.stringify(suite.svc.url)}, trackLocalhost: true }); tracker.enableAutoPageviews();`,
    );
    const { page, requests } = await suite.chromium.newPage();
    await page.setUserAgent(CHROME);
    await page.goto(url);
    await page.evaluate(() => {
      (globalThis as any).tracker.trackEvent('Signup', { props: { plan: 'free' } });
      (globalThis as any).history.pushState({}, '', '/legacy/welcome');
    });
    const events = await suite.awaitEvents(ws, 'two page views and a signup', (all) => visible(all).length >= 3);
    expect(offLoopback(requests)).toEqual([]);
    await page.close();

    expect(pagePaths(events).sort()).toEqual(['/legacy/home.html', '/legacy/welcome']);
    const signup = events.find((e) => e.event === 'Signup')!;
    expect(signup.properties).toEqual({ plan: 'free' });
    expect(signup.context.browser).toEqual({ name: 'Chrome', version: '131.0.0.0' });
  });
});
