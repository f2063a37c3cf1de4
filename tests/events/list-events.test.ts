import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { listEvents, sendEvents, startTestService, type TestService } from '../helpers/test-service';

/**
 * GET /events over a fixed set of 20 events. Every event has an explicit timestamp; the
 * comments give each one in UTC. D, E and F share a timestamp, as do L and M, and Q and R.
 */
const FIXTURE = {
  T: { type: 'track', event: 'signup', userId: "o'brien", timestamp: '2024-02-28T12:00:00Z' },
  A: {
    type: 'track', event: 'signup', userId: 'u1', anonymousId: 'a1', instanceId: 'i1',
    properties: { plan: 'pro', count: 3, beta: true }, context: { locale: 'en-US' },
    timestamp: '2024-03-01T00:00:00Z',
  },
  B: {
    type: 'track', event: 'signup', userId: 'u2', anonymousId: 'a2', instanceId: 'i1',
    properties: { plan: 'free', count: 1, beta: false }, timestamp: '2024-03-01T09:30:00Z',
  },
  C: {
    type: 'page', event: 'home', userId: 'u1', anonymousId: 'a1', instanceId: 'i2',
    properties: { path: '/' }, context: { locale: 'de-DE' }, timestamp: '2024-03-01T12:00:00Z',
  },
  D: {
    type: 'track', event: 'purchase', userId: 'u1', anonymousId: 'a1', instanceId: 'i1',
    properties: { plan: 'pro', count: 3, amount: 49.5 }, timestamp: '2024-03-02T10:00:00Z',
  },
  E: {
    type: 'track', event: 'purchase', userId: 'u3', anonymousId: 'a3', instanceId: 'i2',
    properties: { plan: 'pro', count: 30 }, timestamp: '2024-03-02T10:00:00Z',
  },
  F: { type: 'identify', userId: 'u1', traits: { email: 'u1@example.com', vip: true, age: 41 }, timestamp: '2024-03-02T10:00:00Z' },
  G: { type: 'identify', userId: 'u2', traits: { email: 'u2@example.com', vip: false }, timestamp: '2024-03-02T23:59:59.999999Z' },
  H: { type: 'group', userId: 'u1', groupId: 'g1', traits: { name: 'Acme', seats: 10 }, timestamp: '2024-03-03T00:00:00Z' },
  // 2024-03-03T03:00:00Z
  I: { type: 'group', userId: 'u3', groupId: 'g2', traits: { name: 'Globex' }, timestamp: '2024-03-03T05:00:00+02:00' },
  J: {
    type: 'page', event: 'pricing', anonymousId: 'a4', properties: { path: '/pricing' },
    context: { locale: 'en-US', campaign: 'spring' }, timestamp: '2024-03-03T12:00:00Z',
  },
  // 2024-03-04T04:30:00Z: a day later in UTC than its local date
  K: {
    type: 'track', event: 'signup', userId: 'u4', anonymousId: 'a4',
    properties: { plan: 'pro', count: 2, beta: true }, timestamp: '2024-03-03T23:30:00-05:00',
  },
  L: { type: 'track', event: 'logout', userId: 'u1', anonymousId: 'a1', instanceId: 'i1', timestamp: '2024-03-04T08:00:00Z' },
  M: {
    type: 'page', event: 'home', userId: 'u2', anonymousId: 'a2', instanceId: 'i2',
    properties: { path: '/' }, context: { locale: 'en-US' }, timestamp: '2024-03-04T08:00:00Z',
  },
  N: {
    type: 'track', event: 'purchase', userId: 'u2', anonymousId: 'a2', groupId: 'g1',
    properties: { plan: 'free', count: 3 }, timestamp: '2024-03-04T15:00:00Z',
  },
  O: { type: 'identify', anonymousId: 'a5', traits: { email: 'anon@example.com' }, timestamp: '2024-03-05T00:00:00Z' },
  P: { type: 'track', event: 'signup', userId: 'u5', instanceId: 'i3', properties: { plan: 'pro', count: 3 }, timestamp: '2024-03-05T06:00:00Z' },
  Q: { type: 'page', event: 'home', userId: 'u1', timestamp: '2024-03-05T18:00:00.123456Z' },
  R: { type: 'group', userId: 'u2', groupId: 'g1', traits: { name: 'Acme' }, timestamp: '2024-03-05T18:00:00.123456Z' },
  S: { type: 'track', event: 'purchase', userId: 'u5', properties: { plan: 'enterprise', count: 3 }, timestamp: '2024-03-06T23:59:59Z' },
} as const;

type Label = keyof typeof FIXTURE;
const LABELS = Object.keys(FIXTURE) as Label[];

/** Labels in an expected order; an inner array is a group of ties, ordered by uuid. */
type Expected = Array<Label | Label[]>;

/** The full list in the default order (timestamp DESC, ties by uuid DESC). */
const ALL_DESC: Expected = ['S', ['Q', 'R'], 'P', 'O', 'N', ['L', 'M'], 'K', 'J', 'I', 'H', 'G', ['D', 'E', 'F'], 'C', 'B', 'A', 'T'];

let svc: TestService;
const uuidOf = {} as Record<Label, string>;
const labelOf = new Map<string, Label>();
const sent = {} as Record<Label, Record<string, unknown>>;

beforeAll(async () => {
  svc = await startTestService();
  const { results } = await sendEvents(svc, LABELS.map((l) => FIXTURE[l]));
  LABELS.forEach((l, i) => {
    const event = results[i]!;
    sent[l] = event;
    uuidOf[l] = String(event.uuid);
    labelOf.set(String(event.uuid), l);
  });
});
afterAll(() => svc.stop());

/**
 * The engine's UUID order, which is not the order of the text: a UUID is stored as two 64-bit
 * halves and compares by its last 8 bytes first, then its first 8.
 */
function uuidKey(uuid: string): string {
  const hex = uuid.toLowerCase().replace(/-/g, '');
  return hex.slice(16) + hex.slice(0, 16);
}

/** Expands tie groups, ordering each by uuid (the engine's order) in `direction`. */
function expected(order: Expected, direction: 'ASC' | 'DESC' = 'DESC'): Label[] {
  return order.flatMap((item) => {
    if (!Array.isArray(item)) return [item];
    const key = (l: Label) => uuidKey(uuidOf[l]);
    const sorted = [...item].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
    return direction === 'ASC' ? sorted : sorted.reverse();
  });
}

/** A query string with every key and value percent-encoded. */
function qs(params: Record<string, string>): string {
  return Object.entries(params)
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`)
    .join('&');
}

/** GET /events with `params`; fails unless 200, and answers the labels of the results in order. */
async function list(params: Record<string, string>): Promise<{ labels: Label[]; body: any }> {
  const { status, body } = await listEvents(svc, qs(params));
  if (status !== 200) throw new Error(`GET /events?${qs(params)} answered ${status}: ${JSON.stringify(body)}`);
  const labels = body.results.map((e: any) => {
    const l = labelOf.get(e.uuid);
    if (!l) throw new Error(`unexpected event ${e.uuid} in the results`);
    return l;
  });
  return { labels, body };
}

/** Asserts the exact results (in order) and that `total` counts them all on one page. */
async function expectMatches(params: Record<string, string>, order: Expected, direction: 'ASC' | 'DESC' = 'DESC') {
  const want = expected(order, direction);
  const { labels, body } = await list(params);
  expect(labels).toEqual(want);
  expect(body.total).toBe(want.length);
  expect(body.offset).toBe(0);
  expect(body.limit).toBe(1000);
}

describe('GET /events filters, each alone', () => {
  test('event', async () => {
    await expectMatches({ event: 'signup' }, ['P', 'K', 'B', 'A', 'T']);
    await expectMatches({ event: 'home' }, ['Q', 'M', 'C']);
    await expectMatches({ event: 'Signup' }, []);
  });

  test('uuid, returning the event as it was sent', async () => {
    const { labels, body } = await list({ uuid: uuidOf.D });
    expect(labels).toEqual(['D']);
    expect(body.results).toEqual([sent.D]);
    expect(body.total).toBe(1);
    await expectMatches({ uuid: uuidOf.K.toUpperCase() }, ['K']);
    await expectMatches({ uuid: '00000000-0000-4000-8000-000000000000' }, []);
  });

  test('userId', async () => {
    await expectMatches({ userId: 'u1' }, ['Q', 'L', 'H', ['D', 'F'], 'C', 'A']);
    await expectMatches({ userId: "o'brien" }, ['T']);
  });

  test('groupId', async () => {
    await expectMatches({ groupId: 'g1' }, ['R', 'N', 'H']);
  });

  test('anonymousId', async () => {
    await expectMatches({ anonymousId: 'a4' }, ['K', 'J']);
  });

  test('instanceId', async () => {
    await expectMatches({ instanceId: 'i1' }, ['L', 'D', 'B', 'A']);
  });

  test('type', async () => {
    await expectMatches({ type: 'group' }, ['R', 'I', 'H']);
    await expectMatches({ type: 'identify' }, ['O', 'G', 'F']);
  });

  test('startDate alone, inclusive', async () => {
    await expectMatches({ startDate: '2024-03-05T00:00:00Z' }, ['S', ['Q', 'R'], 'P', 'O']);
  });

  test('endDate alone, inclusive', async () => {
    await expectMatches({ endDate: '2024-03-01T09:30:00Z' }, ['B', 'A', 'T']);
  });

  test('startDate and endDate, both inclusive, with ties on each boundary', async () => {
    await expectMatches(
      { startDate: '2024-03-02T10:00:00Z', endDate: '2024-03-04T08:00:00Z' },
      [['L', 'M'], 'K', 'J', 'I', 'H', 'G', ['D', 'E', 'F']],
    );
    // Microsecond precision at both ends.
    await expectMatches({ startDate: '2024-03-05T18:00:00.123456Z', endDate: '2024-03-05T18:00:00.123456Z' }, [['Q', 'R']]);
    await expectMatches({ startDate: '2024-03-05T18:00:00.123457Z' }, ['S']);
    await expectMatches({ endDate: '2024-03-02T23:59:59.999998Z', startDate: '2024-03-02T10:00:00.000001Z' }, []);
  });

  test('a date-only endDate includes that whole day; a date-only startDate starts at midnight', async () => {
    await expectMatches({ endDate: '2024-03-02' }, ['G', ['D', 'E', 'F'], 'C', 'B', 'A', 'T']);
    await expectMatches({ startDate: '2024-03-03', endDate: '2024-03-03' }, ['J', 'I', 'H']);
  });

  test('dates with offsets are compared in UTC', async () => {
    // 03:00Z and 04:30Z: exactly I and K at the boundaries.
    await expectMatches({ startDate: '2024-03-03T05:00:00+02:00', endDate: '2024-03-03T23:30:00-05:00' }, ['K', 'J', 'I']);
    // One microsecond inside on each side excludes both boundary events.
    await expectMatches({ startDate: '2024-03-03T05:00:00.000001+02:00', endDate: '2024-03-03T23:29:59.999999-05:00' }, ['J']);
  });
});

describe('GET /events filters on properties, traits and context', () => {
  test('properties.<key> with a string value', async () => {
    await expectMatches({ 'properties.plan': 'pro' }, ['P', 'K', ['D', 'E'], 'A']);
    await expectMatches({ 'properties.path': '/' }, ['M', 'C']);
  });

  test('properties.<key> with a number value', async () => {
    await expectMatches({ 'properties.count': '3' }, ['S', 'P', 'N', 'D', 'A']);
    await expectMatches({ 'properties.amount': '49.5' }, ['D']);
  });

  test('properties.<key> with a boolean value', async () => {
    await expectMatches({ 'properties.beta': 'true' }, ['K', 'A']);
    await expectMatches({ 'properties.beta': 'false' }, ['B']);
  });

  test('traits.<key>', async () => {
    await expectMatches({ 'traits.email': 'u1@example.com' }, ['F']);
    await expectMatches({ 'traits.name': 'Acme' }, ['R', 'H']);
    await expectMatches({ 'traits.vip': 'true' }, ['F']);
    await expectMatches({ 'traits.seats': '10' }, ['H']);
  });

  test('context.<key>', async () => {
    await expectMatches({ 'context.locale': 'en-US' }, ['M', 'J', 'A']);
    await expectMatches({ 'context.campaign': 'spring' }, ['J']);
  });

  test('a key that does not exist gives no results', async () => {
    await expectMatches({ 'properties.nope': 'x' }, []);
    await expectMatches({ 'context.plan': 'pro' }, []); // plan is a property, not context
    await expectMatches({ 'traits.email': 'nobody@example.com' }, []);
  });
});

describe('GET /events combines filters with AND', () => {
  test('type + userId + properties.plan + date range', async () => {
    const range = { startDate: '2024-03-01', endDate: '2024-03-05' };
    await expectMatches({ type: 'track', 'properties.plan': 'pro', ...range }, ['P', 'K', ['D', 'E'], 'A']);
    await expectMatches({ type: 'track', userId: 'u1', 'properties.plan': 'pro', ...range }, ['D', 'A']);
    await expectMatches({ type: 'track', userId: 'u1', 'properties.plan': 'pro', 'properties.count': '3', ...range, startDate: '2024-03-01T00:00:00.000001Z' }, ['D']);
    await expectMatches({ type: 'page', event: 'signup' }, []);
  });
});

describe('GET /events paging', () => {
  test('total is the count of all matches when limit cuts the page', async () => {
    const { labels, body } = await list({ userId: 'u1', limit: '2' });
    expect(labels).toEqual(['Q', 'L']);
    expect(body).toMatchObject({ limit: 2, offset: 0, total: 7 });
  });

  test('limit defaults to 1000', async () => {
    const { labels, body } = await list({});
    expect(labels).toEqual(expected(ALL_DESC));
    expect(body).toMatchObject({ limit: 1000, offset: 0, total: 20 });
  });

  test('a limit over 1000 is clamped, and the response says so', async () => {
    const { labels, body } = await list({ limit: '5000' });
    expect(labels).toEqual(expected(ALL_DESC));
    expect(body).toMatchObject({ limit: 1000, offset: 0, total: 20 });
  });

  test('limit=0 returns no results but the right total', async () => {
    const { labels, body } = await list({ userId: 'u1', limit: '0' });
    expect(labels).toEqual([]);
    expect(body).toMatchObject({ limit: 0, offset: 0, total: 7 });
  });

  test('pages of 3 do not overlap and together are the full ordered list', async () => {
    const pages: Label[][] = [];
    for (let offset = 0; offset < 20; offset += 3) {
      const { labels, body } = await list({ limit: '3', offset: String(offset) });
      expect(body).toMatchObject({ limit: 3, offset, total: 20 });
      pages.push(labels);
    }
    expect(pages.map((p) => p.length)).toEqual([3, 3, 3, 3, 3, 3, 2]);
    expect(pages.flat()).toEqual(expected(ALL_DESC));
    expect(new Set(pages.flat()).size).toBe(20);
    const past = await list({ limit: '3', offset: '21' });
    expect(past.labels).toEqual([]);
    expect(past.body).toMatchObject({ limit: 3, offset: 21, total: 20 });
  });
});

describe('GET /events ordering', () => {
  test('default is timestamp DESC', async () => {
    const { labels } = await list({});
    expect(labels).toEqual(expected(ALL_DESC));
    expect((await list({ orderByField: 'timestamp', orderByDirection: 'DESC' })).labels).toEqual(labels);
    expect((await list({ orderByDirection: 'desc' })).labels).toEqual(labels);
  });

  test('timestamp ASC, case-insensitive', async () => {
    const asc = expected([...ALL_DESC].reverse(), 'ASC');
    expect(asc).toEqual(expected(ALL_DESC).reverse());
    expect((await list({ orderByField: 'timestamp', orderByDirection: 'ASC' })).labels).toEqual(asc);
    expect((await list({ orderByField: 'timestamp', orderByDirection: 'asc' })).labels).toEqual(asc);
    expect((await list({ orderByDirection: 'Asc' })).labels).toEqual(asc);
  });

  test('userId DESC, ties by uuid; absent userIds last', async () => {
    const { labels } = await list({ orderByField: 'userId', orderByDirection: 'DESC' });
    expect(labels).toEqual(
      expected([['P', 'S'], 'K', ['E', 'I'], ['B', 'G', 'M', 'N', 'R'], ['A', 'C', 'D', 'F', 'H', 'L', 'Q'], 'T', ['J', 'O']]),
    );
  });

  test('uuid ASC follows the engine\'s UUID order, the tie-breaker of every other order', async () => {
    const byKey = [...LABELS].sort((a, b) => (uuidKey(uuidOf[a]) < uuidKey(uuidOf[b]) ? -1 : 1));
    expect((await list({ orderByField: 'uuid', orderByDirection: 'ASC' })).labels).toEqual(byKey);
    expect((await list({ orderByField: 'uuid' })).labels).toEqual([...byKey].reverse());
  });

  test('ties are broken deterministically, so paging through them is stable', async () => {
    const tie = { startDate: '2024-03-02T10:00:00Z', endDate: '2024-03-02T10:00:00Z' };
    const want = expected([['D', 'E', 'F']]);
    for (const [direction, order] of [['DESC', want], ['ASC', [...want].reverse()]] as const) {
      const whole = await list({ ...tie, orderByDirection: direction });
      expect(whole.labels).toEqual(order);
      const paged: Label[] = [];
      for (let offset = 0; offset < 3; offset++) {
        const page = await list({ ...tie, orderByDirection: direction, limit: '1', offset: String(offset) });
        expect(page.body.total).toBe(3);
        paged.push(...page.labels);
      }
      expect(paged).toEqual(order);
    }
    // The same query twice gives the same order.
    expect((await list({ orderByField: 'type' })).labels).toEqual((await list({ orderByField: 'type' })).labels);
  });
});

describe('GET /events refuses with 400 problem+json', () => {
  const cases: Array<[string, string, string, string]> = [
    ['a negative limit', 'limit=-1', 'limit', 'must be a whole number'],
    ['a fractional limit', 'limit=1.5', 'limit', 'must be a whole number'],
    ['a limit that is not a number', 'limit=abc', 'limit', 'must be a whole number'],
    ['a negative offset', 'offset=-3', 'offset', 'must be a whole number'],
    ['an orderByField that is not a field', 'orderByField=password', 'orderByField', 'must be one of timestamp'],
    ['an unknown orderByDirection', 'orderByDirection=UP', 'orderByDirection', 'must be ASC or DESC'],
    ['a startDate that is not ISO 8601', 'startDate=yesterday', 'startDate', 'ISO 8601'],
    ['an impossible endDate', 'endDate=2024-02-30', 'endDate', 'ISO 8601'],
    ['a uuid that is not a UUID', 'uuid=not-a-uuid', 'uuid', 'must be a UUID'],
    ['an unknown type', 'type=pageview', 'type', 'must be one of page, track, identify, group, screen, alias'],
    ['an unknown parameter (wrong case)', 'userid=x', 'userid', 'is not a filter'],
  ];
  for (const [what, query, parameter, detail] of cases) {
    test(`${what}: ${query}`, async () => {
      const res = await svc.request('GET', `/events?${query}`, { key: svc.privateKey });
      expect(res.status).toBe(400);
      expect(res.headers.get('content-type')).toBe('application/problem+json');
      const body = (await res.json()) as any;
      expect(body).toMatchObject({ status: 400, title: 'Invalid input' });
      expect(body.errors).toContainEqual({ parameter, detail: expect.stringContaining(detail) });
    });
  }

  test('an unknown parameter is named in the detail', async () => {
    const res = await svc.request('GET', '/events?userid=x&foo=1', { key: svc.privateKey });
    expect(res.status).toBe(400);
    const body = (await res.json()) as any;
    expect(body.detail).toContain('userid');
    expect(body.detail).toContain('foo');
    expect(body.errors.map((e: any) => e.parameter)).toEqual(['userid', 'foo']);
  });
});

describe('GET /events binds values', () => {
  test('SQL-looking values match nothing', async () => {
    await expectMatches({ userId: "' OR 1=1 --" }, []);
    await expectMatches({ event: "signup' OR '1'='1" }, []);
    await expectMatches({ 'properties.plan': "pro' OR '1'='1" }, []);
    await expectMatches({ "properties.plan') OR 1=1 --": 'pro' }, []);
    // The data is intact afterwards.
    expect((await list({ limit: '0' })).body.total).toBe(20);
  });
});
