import { expect, test } from 'bun:test';
import { browserSuite } from '../helpers/browser-suite';
import { describeInChromium, offLoopback } from '../helpers/chromium';
import { bundleSnippet, docSnippet } from '../helpers/doc-snippets';
import type { CreatedWorkspace } from '../helpers/test-service';

const suite = browserSuite();

/** Serves a page that runs the bundled doc snippet `name`; returns the page's URL. */
async function snippetPage(name: string, ws: CreatedWorkspace): Promise<string> {
  const code = await bundleSnippet(name, docSnippet(name, { collector: suite.svc.url, publicKey: ws.publicApiKey }));
  suite.pages.script(`/${name}.js`, code);
  return suite.pages.page(`/${name}/index.html`, `<!doctype html><title>${name} page</title><script src="/${name}.js"></script>`);
}

describeInChromium('real browser SDKs in Chromium, from a page on another origin', () => {
  const { newWorkspace, awaitEvents } = suite;
  // Each SDK, the library name it reports, and the paths it posts to.
  for (const [sdk, library, paths] of [
    ['analytics-next', 'analytics.js', ['/v1/i', '/v1/p', '/v1/t']],
    ['rudderstack', 'RudderLabs JavaScript SDK', ['/v1/identify', '/v1/page', '/v1/track']],
  ] as const) {
    test(`${sdk}: page, identify and track land, each with its page context; nothing loaded from elsewhere`, async () => {
      const ws = await newWorkspace();
      const url = await snippetPage(sdk, ws);
      expect(new URL(url).origin).not.toBe(new URL(suite.svc.url).origin);
      const { page, requests } = await suite.chromium.newPage();
      const userAgent = await page.evaluate(() => navigator.userAgent);
      await page.goto(url);
      const events = await awaitEvents(ws, `3 events from ${sdk}`, (all) => all.length >= 3);
      await page.close();

      expect(events.map((e) => e.type).sort()).toEqual(['identify', 'page', 'track']);
      const byType = Object.fromEntries(events.map((e) => [e.type, e]));
      expect(byType.identify.userId).toBe('user-1');
      expect(byType.identify.traits).toEqual(expect.objectContaining({ plan: 'pro' }));
      expect(byType.track.event).toBe('Signed Up');
      expect(byType.track.properties).toEqual(expect.objectContaining({ plan: 'pro' }));
      for (const e of events) {
        expect(e.context.page).toEqual(expect.objectContaining({ url, path: `/${sdk}/index.html` }));
        expect(e.context.userAgent).toBe(userAgent);
        expect(e.context.library.name).toBe(library);
        expect(e.anonymousId).toEqual(expect.any(String));
      }
      expect(offLoopback(requests)).toEqual([]);
      const posted = new Set(requests.filter((r) => r.startsWith(suite.svc.url)).map((r) => new URL(r).pathname));
      expect([...posted].sort()).toEqual([...paths]);
    });
  }

  test('a plain fetch with Authorization and JSON (preflighted), and a sendBeacon with text/plain, each land', async () => {
    const ws = await newWorkspace();
    const { page } = await suite.chromium.newPage();
    await page.goto(suite.pages.page('/plain/index.html', '<!doctype html><title>plain</title>'));
    const values = { collector: suite.svc.url, publicKey: ws.publicApiKey };
    await page.evaluate(`(async () => { ${docSnippet('fetch', values)} })()`);
    const queued = await page.evaluate(`(() => ${docSnippet('beacon', values).replace(/;$/, '')})()`);
    expect(queued).toBe(true);
    const events = await awaitEvents(ws, 'fetch and sendBeacon', (all) => all.length >= 2);
    await page.close();
    expect(events.map((e) => e.event).sort()).toEqual(['Checkout Left', 'Signed Up']);
    expect(events.find((e) => e.event === 'Signed Up')!.userId).toBe('user-1');
    expect(events.find((e) => e.event === 'Checkout Left')!.anonymousId).toBe('visitor-1');
  });

  test('a page on another origin cannot read GET /events, even with a private key', async () => {
    const { page } = await suite.chromium.newPage();
    await page.goto(suite.pages.page('/private/index.html', '<!doctype html><title>private</title>'));
    const outcome = await page.evaluate(
      async (url, key) => {
        try {
          const res = await fetch(`${url}/events`, { headers: { Authorization: `Bearer ${key}` } });
          return `read: ${res.status}`;
        } catch (err) {
          return `refused: ${(err as Error).name}`;
        }
      },
      suite.svc.url,
      suite.svc.privateKey,
    );
    await page.close();
    // Its preflight is refused (no CORS headers): fetch rejects, and the page learns nothing.
    expect(outcome).toBe('refused: TypeError');
  });
});
