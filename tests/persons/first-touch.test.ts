import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { uniqueName } from '../helpers/engine-dir';
import { rowsOf } from '../helpers/queries';
import { createWorkspace, sendEvents, startTestService, type TestService } from '../helpers/test-service';

const FIREFOX = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0';
const IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1';
const at = (day: number, hour: number) => new Date(Date.UTC(2026, 9, day, hour)).toISOString();

/** An anonymous page view arriving at `url` from `referrer`, from a browser in `country`. */
const arrival = (anonymousId: string, url: string, referrer: string, userAgent: string, country: string, timestamp: string) => ({
  type: 'page',
  anonymousId,
  context: { page: { url, path: new URL(url).pathname, referrer }, userAgent, location: { country } },
  timestamp,
});

describe('first touch on persons, with known answers', () => {
  let svc: TestService;
  let key: string;
  const request = async (method: string, path: string, body?: unknown) => {
    const res = await svc.request(method, path, { key, body });
    return { status: res.status, body: (await res.json()) as any };
  };
  beforeAll(async () => {
    svc = await startTestService();
    const workspace = await createWorkspace(svc, { name: uniqueName('first-touch') });
    key = workspace.privateApiKey;
    await sendEvents(
      svc,
      [
        // Ann arrives from Google on 1 October, browses again from Twitter, signs up on the 3rd.
        arrival('ann-browser', 'https://shop.example/pricing?utm_medium=cpc&utm_campaign=autumn', 'https://www.google.com/search?q=shop', FIREFOX, 'FR', at(1, 9)),
        arrival('ann-browser', 'https://shop.example/blog', 'https://t.co/x1', FIREFOX, 'FR', at(2, 9)),
        { type: 'identify', userId: 'ann', anonymousId: 'ann-browser', timestamp: at(3, 9) },
        { type: 'track', event: 'signup', userId: 'ann', timestamp: at(3, 9) },
        // Bob arrives from a tweet on his phone on 2 October, signs up on the 4th from a laptop.
        arrival('bob-phone', 'https://shop.example/', 'https://t.co/abc', IPHONE, 'DE', at(2, 12)),
        { type: 'identify', userId: 'bob', anonymousId: 'bob-phone', timestamp: at(2, 13) },
        arrival('bob-laptop', 'https://shop.example/signup', 'https://www.google.com/', FIREFOX, 'DE', at(4, 8)),
        { type: 'track', event: 'signup', userId: 'bob', anonymousId: 'bob-laptop', timestamp: at(4, 9) },
      ],
      workspace.publicApiKey,
    );
  });
  afterAll(() => svc.stop());

  test('a breakdown of sign-ups by first touch: one from Google, one from Twitter, though both signed up signed in', async () => {
    const res = await request('POST', '/insights/trends', {
      series: [{ event: 'signup', math: 'persons' }],
      breakdown: { property: '$initial_source', source: 'person' },
      dateFrom: '2026-10-01',
      dateTo: '2026-10-07',
      interval: 'week',
    });
    expect(res.status).toBe(200);
    const rows = res.body.results.map((r: { breakdownValue: string; total: number }) => [r.breakdownValue, r.total]).sort();
    expect(rows).toEqual([
      ['Google', 1],
      ['Twitter', 1],
    ]);
  });

  test("the persons API shows each person's first touch, from their first event (anonymous, linked later)", async () => {
    const ann = await request('GET', '/persons/ann');
    expect(ann.status).toBe(200);
    expect(ann.body.firstTouch).toMatchObject({
      $initial_referrer: 'https://www.google.com/search?q=shop',
      $initial_referring_domain: 'www.google.com',
      $initial_source: 'Google',
      $initial_utm_source: '',
      $initial_utm_medium: 'cpc',
      $initial_utm_campaign: 'autumn',
      $initial_pathname: '/pricing',
      $initial_country: 'FR',
      $initial_browser: 'Firefox',
      $initial_os: 'Windows',
      $initial_device: 'desktop',
    });
    const list = await request('GET', '/persons?search=bob');
    expect(list.body.results.map((p: { personId: string; firstTouch: Record<string, string> }) => [p.personId, p.firstTouch.$initial_source, p.firstTouch.$initial_device, p.firstTouch.$initial_pathname])).toEqual([
      ['bob', 'Twitter', 'mobile', '/'],
    ]);
  });

  test('a first-touch filter on persons, on an insight and in a cohort', async () => {
    const filters = JSON.stringify([{ property: '$initial_country', source: 'person', operator: 'eq', value: 'DE' }]);
    const persons = await request('GET', `/persons?filters=${encodeURIComponent(filters)}`);
    expect(persons.body.results.map((p: { personId: string }) => p.personId)).toEqual(['bob']);
    const trends = await request('POST', '/insights/trends', {
      series: [{ event: 'signup' }],
      filters: [{ property: '$initial_utm_campaign', source: 'person', operator: 'eq', value: 'autumn' }],
      dateFrom: '2026-10-01',
      dateTo: '2026-10-07',
      interval: 'week',
    });
    expect(trends.body.results[0].total).toBe(1);
    const cohort = await request('POST', '/cohorts', { name: 'from Twitter', filters: [{ property: '$initial_source', source: 'person', operator: 'eq', value: 'Twitter' }] });
    expect(cohort.status).toBe(201);
    const members = await request('GET', `/persons?cohort=${cohort.body.cohortId ?? cohort.body.id}`);
    expect(members.body.results.map((p: { personId: string }) => p.personId)).toEqual(['bob']);
  });

  test('SQL reads first touch from the person_first_touch view', async () => {
    const rows = await rowsOf(svc, 'SELECT personId, `$initial_source` AS source, `$initial_country` AS country FROM person_first_touch ORDER BY personId', key);
    expect(rows).toEqual([
      { personId: 'ann', source: 'Google', country: 'FR' },
      { personId: 'bob', source: 'Twitter', country: 'DE' },
    ]);
    // docs/sql.md's example: sign-ups by first touch.
    const signups = await rowsOf(
      svc,
      "SELECT t.`$initial_source` AS source, count() AS signups FROM events_with_persons AS e JOIN person_first_touch AS t USING personId WHERE e.event = 'signup' GROUP BY source ORDER BY signups DESC, source",
      key,
    );
    expect(signups).toEqual([
      { source: 'Google', signups: 1 },
      { source: 'Twitter', signups: 1 },
    ]);
  });
});
