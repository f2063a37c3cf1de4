import { afterAll, beforeAll, expect, test } from 'bun:test';
import type { Page } from 'puppeteer-core';
import { describeInChromium, launchChromium, type Chromium } from '../helpers/chromium';
import { consoleMoves, signedInConsole, type PageFaults } from '../helpers/console-page';
import { sendEvents, startTestService, type TestService } from '../helpers/test-service';

/**
 * Persons and groups in the console (issue 41), in headless Chromium with every host but the
 * service blocked: the groups screen reached from a funnel broken down by group, a person's first
 * touch and company, and a funnel step's persons with their names, each compared with the API's
 * answer. Screenshots at 1440x900 and phone size, light and dark.
 */
declare const document: any;
declare const location: { hash: string };

const HOUR = 3_600_000;
const ago = (ms: number) => new Date(Date.now() - ms).toISOString();
const FIREFOX = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0';

interface Someone {
  id: string;
  traits: Record<string, unknown>;
  company?: string;
  referrer: string;
  country: string;
  signsUp: boolean;
}

const COMPANIES: Record<string, Record<string, unknown>> = {
  acme: { name: 'Acme Corp', plan: 'enterprise', industry: 'Manufacturing' },
  globex: { name: 'Globex', plan: 'pro' },
  initech: { name: 'Initech', plan: 'free' },
};

const PEOPLE: Someone[] = [
  { id: 'ada', traits: { name: 'Ada Lovelace', email: 'ada@acme.test', plan: 'enterprise' }, company: 'acme', referrer: 'https://www.google.com/', country: 'GB', signsUp: true },
  { id: 'bob', traits: { email: 'bob@globex.test', plan: 'pro' }, company: 'globex', referrer: 'https://t.co/abc', country: 'DE', signsUp: true },
  { id: 'cy', traits: { name: 'Cy Young', plan: 'enterprise' }, company: 'acme', referrer: 'https://news.ycombinator.com/', country: 'US', signsUp: true },
  { id: 'dee', traits: { name: 'Dee Dee', email: 'dee@initech.test', plan: 'free' }, company: 'initech', referrer: '', country: 'FR', signsUp: false },
  { id: 'eve', traits: { email: 'eve@acme.test' }, company: 'acme', referrer: 'https://www.bing.com/', country: 'CA', signsUp: true },
  { id: 'finn', traits: { name: 'Finn', plan: 'pro' }, company: 'globex', referrer: 'https://duckduckgo.com/', country: 'NL', signsUp: false },
  { id: 'gus', traits: {}, referrer: 'https://www.google.com/', country: 'JP', signsUp: true },
];

/** Each person arrives anonymously (their first touch), signs in, views pricing in their company and may sign up; a group call names each company. */
function seedEvents(): unknown[] {
  const events: unknown[] = [];
  for (const [groupId, traits] of Object.entries(COMPANIES)) events.push({ type: 'group', userId: PEOPLE.find((p) => p.company === groupId)!.id, groupId, traits, timestamp: ago(45 * HOUR) });
  PEOPLE.forEach((p, i) => {
    const anonymousId = `anon-${p.id}`;
    const group = p.company ? { groupId: p.company } : {};
    events.push({ type: 'page', anonymousId, context: { page: { url: 'https://shop.example/pricing', path: '/pricing', referrer: p.referrer }, userAgent: FIREFOX, location: { country: p.country } }, timestamp: ago((60 - i) * HOUR) });
    events.push({ type: 'identify', userId: p.id, anonymousId, traits: p.traits, timestamp: ago((50 - i) * HOUR) });
    events.push({ type: 'track', event: 'Viewed Pricing', userId: p.id, ...group, timestamp: ago((40 - i) * HOUR) });
    if (p.signsUp) events.push({ type: 'track', event: 'Signed Up', userId: p.id, ...group, timestamp: ago((30 - i) * HOUR) });
  });
  return events;
}

const FUNNEL = { steps: [{ event: 'Viewed Pricing' }, { event: 'Signed Up' }], dateFrom: '-7d' };

describeInChromium('persons and groups in the console', () => {
  let svc: TestService;
  let chromium: Chromium;
  let page: Page;
  let faults: PageFaults;
  let moves: ReturnType<typeof consoleMoves>;

  const call = async (method: string, path: string, body?: unknown) => {
    const res = await svc.request(method, path, { key: svc.privateKey, body });
    if (!res.ok) throw new Error(`${method} ${path} answered ${res.status}: ${await res.text()}`);
    return (await res.json()) as any;
  };
  const texts = (selector: string) => page.$$eval(selector, (els) => els.map((e) => (e.textContent as string).trim()));
  /** The screen at 1440x900 and 390x844, light and dark: `<name>.png`, `-dark`, `-phone`, `-phone-dark`. */
  const shots = async (name: string, ready: string) => {
    for (const [suffix, width, height] of [['', 1440, 900], ['-phone', 390, 844]] as const) {
      await page.setViewport({ width, height });
      await page.waitForSelector(ready);
      // Nothing wider than a phone's screen but what scrolls inside a table.
      if (width === 390) expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
      await moves.shot(`${name}${suffix}`);
      await page.emulateMediaFeatures([{ name: 'prefers-color-scheme', value: 'dark' }]);
      await Bun.sleep(150);
      await moves.shot(`${name}${suffix}-dark`);
      await page.emulateMediaFeatures([{ name: 'prefers-color-scheme', value: 'light' }]);
    }
    await page.setViewport({ width: 1440, height: 900 });
  };

  beforeAll(async () => {
    svc = await startTestService();
    await sendEvents(svc, seedEvents());
    chromium = await launchChromium();
    ({ page, faults } = await signedInConsole(chromium, svc.url, svc.privateKey));
    await page.setViewport({ width: 1440, height: 900 });
    await page.emulateMediaFeatures([{ name: 'prefers-color-scheme', value: 'light' }]);
    moves = consoleMoves(page);
  });
  afterAll(async () => {
    await chromium?.close();
    await svc?.stop();
  });

  test("a funnel broken down by group links each group to its page: members with names and first touch, the group's events", async () => {
    const query = { ...FUNNEL, breakdown: { property: 'groupId', source: 'event' } };
    await page.evaluate((h: string) => (location.hash = h), `#/insights/funnels?${new URLSearchParams({ q: JSON.stringify(query) })}`);
    await page.waitForSelector('.funnel-column h3 a.group-link');
    const answer = await call('POST', '/insights/funnels', query);
    const values = answer.results.map((r: any) => r.breakdownValue).filter((v: string) => v !== '');
    expect(values.toSorted()).toEqual(['acme', 'globex', 'initech']);
    expect(await page.$$eval('.funnel-column h3 a.group-link', (links) => links.map((a) => a.getAttribute('href')))).toEqual(values.map((v: string) => `#/groups/${v}`));

    await page.click('.funnel-column[data-breakdown="acme"] h3 a');
    await page.waitForFunction(() => location.hash === '#/groups/acme');
    await page.waitForSelector('[data-field="personCount"]');
    const acme = await call('GET', '/groups/acme');
    expect(await page.$eval('h1', (e) => e.textContent)).toBe('Acme Corp acme');
    expect(await page.$eval('[data-field="personCount"]', (e) => e.textContent)).toBe(String(acme.personCount));
    expect(await page.$eval('.person-cards', (e) => e.textContent)).toContain('Manufacturing');
    // Its members as GET /persons answers a group filter: ids, names or emails, first touch, plan.
    await page.waitForSelector('.group-members tr[data-person]');
    const members = await call('GET', `/persons?filters=${encodeURIComponent(JSON.stringify([{ property: 'groupId', source: 'group', operator: 'eq', value: 'acme' }]))}`);
    expect(members.results.map((p: any) => p.personId).toSorted()).toEqual(['ada', 'cy', 'eve']);
    expect(await page.$$eval('.group-members tr[data-person]', (r) => r.map((x) => x.getAttribute('data-person')))).toEqual(members.results.map((p: any) => p.personId));
    expect(await texts('.group-members tr[data-person="ada"] [data-field]')).toEqual(['ada@acme.test', 'United Kingdom (GB)', 'Google', 'enterprise']);
    expect(await texts('.group-members tr[data-person="cy"] [data-field]')).toEqual(['Cy Young', 'United States (US)', 'Hacker News', 'enterprise']);
    // Its events, newest first, as GET /events?groupId answers them.
    const events = await call('GET', '/events?groupId=acme&orderByField=timestamp&orderByDirection=DESC&limit=50');
    await moves.waitForText('.timeline-card', `${events.total} of ${events.total} events`);
    // (A group call is labelled by the group it names.)
    expect(await texts('.timeline-row .timeline-event')).toEqual(events.results.map((e: any) => e.event ?? e.groupId));
    await shots('group', '.timeline-row');

    // The list of groups: each with its members and last seen, as GET /groups answers them.
    await moves.go('groups');
    await moves.waitForText('.result-summary', 'of 3 groups');
    const groups = await call('GET', '/groups');
    expect(await page.$$eval('tr[data-group]', (r) => r.map((x) => x.getAttribute('data-group')))).toEqual(groups.results.map((g: any) => g.groupId));
    expect(await texts('tr[data-group] [data-field="personCount"]')).toEqual(groups.results.map((g: any) => String(g.personCount)));
    expect(await texts('tr[data-group] [data-field="name"]')).toEqual(groups.results.map((g: any) => g.traits.name));
    await shots('groups', 'tr[data-group]');
    expect(faults).toEqual({ blocked: [], errors: [] });
  });

  test("a person's page shows their first touch and links to their company", async () => {
    await moves.go('persons/bob');
    await page.waitForSelector('.first-touch');
    const bob = await call('GET', '/persons/bob');
    expect(bob.firstTouch).toMatchObject({ $initial_source: 'Twitter', $initial_country: 'DE', $initial_pathname: '/pricing' });
    expect(await page.$eval('[data-field="$initial_source"]', (e) => e.textContent)).toBe('Twitter');
    expect(await page.$eval('[data-field="$initial_country"]', (e) => e.textContent)).toBe('Germany (DE)');
    expect(await page.$eval('[data-field="$initial_pathname"]', (e) => e.textContent)).toBe('/pricing');
    expect(await page.$eval('[data-field="$initial_referrer"]', (e) => e.textContent)).toBe(bob.firstTouch.$initial_referrer);
    await page.waitForSelector('.company-list a');
    expect(await page.$$eval('.company-list a', (links) => links.map((a) => [a.textContent, a.getAttribute('href')]))).toEqual([['Globex', '#/groups/globex']]);
    await page.waitForSelector('.timeline-row');
    await shots('person-first-touch', '.company-list a');
    await page.click('.company-list a');
    await page.waitForFunction(() => location.hash === '#/groups/globex');
    await page.waitForSelector('.group-members tr[data-person="bob"]');

    // The list of persons: country, source and plan beside the name or email.
    await moves.go('persons');
    await moves.waitForText('.result-summary', 'of 7 persons');
    const persons = await call('GET', '/persons');
    const row = (p: any) => [p.traits.email ?? p.traits.name ?? '—', p.firstTouch.$initial_country, p.firstTouch.$initial_source || 'Direct / None', p.traits.plan ?? '—'];
    const shown = await page.$$eval('tr[data-person]', (rows) => rows.map((r) => [...r.querySelectorAll('[data-field]')].map((c: any) => [c.getAttribute('data-field') === 'country' ? c.getAttribute('title') : c.textContent.trim()])).map((cells) => cells.flat()));
    expect(shown).toEqual(persons.results.map(row));
    await shots('persons-columns', 'tr[data-person]');
    expect(faults).toEqual({ blocked: [], errors: [] });
  });

  test("a funnel step's persons show their names or emails beside their ids", async () => {
    await page.evaluate((h: string) => (location.hash = h), `#/insights/funnels?${new URLSearchParams({ q: JSON.stringify(FUNNEL) })}`);
    await page.waitForSelector('.funnel-step[data-step="1"] button.funnel-rail');
    await page.click('.funnel-step[data-step="1"] button.funnel-rail');
    await page.waitForFunction(() => document.querySelector('dialog[open] .actors-status')?.textContent?.match(/^\d/));
    const api = await call('POST', '/insights/funnels/persons', { query: FUNNEL, step: 1 });
    expect(api.results.map((r: any) => r.personId)).toEqual(['ada', 'bob', 'cy', 'eve', 'gus']);
    expect(api.results.find((r: any) => r.personId === 'ada')).toEqual({ personId: 'ada', name: 'Ada Lovelace', email: 'ada@acme.test' });
    const listed = await page.$$eval('dialog[open] .actors-list li', (lis) => lis.map((li) => [li.getAttribute('data-actor'), li.querySelector('.actor-name')?.textContent ?? '']));
    expect(listed).toEqual(api.results.map((r: any) => [r.personId, [r.name, r.email].filter(Boolean).join(' · ')]));
    expect(listed[0]).toEqual(['ada', 'Ada Lovelace · ada@acme.test']);
    await shots('insights-persons-names', 'dialog[open] .actor-name');
    expect(faults).toEqual({ blocked: [], errors: [] });
  });
});
