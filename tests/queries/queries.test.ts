import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { runQueries, rowsOf } from '../helpers/queries';
import { sendEvents, startTestService, type TestService } from '../helpers/test-service';

const EVENTS = [
  {
    type: 'identify', userId: 'u1', timestamp: '2024-02-28T09:00:00Z',
    traits: { email: 'u1@example.com', plan: 'pro', age: 41, balance: -5, score: 9.5, vip: true },
  },
  { type: 'identify', userId: 'u2', timestamp: '2024-02-28T10:00:00Z', traits: { email: 'u2@example.com', plan: 'free', age: 29, balance: 3, score: 4.25, vip: false } },
  {
    type: 'track', event: 'signup', userId: 'u1', timestamp: '2024-03-01T10:00:00Z',
    properties: { plan: 'pro', seats: 10, delta: -3, price: 19.99, beta: true, id: 18446744073709551615n },
    context: { locale: 'en-US', screen: { width: 1920 } },
  },
  {
    type: 'track', event: 'signup', userId: 'u2', timestamp: '2024-03-01T11:00:00Z',
    properties: { plan: 'free', seats: 1, delta: 2, price: 0, beta: false }, context: { locale: 'de-DE' },
  },
  { type: 'track', event: 'purchase', userId: 'u1', timestamp: '2024-03-02T10:00:00Z', properties: { plan: 'pro', amount: 49.5 } },
  { type: 'page', event: 'home', userId: 'u1', timestamp: '2024-03-02T12:00:00Z' },
  { type: 'page', event: 'home', anonymousId: 'anon-7', timestamp: '2024-03-03T08:00:00Z' },
];

/** JSON text of the events, with the 64-bit id written as the integer it is. */
const EVENTS_JSON = JSON.stringify({ events: EVENTS }, (_k, v) => (typeof v === 'bigint' ? (JSON as any).rawJSON(String(v)) : v));

let svc: TestService;
let limited: TestService;
beforeAll(async () => {
  svc = await startTestService();
  const res = await svc.request('POST', '/events', { key: svc.publicKey, body: EVENTS_JSON });
  if (res.status !== 201) throw new Error(await res.text());
  limited = await startTestService({ QUERY_TIMEOUT_MS: '500', QUERY_MAX_RESULT_ROWS: '5' });
  await sendEvents(limited, [{ type: 'page' }]);
});
afterAll(async () => {
  await svc.stop();
  await limited.stop();
});

const count = async (where: string) => Number((await rowsOf(svc, `SELECT count() AS n FROM events WHERE ${where}`))[0].n);

describe('POST /queries on real data', () => {
  test('filters on userId, event and type', async () => {
    expect(await count("userId = 'u1'")).toBe(4);
    expect(await count("event = 'signup'")).toBe(2);
    expect(await count("type = 'page'")).toBe(2);
    expect(await count("type = 'track' AND userId = 'u2'")).toBe(1);
  });

  const extracts: Array<[string, string, string[]]> = [
    ['properties, UInt64', "JSONExtract(properties, 'seats', 'UInt64') > 5", ['u1']],
    ['properties, Int64', "JSONExtract(properties, 'delta', 'Int64') < 0", ['u1']],
    ['properties, Float64', "JSONExtract(properties, 'price', 'Float64') > 10.5", ['u1']],
    ['properties, String', "JSONExtract(properties, 'plan', 'String') = 'free'", ['u2']],
    ['properties, Bool', "JSONExtract(properties, 'beta', 'Bool') = true", ['u1']],
    ['properties, UInt64 beyond 2^53', "JSONExtract(properties, 'id', 'UInt64') = 18446744073709551615", ['u1']],
    ['context, String', "JSONExtract(context, 'locale', 'String') = 'de-DE'", ['u2']],
    ['context, nested UInt64', "JSONExtract(context, 'screen', 'width', 'UInt64') = 1920", ['u1']],
    ['traits, UInt64', "JSONExtract(traits, 'age', 'UInt64') > 40", ['u1']],
    ['traits, Int64', "JSONExtract(traits, 'balance', 'Int64') < 0", ['u1']],
    ['traits, Float64', "JSONExtract(traits, 'score', 'Float64') BETWEEN 4.2 AND 4.3", ['u2']],
    ['traits, String', "JSONExtract(traits, 'email', 'String') = 'u2@example.com'", ['u2']],
    ['traits, Bool', "type = 'identify' AND JSONExtract(traits, 'vip', 'Bool') = false", ['u2']],
  ];
  for (const [what, condition, users] of extracts) {
    test(`JSONExtract on ${what} in a comparison`, async () => {
      const rows = await rowsOf(svc, `SELECT userId FROM events WHERE ${condition} ORDER BY userId`);
      expect(rows.map((r) => r.userId)).toEqual(users);
    });
  }

  test('LEFT JOIN of events with a subselect of identify rows on userId returns traits values', async () => {
    const rows = await rowsOf(
      svc,
      `SELECT e.event AS event, e.userId AS userId, i.traits AS traits, JSONExtractString(i.traits, 'email') AS email
       FROM events AS e
       LEFT JOIN (SELECT userId, traits FROM events WHERE type = 'identify') AS i ON e.userId = i.userId
       WHERE e.type = 'track' ORDER BY e.timestamp`,
    );
    expect(rows).toEqual([
      { event: 'signup', userId: 'u1', traits: EVENTS[0]!.traits, email: 'u1@example.com' },
      { event: 'signup', userId: 'u2', traits: EVENTS[1]!.traits, email: 'u2@example.com' },
      { event: 'purchase', userId: 'u1', traits: EVENTS[0]!.traits, email: 'u1@example.com' },
    ]);
  });

  test('columns named properties, traits and context come back as objects, also behind a table alias', async () => {
    const rows = await rowsOf(svc, "SELECT properties, context, traits FROM events WHERE event = 'signup' AND userId = 'u2'");
    expect(rows).toEqual([{ properties: EVENTS[3]!.properties, context: { locale: 'de-DE' }, traits: '' }]);
    // In a join both sides have traits, so ClickHouse names the column with its table alias.
    const joined = await rowsOf(
      svc,
      "SELECT e.event, i.traits FROM events AS e LEFT JOIN (SELECT userId, traits FROM events WHERE type = 'identify') AS i ON e.userId = i.userId WHERE e.event = 'purchase'",
    );
    expect(joined).toEqual([{ event: 'purchase', 'i.traits': EVENTS[0]!.traits }]);
  });

  test('several statements: one entry each, in order, in the paginated wrapper', async () => {
    const { status, body } = await runQueries(svc, [
      "SELECT count() AS n FROM events WHERE type = 'identify'",
      'SELECT 1 AS one, \'two\' AS two',
      "SELECT event, count() AS n FROM events WHERE type = 'track' GROUP BY event ORDER BY event",
    ]);
    expect(status).toBe(200);
    expect(body).toEqual({
      results: [
        { results: [{ n: 2 }] },
        { results: [{ one: 1, two: 'two' }] },
        { results: [{ event: 'purchase', n: 1 }, { event: 'signup', n: 2 }] },
      ],
      limit: null,
      offset: null,
      total: 3,
    });
  });

  test('64-bit integers beyond 2^53 keep all their digits in the response text', async () => {
    const { status, text } = await runQueries(svc, [
      "SELECT toUInt64('18446744073709551615') AS max, toInt64('-9223372036854775808') AS min, JSONExtract(properties, 'id', 'UInt64') AS id, properties FROM events WHERE event = 'signup' AND userId = 'u1'",
    ]);
    expect(status).toBe(200);
    expect(text).toContain('"max":18446744073709551615');
    expect(text).toContain('"min":-9223372036854775808');
    expect(text).toContain('"id":18446744073709551615');
    expect(text).toContain('"properties":{"plan":"pro","seats":10,"delta":-3,"price":19.99,"beta":true,"id":18446744073709551615}');
  });

  test('an empty result is an empty list of rows', async () => {
    expect(await rowsOf(svc, "SELECT * FROM events WHERE userId = 'nobody'")).toEqual([]);
  });
});

describe('POST /queries refuses with 400', () => {
  async function expectFailure(queries: unknown, index: number, detail: string, service = svc) {
    const { status, body } = await runQueries(service, queries);
    expect(status).toBe(400);
    expect(body.detail).toContain(`statement ${index} `);
    expect(body.errors).toEqual([{ pointer: `/queries/${index}`, detail: expect.stringContaining(detail) }]);
  }

  test('a syntax error, naming its index', async () => {
    await expectFailure(['SELECT 1', 'SELEC count() FROM events'], 1, 'Syntax error');
  });

  test('an unknown column, naming its index', async () => {
    await expectFailure(['SELECT nope FROM events', 'SELECT 1'], 0, 'Unknown expression identifier `nope`');
  });

  test('a statement over the time limit', async () => {
    await expectFailure(['SELECT count() FROM numbers(1000000000000)'], 0, 'TIMEOUT_EXCEEDED', limited);
  });

  test('a result over the row limit', async () => {
    await expectFailure(['SELECT number FROM numbers(10)'], 0, 'Limit for result exceeded', limited);
    expect((await rowsOf(limited, 'SELECT number FROM numbers(5)')).length).toBe(5);
  });

  test('a FORMAT clause: results are always JSON', async () => {
    await expectFailure(['SELECT 1 FORMAT CSV'], 0, 'FORMAT CSV is not supported');
  });

  test("a property read as PostHog's HogQL reads it (properties.plan): how to read it here, not 'outside this workspace'", async () => {
    await expectFailure(["SELECT count() FROM events WHERE properties.plan = 'pro'"], 0, "properties.plan reads no property here: properties is JSON text, so read a value with JSONExtractString(properties, 'plan')");
    await expectFailure(['SELECT context.screen.width FROM events'], 0, "JSONExtractString(context, 'screen', 'width')");
    const { body } = await runQueries(svc, ['SELECT traits.email FROM events']);
    expect(body.detail).not.toContain('outside this workspace');
    // A table alias of that name is the statement's own: its columns read as usual.
    expect(await rowsOf(svc, "SELECT properties.event AS e FROM events AS properties WHERE properties.event = 'signup' LIMIT 1")).toEqual([{ e: 'signup' }]);
  });

  test('an empty statement', async () => {
    await expectFailure(['  -- nothing but a comment'], 0, 'Empty query');
  });

  const badBodies: Array<[string, unknown, string]> = [
    ['more statements than allowed', Array(11).fill('SELECT 1'), 'must be an array of 1 to 10 SQL statements'],
    ['no statements', [], 'must be an array of 1 to 10 SQL statements'],
    ['a statement that is not a string', ['SELECT 1', 42], 'must be a SQL statement'],
    ['a statement over the length limit', [`SELECT '${'x'.repeat(100_001)}'`], 'at most 100000 characters'],
  ];
  for (const [what, queries, detail] of badBodies) {
    test(what, async () => {
      const { status, body } = await runQueries(svc, queries);
      expect(status).toBe(400);
      expect(body.errors[0].detail).toContain(detail);
    });
  }

  test('a body without queries', async () => {
    const res = await svc.request('POST', '/queries', { key: svc.privateKey, body: { sql: 'SELECT 1' } });
    expect(res.status).toBe(400);
  });
});

describe('the SQL cookbook (docs/sql.md)', () => {
  test('daily active users', async () => {
    const rows = await rowsOf(
      svc,
      "SELECT toDate(timestamp) AS day, uniqExact(if(userId != '', userId, anonymousId)) AS users FROM events GROUP BY day ORDER BY day",
    );
    expect(rows).toEqual([
      { day: '2024-02-28', users: 2 },
      { day: '2024-03-01', users: 2 },
      { day: '2024-03-02', users: 1 },
      { day: '2024-03-03', users: 1 },
    ]);
  });

  test('a two-step funnel', async () => {
    const rows = await rowsOf(
      svc,
      `SELECT countIf(steps >= 1) AS signed_up, countIf(steps >= 2) AS purchased
       FROM (
         SELECT userId, windowFunnel(7 * 86400)(toDateTime(timestamp), event = 'signup', event = 'purchase') AS steps
         FROM events WHERE type = 'track' GROUP BY userId
       )`,
    );
    expect(rows).toEqual([{ signed_up: 2, purchased: 1 }]);
  });

  test('top event names', async () => {
    const rows = await rowsOf(svc, "SELECT event, count() AS n FROM events WHERE event != '' GROUP BY event ORDER BY n DESC, event LIMIT 10");
    expect(rows).toEqual([
      { event: 'home', n: 2 },
      { event: 'signup', n: 2 },
      { event: 'purchase', n: 1 },
    ]);
  });
});
