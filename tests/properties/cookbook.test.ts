import { afterAll, beforeAll, expect, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readColumnsOf, waitForStoredReads } from '../helpers/stored-reads';
import { PROJECT_ROOT } from '../helpers/project-root';
import { runQueries } from '../helpers/queries';
import { describeInProcess } from '../helpers/deno-service';
import { sendEvents, startTestService, type TestService } from '../helpers/test-service';

/**
 * Every SQL of docs/sql.md, and the shapes the interface document gives as examples, answer the
 * same before their reads are stored in columns (a service with PROPERTY_COLUMNS_MAX=0) and after
 * (the same data, once a service that stores them has).
 */
const COOKBOOK = [...readFileSync(join(PROJECT_ROOT, 'docs', 'sql.md'), 'utf8').matchAll(/```sql\n([\s\S]*?)\n```/g)].map((m) => m[1]!);
const SEED_SHAPES = [
  "SELECT uuid, event, type FROM events WHERE userId = 'u1' ORDER BY timestamp",
  "SELECT count() AS n FROM events WHERE JSONExtract(properties, 'plan', 'String') = 'pro'",
  "SELECT event FROM events WHERE JSONExtract(context, 'screen', 'width', 'UInt64') >= 1280 ORDER BY event",
  "SELECT userId FROM events WHERE JSONExtract(traits, 'age', 'UInt64') > 30",
  `SELECT e.event, JSONExtractString(i.traits, 'plan') AS plan, count() AS n FROM events AS e
   LEFT JOIN (SELECT userId, any(traits) AS traits FROM events WHERE type = 'identify' GROUP BY userId) AS i ON e.userId = i.userId
   WHERE e.type = 'track' GROUP BY e.event, plan ORDER BY n DESC, e.event`,
];
const STATEMENTS = [...COOKBOOK, ...SEED_SHAPES];

const EVENTS = [
  { type: 'identify', userId: 'u1', timestamp: '2024-03-01T09:00:00Z', traits: { email: 'u1@example.com', plan: 'pro', age: 41 } },
  { type: 'identify', userId: 'u2', timestamp: '2024-03-01T09:30:00Z', traits: { email: 'u2@example.com', plan: 'free', age: 29 } },
  { type: 'track', event: 'signup', userId: 'u1', timestamp: '2024-03-01T10:00:00Z', properties: { plan: 'pro' }, context: { screen: { width: 1920 } } },
  { type: 'track', event: 'signup', userId: 'u2', timestamp: '2024-03-01T11:00:00Z', properties: { plan: 'free' }, context: { screen: { width: 800 } } },
  { type: 'track', event: 'purchase', userId: 'u1', timestamp: '2024-03-02T10:00:00Z', properties: { plan: 'pro', amount: 49.5 } },
  { type: 'page', event: '/pricing', anonymousId: 'a1', timestamp: '2024-03-02T11:00:00Z' },
  { type: 'identify', userId: 'u3', anonymousId: 'a1', timestamp: '2024-03-02T12:00:00Z', traits: { plan: 'team' } },
  { type: 'track', event: 'purchase', userId: 'u3', timestamp: '2024-03-03T10:00:00Z', properties: { plan: 'team', amount: 10 } },
  { type: 'page', event: 'home', anonymousId: 'a2', timestamp: '2024-03-03T12:00:00Z' },
];

let svc: TestService;
let before: string[];
/** Each statement's answer text (one request each: a request holds ten at most). */
const answers = (svc: TestService) =>
  Promise.all(
    STATEMENTS.map(async (sql) => {
      const { status, text } = await runQueries(svc, [sql]);
      expect({ sql, status }).toEqual({ sql, status: 200 });
      return text;
    }),
  );

// They read the service's storage (its stored columns and mutations): in its own process only.
describeInProcess('the cookbook and the seed examples with their reads stored', () => {
  beforeAll(async () => {
    const plain = await startTestService({ PROPERTY_COLUMNS_MAX: '0' });
    await sendEvents(plain, EVENTS);
    before = await answers(plain);
    await plain.stop();
    svc = await startTestService({ ...plain.settings, PROPERTY_COLUMNS_MAX: '12' });
  });
  afterAll(() => svc.stop());

  test('the cookbook has its statements, reads by keys among them', () => {
    expect(COOKBOOK.length).toBeGreaterThanOrEqual(8);
    expect(COOKBOOK.some((sql) => sql.includes('JSONExtract(properties'))).toBe(true);
  });

  test('each statement answers the same with its reads stored in columns', async () => {
    const database = svc.config.defaultWorkspaceDatabase;
    expect(await readColumnsOf(svc, database)).toEqual([]);
    await answers(svc);
    await answers(svc);
    await waitForStoredReads(svc, database, ["JSONExtract(properties, 'plan', 'String')", "JSONExtract(context, 'screen', 'width', 'UInt64')", "JSONExtract(traits, 'age', 'UInt64')"]);
    const after = await answers(svc);
    for (const [i, sql] of STATEMENTS.entries()) expect({ sql, answer: after[i] }).toEqual({ sql, answer: before[i] });
  });
});
