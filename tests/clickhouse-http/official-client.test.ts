import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { ClickHouseLogLevel, createClient, type ClickHouseClient } from '@clickhouse/client';
import type { CreatedWorkspace, TestService } from '../helpers/test-service';
import { IDENTIFY_JOIN, JOINED, OTHER_SECRET, startSeeded } from './fixture';

/** The official Node client, as a user would point it at the service: the URL, the path, a private key as password. */
let svc: TestService;
let reader: CreatedWorkspace;
let other: CreatedWorkspace;
let client: ClickHouseClient;

beforeAll(async () => {
  ({ svc, reader, other } = await startSeeded());
  client = createClient({ url: svc.url, pathname: '/clickhouse', username: 'default', password: reader.privateApiKey, compression: { response: true, request: true }, log: { level: ClickHouseLogLevel.OFF } });
});
afterAll(async () => {
  await client.close();
  await svc.stop();
});

describe('@clickhouse/client against /clickhouse', () => {
  test('ping', async () => {
    expect(await client.ping()).toEqual({ success: true });
  });

  test("query in JSONEachRow: the workspace's events", async () => {
    const result = await client.query({ query: "SELECT event, JSONExtractString(properties, 'plan') AS plan FROM events WHERE type = 'track' ORDER BY event", format: 'JSONEachRow' });
    expect(await result.json()).toEqual([
      { event: 'Signed Up', plan: 'free' },
      { event: 'Upgraded', plan: 'pro' },
    ]);
    expect(result.query_id).toMatch(/./);
  });

  test('the identify join of the seed', async () => {
    const result = await client.query({ query: IDENTIFY_JOIN, format: 'JSONEachRow' });
    expect(await result.json()).toEqual(JOINED);
  });

  test('a JSONEachRow stream, row by row', async () => {
    const result = await client.query({ query: 'SELECT number AS n FROM numbers(20000)', format: 'JSONEachRow' });
    let count = 0;
    let sum = 0;
    for await (const rows of result.stream<{ n: string }>()) {
      for (const row of rows) {
        count++;
        sum += Number(row.json().n);
      }
    }
    expect({ count, sum }).toEqual({ count: 20000, sum: (19999 * 20000) / 2 });
  });

  test('query parameters, bound by the engine', async () => {
    const result = await client.query({
      query: 'SELECT count() AS n, {label:String} AS label FROM events WHERE event = {event:String} AND userId IN {users:Array(String)}',
      query_params: { event: 'Upgraded', users: ['ada', 'bob'], label: "it's\ta \\ test" },
      format: 'JSONEachRow',
    });
    // 64-bit integers come quoted, as ClickHouse's JSON formats write them.
    expect(await result.json()).toEqual([{ n: '1', label: "it's\ta \\ test" }]);
  });

  test('JSON, with its meta and row count', async () => {
    const result = await client.query({ query: "SELECT event, timestamp FROM events WHERE type = 'track' ORDER BY event", format: 'JSON' });
    const answer = await result.json<{ event: string }>();
    expect(answer.meta?.map((column) => column.name)).toEqual(['event', 'timestamp']);
    expect(answer.data.map((row) => row.event)).toEqual(['Signed Up', 'Upgraded']);
    expect(answer.rows).toBe(2);
  });

  test('the formats clients use, as the engine writes them', async () => {
    const text = async (format: 'CSVWithNames' | 'TabSeparatedWithNamesAndTypes' | 'JSONCompactEachRow' | 'JSONStrings') =>
      (await client.query({ query: "SELECT event, count() AS n FROM events WHERE type = 'track' GROUP BY event ORDER BY event", format })).text();
    expect(await text('CSVWithNames')).toBe('"event","n"\n"Signed Up",1\n"Upgraded",1\n');
    expect(await text('TabSeparatedWithNamesAndTypes')).toBe('event\tn\nString\tUInt64\nSigned Up\t1\nUpgraded\t1\n');
    expect(await text('JSONCompactEachRow')).toBe('["Signed Up", "1"]\n["Upgraded", "1"]\n');
    expect(JSON.parse(await text('JSONStrings')).data).toEqual([
      { event: 'Signed Up', n: '1' },
      { event: 'Upgraded', n: '1' },
    ]);
  });

  test('what a BI tool asks on connecting: version, databases, tables, columns', async () => {
    const rows = async (query: string) => (await client.query({ query, format: 'JSONEachRow' })).json<Record<string, unknown>>();
    expect(await rows('SELECT version() AS v')).toEqual([{ v: expect.stringMatching(/^\d+\.\d+/) }]);
    expect(await rows('SHOW DATABASES')).toEqual([{ name: reader.databaseName }]);
    expect(await rows('SHOW TABLES')).toContainEqual({ name: 'events' });
    const described = await rows('DESCRIBE TABLE events');
    expect(described).toContainEqual(expect.objectContaining({ name: 'userId', type: 'String' }));
    expect(await rows('SELECT name FROM system.databases')).toEqual([{ name: reader.databaseName }]);
    expect(await rows("SELECT database, name, engine FROM system.tables WHERE name = 'events'")).toEqual([
      { database: reader.databaseName, name: 'events', engine: expect.any(String) },
    ]);
    const columns = await rows(`SELECT name, type FROM system.columns WHERE database = '${reader.databaseName}' AND table = 'events' ORDER BY position`);
    expect(columns).toEqual(described.map(({ name, type }) => ({ name, type })));
    expect(await rows("SELECT table_name FROM information_schema.tables WHERE table_name = 'events'")).toEqual([{ table_name: 'events' }]);
    expect(await rows('SELECT name, value FROM system.settings WHERE name = \'readonly\'')).toEqual([{ name: 'readonly', value: '1' }]);
    expect(await rows('EXISTS TABLE events')).toEqual([{ result: 1 }]);
    expect(await rows('EXISTS TABLE no_such_table')).toEqual([{ result: 0 }]);
    expect(await rows("SHOW TABLES LIKE 'event_'")).toEqual([{ name: 'events' }]);
    expect(await rows(`SHOW CREATE TABLE ${reader.databaseName}.events`)).toEqual([{ statement: expect.stringContaining('CREATE TABLE') }]);
    expect(await rows('SELECT timezone() AS tz, currentDatabase() AS db')).toEqual([{ tz: expect.any(String), db: reader.databaseName }]);
    const unknown = await client.query({ query: 'DESCRIBE TABLE no_such_table', format: 'JSONEachRow' }).catch((err: Error) => err);
    expect(unknown).toMatchObject({ code: '60', type: 'UNKNOWN_TABLE' });
  });

  test("another workspace's data: ACCESS_DENIED, and nothing of it in the error", async () => {
    const refused = await client.query({ query: `SELECT * FROM ${other.databaseName}.events`, format: 'JSONEachRow' }).catch((err: Error & { code?: string; type?: string }) => err);
    expect(refused).toBeInstanceOf(Error);
    expect(refused).toMatchObject({ code: '497', type: 'ACCESS_DENIED' });
    expect((refused as Error).message).not.toContain(OTHER_SECRET);
  });
});
