import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { uniqueName } from '../helpers/engine-dir';
import { createWorkspace, listEvents, startTestService, type CreatedWorkspace, type TestService } from '../helpers/test-service';

const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1';
const FIREFOX = 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0';
const GOOGLEBOT = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';
/** Google's public DNS: in the shipped database (DB-IP) as US. */
const US_ADDRESS = '8.8.8.8';

/** A service whose test client is the trusted proxy, so X-Forwarded-For names the client. */
const start = (settings: Record<string, string> = {}) => startTestService({ TRUSTED_PROXIES: '127.0.0.1, ::1', ...settings });

async function stored(svc: TestService, ws: CreatedWorkspace): Promise<any[]> {
  return (await listEvents(svc, 'orderByField=parsedAt&orderByDirection=asc', ws.privateApiKey)).body.results;
}

/** A Segment track call from a browser-like client, through `path`. */
function segmentCall(svc: TestService, ws: CreatedWorkspace, body: Record<string, unknown>, userAgent: string, path = '/v1/track'): Promise<Response> {
  return svc.request('POST', path, { key: ws.publicApiKey, body: { userId: 'u1', event: 'Viewed', ...body }, headers: { 'user-agent': userAgent, 'x-forwarded-for': US_ADDRESS } });
}

describe('enrichment at collection', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await start();
  });
  afterAll(() => svc.stop());

  test('Chrome, Safari on iPhone, Firefox and Googlebot are told apart; the country is looked up; no raw address is stored', async () => {
    const ws = await createWorkspace(svc, { name: uniqueName('enrich') });
    for (const ua of [CHROME, IPHONE, FIREFOX, GOOGLEBOT]) expect((await segmentCall(svc, ws, { properties: { ua } }, ua)).status).toBe(200);
    const events = await stored(svc, ws);
    const contextOf = (ua: string) => events.find((e) => e.properties.ua === ua)!.context;
    expect(contextOf(CHROME)).toEqual({ browser: { name: 'Chrome', version: '131.0.0.0' }, os: { name: 'Windows', version: '10' }, device: { type: 'desktop' }, location: { country: 'US' } });
    expect(contextOf(IPHONE)).toEqual({ browser: { name: 'Mobile Safari', version: '17.4' }, os: { name: 'iOS', version: '17.4' }, device: { type: 'mobile' }, location: { country: 'US' } });
    expect(contextOf(FIREFOX)).toEqual({ browser: { name: 'Firefox', version: '128.0' }, os: { name: 'Linux' }, device: { type: 'desktop' }, location: { country: 'US' } });
    // Segment's sources keep robots' events, marked.
    expect(contextOf(GOOGLEBOT)).toEqual({ bot: true, location: { country: 'US' } });
    expect(JSON.stringify(events)).not.toContain(US_ADDRESS);
  });

  test("the client's own context wins: its user agent, address, location, device, os and campaign are kept", async () => {
    const ws = await createWorkspace(svc, { name: uniqueName('enrich') });
    const context = {
      userAgent: IPHONE,
      ip: '193.99.144.80',
      device: { manufacturer: 'Apple', type: 'tablet' },
      os: { name: 'iPadOS' },
      page: { url: 'https://shop.example/?utm_source=ads', referrer: 'https://www.google.de/' },
      campaign: { name: 'own' },
    };
    expect((await segmentCall(svc, ws, { context }, CHROME)).status).toBe(200);
    const [event] = await stored(svc, ws);
    expect(event.context).toEqual({
      ...context,
      // From the context's user agent and address, not the request's.
      browser: { name: 'Mobile Safari', version: '17.4' },
      location: { country: 'DE' },
      // The campaign sent has no source: Google, the referrer, is the source.
      source: 'Google',
    });
    const located = { ...context, location: { country: 'FR', city: 'Paris' }, ip: undefined };
    expect((await segmentCall(svc, ws, { context: located }, CHROME)).status).toBe(200);
    expect((await stored(svc, ws))[1].context.location).toEqual({ country: 'FR', city: 'Paris' });
  });

  test('POST /events (fast path and app) and the batch route: campaign from utm_*, source from the referrer, none within the site', async () => {
    const ws = await createWorkspace(svc, { name: uniqueName('enrich') });
    const page = (path: string, referrer: string) => ({
      type: 'page',
      anonymousId: 'a1',
      properties: { url: `https://shop.example${path}`, path: path.split('?')[0], referrer },
    });
    const headers = { 'user-agent': FIREFOX, 'x-forwarded-for': US_ADDRESS };
    // A plain JSON POST takes the collection fast path; with an Origin the app serves it.
    expect((await svc.request('POST', '/events', { key: ws.publicApiKey, body: { events: [page('/a?utm_source=nl&utm_medium=email&utm_campaign=spring&utm_term=t&utm_content=c', '')] }, headers })).status).toBe(201);
    expect((await svc.request('POST', '/events', { key: ws.publicApiKey, body: { events: [page('/b', 'https://www.reddit.com/r/x')] }, headers: { ...headers, origin: 'https://shop.example' } })).status).toBe(201);
    expect((await svc.request('POST', '/v1/batch', { key: ws.publicApiKey, body: { batch: [{ ...page('/c', 'https://shop.example/b'), userId: 'u1' }] }, headers })).status).toBe(200);
    expect((await svc.request('POST', '/v1/batch', { key: ws.publicApiKey, body: { batch: [{ ...page('/d', 'https://blog.other.example/post'), userId: 'u1' }] }, headers })).status).toBe(200);
    const events = await stored(svc, ws);
    const [a, b, c, d] = ['/a', '/b', '/c', '/d'].map((p) => events.find((e) => e.properties.path === p)!.context);
    expect(a.campaign).toEqual({ source: 'nl', medium: 'email', name: 'spring', term: 't', content: 'c' });
    expect(a.source).toBe('nl');
    expect(a.location).toEqual({ country: 'US' });
    expect(a.browser.name).toBe('Firefox');
    expect(b.source).toBe('Reddit');
    expect(b.campaign).toBeUndefined();
    expect(c.source).toBeUndefined();
    expect(d.source).toBe('blog.other.example');
  });

  test("a server-side SDK's events (no browser user agent, a loopback address) are stored as sent", async () => {
    const ws = await createWorkspace(svc, { name: uniqueName('enrich') });
    const res = await svc.request('POST', '/events', { key: ws.publicApiKey, body: { events: [{ type: 'track', event: 'x', userId: 'u', context: { app: 'backend' } }] } });
    expect(res.status).toBe(201);
    expect((await stored(svc, ws))[0].context).toEqual({ app: 'backend' });
  });
});

describe('STORE_CLIENT_ADDRESS=true', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await start({ STORE_CLIENT_ADDRESS: 'true' });
  });
  afterAll(() => svc.stop());

  test('the client address is kept as context.ip, unless the client sent one', async () => {
    const ws = await createWorkspace(svc, { name: uniqueName('enrich') });
    expect((await segmentCall(svc, ws, {}, CHROME)).status).toBe(200);
    expect((await segmentCall(svc, ws, { context: { ip: '9.9.9.9' } }, CHROME)).status).toBe(200);
    const [first, second] = await stored(svc, ws);
    expect(first.context.ip).toBe(US_ADDRESS);
    expect(second.context.ip).toBe('9.9.9.9');
  });
});
