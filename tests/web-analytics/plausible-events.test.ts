import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { uniqueName } from '../helpers/engine-dir';
import { parseExposition, sampleValue } from '../helpers/exposition';
import { createWorkspace, listEvents, startTestService, type CreatedWorkspace, type TestService } from '../helpers/test-service';

const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const GOOGLEBOT = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';

let svc: TestService;
beforeAll(async () => {
  // The test client is the trusted proxy, so X-Forwarded-For names the visitor's address.
  svc = await startTestService({ TRUSTED_PROXIES: '127.0.0.1, ::1' });
});
afterAll(() => svc.stop());

/** POST /api/event as Plausible's trackers send it: JSON as text/plain, no key. */
function sendPlausible(body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${svc.url}/api/event`, {
    method: 'POST',
    headers: { 'content-type': 'text/plain', 'user-agent': CHROME, 'x-forwarded-for': '8.8.8.8', ...headers },
    body: JSON.stringify(body),
  });
}

async function site(): Promise<{ ws: CreatedWorkspace; domain: string }> {
  const domain = `${uniqueName('site').toLowerCase().replace(/_/g, '-')}.example`;
  return { ws: await createWorkspace(svc, { name: uniqueName('plausible'), siteDomains: [domain.toUpperCase()] }), domain };
}

const eventsOf = async (ws: CreatedWorkspace) => (await listEvents(svc, 'orderByField=parsedAt&orderByDirection=asc', ws.privateApiKey)).body.results as any[];

async function dropped(reason: string): Promise<number> {
  const res = await svc.request('GET', '/metrics', { key: svc.privateKey });
  return sampleValue(parseExposition(await res.text()), 'analytics_plausible_events_dropped_total', { reason });
}

describe('POST /api/event (Plausible Events API)', () => {
  test('a pageview is a page event with Segment page fields, the visitor hash and enrichment, no raw address', async () => {
    const { ws, domain } = await site();
    const url = `https://${domain}/pricing?utm_source=newsletter&utm_medium=email&utm_campaign=spring`;
    const res = await sendPlausible({ name: 'pageview', url, domain, referrer: 'https://news.ycombinator.com/item?id=1' });
    expect(res.status).toBe(202);
    expect(await res.text()).toBe('ok');
    expect(res.headers.get('x-plausible-dropped')).toBeNull();
    const [event] = await eventsOf(ws);
    expect(event.type).toBe('page');
    expect(event.anonymousId).toMatch(/^[0-9a-f]{32}$/);
    const page = { url, path: '/pricing', referrer: 'https://news.ycombinator.com/item?id=1', search: '?utm_source=newsletter&utm_medium=email&utm_campaign=spring' };
    expect(event.properties).toEqual(page);
    expect(event.context).toEqual({
      page,
      userAgent: CHROME,
      library: { name: 'plausible' },
      browser: { name: 'Chrome', version: '131.0.0.0' },
      os: { name: 'Windows', version: '10' },
      device: { type: 'desktop' },
      location: { country: 'US' },
      campaign: { source: 'newsletter', medium: 'email', name: 'spring' },
      source: 'newsletter',
    });
    expect(JSON.stringify(event)).not.toContain('8.8.8.8');
  });

  test('custom events with props and revenue; non-interactive; the same visitor has the same id; each domain of a list', async () => {
    const a = await site();
    const b = await site();
    const domain = `${a.domain},unknown-${a.domain},${b.domain}`;
    expect((await sendPlausible({ n: 'Purchase', u: `https://${a.domain}/checkout`, d: domain, p: { plan: 'pro', seats: 3, nested: { no: 1 } }, $: { currency: 'eur', amount: '29.90' } })).status).toBe(202);
    expect((await sendPlausible({ name: 'Scrolled', url: `https://${a.domain}/`, domain: a.domain, props: JSON.stringify({ depth: 'half' }), interactive: false })).status).toBe(202);
    const [purchase, scrolled] = await eventsOf(a.ws);
    expect(purchase).toEqual(expect.objectContaining({ type: 'track', event: 'Purchase', properties: { plan: 'pro', seats: 3, revenue: 29.9, currency: 'EUR' } }));
    expect(purchase.context.interactive).toBeUndefined();
    expect(scrolled).toEqual(expect.objectContaining({ type: 'track', event: 'Scrolled', properties: { depth: 'half' } }));
    expect(scrolled.context.interactive).toBe(false);
    expect(scrolled.anonymousId).toBe(purchase.anonymousId);
    // Another address is another visitor; the other site has its own copy, under its own id.
    await sendPlausible({ name: 'pageview', url: `https://${a.domain}/`, domain: a.domain }, { 'x-forwarded-for': '9.9.9.9' });
    const all = await eventsOf(a.ws);
    expect(all[2].anonymousId).not.toBe(purchase.anonymousId);
    const [copy] = await eventsOf(b.ws);
    expect(copy.event).toBe('Purchase');
    expect(copy.anonymousId).not.toBe(purchase.anonymousId);
  });

  test("the new tracker's engagement reports are stored as non-interactive, whatever they say", async () => {
    const { ws, domain } = await site();
    // As @plausible-analytics/tracker sends one when the visitor leaves a page.
    expect((await sendPlausible({ n: 'engagement', u: `https://${domain}/pricing`, d: domain, sd: 40, e: 5200, i: true })).status).toBe(202);
    const [engagement] = await eventsOf(ws);
    expect(engagement).toEqual(expect.objectContaining({ type: 'track', event: 'engagement' }));
    expect(engagement.context.interactive).toBe(false);
  });

  test('engagement reports are no event, goal or visit of the Stats API, as in Plausible', async () => {
    const { ws, domain } = await site();
    const url = `https://${domain}/pricing`;
    for (const body of [{ n: 'pageview', u: url, d: domain }, { n: 'engagement', u: url, d: domain, sd: 40, e: 5200 }, { n: 'Signup', u: url, d: domain }]) {
      expect((await sendPlausible(body)).status).toBe(202);
    }
    // An hour either side of now, so that a run across midnight still finds the events.
    const around = (ms: number) => `${new Date(ms).toISOString().slice(0, 19)}+00:00`;
    const range = [around(Date.now() - 3_600_000), around(Date.now() + 3_600_000)];
    const stats = async (body: Record<string, unknown>) => {
      const res = await svc.request('POST', '/api/v2/query', { key: ws.privateApiKey, body: { site_id: domain, date_range: range, ...body } });
      expect(res.status).toBe(200);
      return ((await res.json()) as { results: unknown[] }).results;
    };
    expect(await stats({ metrics: ['visitors', 'visits', 'pageviews', 'events'] })).toEqual([{ metrics: [1, 1, 1, 2], dimensions: [] }]);
    expect(await stats({ metrics: ['events'], dimensions: ['event:goal'] })).toEqual([{ metrics: [1], dimensions: ['Signup'] }]);
  });

  test('an unknown domain and a robot are answered 202, stored nowhere, counted', async () => {
    const { ws, domain } = await site();
    const [unknownBefore, botBefore] = [await dropped('unknown_domain'), await dropped('bot')];
    const unknown = await sendPlausible({ name: 'pageview', url: 'https://nobody.example/', domain: 'nobody.example' });
    expect(unknown.status).toBe(202);
    expect(await unknown.text()).toBe('ok');
    expect(unknown.headers.get('x-plausible-dropped')).toBe('1');
    const bot = await sendPlausible({ name: 'pageview', url: `https://${domain}/`, domain }, { 'user-agent': GOOGLEBOT });
    expect(bot.status).toBe(202);
    expect(bot.headers.get('x-plausible-dropped')).toBe('1');
    expect(await dropped('unknown_domain')).toBe(unknownBefore + 1);
    expect(await dropped('bot')).toBe(botBefore + 1);
    expect(await eventsOf(ws)).toEqual([]);
  });

  test('CORS for any page origin; an origin outside allowedOrigins is dropped', async () => {
    const { ws, domain } = await site();
    const res = await sendPlausible({ name: 'pageview', url: `https://${domain}/`, domain }, { origin: `https://${domain}` });
    expect(res.status).toBe(202);
    expect(res.headers.get('access-control-allow-origin')).toBe(`https://${domain}`);
    await svc.request('PUT', `/workspaces/${ws.workspaceId}`, { key: svc.privateKey, body: { name: ws.name, allowedOrigins: [`https://${domain}`] } });
    const elsewhere = await sendPlausible({ name: 'pageview', url: `https://${domain}/`, domain }, { origin: 'https://spoofer.example' });
    expect(elsewhere.status).toBe(202);
    expect(elsewhere.headers.get('x-plausible-dropped')).toBe('1');
    expect((await eventsOf(ws)).length).toBe(1);
  });

  test('a body without name, url or domain is 400 with its own problem type', async () => {
    const res = await sendPlausible({ url: 'not a url' });
    expect(res.status).toBe(400);
    const problem: any = await res.json();
    expect(problem.type).toBe('urn:event-analytics:problem:invalid-plausible-event');
    expect(problem.errors.map((e: any) => e.pointer).sort()).toEqual(['/domain', '/name', '/url']);
  });
});
