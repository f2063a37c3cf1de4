import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { existsSync } from 'node:fs';
import { testInProcess } from '../helpers/deno-service';
import { uniqueName } from '../helpers/engine-dir';
import { runQueries, rowsOf } from '../helpers/queries';
import { createWorkspace, sendEvents, startTestService, type CreatedWorkspace, type TestService } from '../helpers/test-service';

/**
 * Statements a private key might try, with the status each must get. `{OTHER}` is the other
 * workspace's database, `{OWN}` the caller's, `{META}` the metadata database, `{DEFAULT}` the
 * default workspace's. Every statement runs from both workspaces; no answer, success or error,
 * may carry a value of a workspace other than the caller's.
 */
const OUTFILE = `/tmp/analytics-sandbox-${process.pid}.out`;
const TABLE: Array<[string, string, number]> = [
  // Writes and DDL
  ['INSERT', "INSERT INTO events (type) VALUES ('track')", 403],
  ['INSERT into another workspace', 'INSERT INTO {OTHER}.events SELECT * FROM events', 403],
  ['DROP TABLE', 'DROP TABLE events', 403],
  ['DROP DATABASE', 'DROP DATABASE {OTHER}', 403],
  ['TRUNCATE', 'TRUNCATE TABLE events', 403],
  ['ALTER DELETE', 'ALTER TABLE events DELETE WHERE 1', 403],
  ['ALTER UPDATE', "ALTER TABLE events UPDATE userId = 'x' WHERE 1", 403],
  ['ALTER ADD COLUMN', 'ALTER TABLE events ADD COLUMN x UInt8', 403],
  ['lightweight DELETE', 'DELETE FROM events WHERE 1', 403],
  ['CREATE TABLE', 'CREATE TABLE t (a UInt8) ENGINE = Memory', 403],
  ['CREATE VIEW over another workspace', 'CREATE VIEW v AS SELECT * FROM {OTHER}.events', 403],
  ['CREATE DATABASE', 'CREATE DATABASE evil', 403],
  ['RENAME', 'RENAME TABLE events TO old_events', 403],
  ['DETACH', 'DETACH TABLE events', 403],
  ['OPTIMIZE', 'OPTIMIZE TABLE events FINAL', 403],
  ['GRANT', 'GRANT ALL ON *.* TO default', 403],
  // Several statements in one string
  ['SELECT then DROP', 'SELECT 1; DROP TABLE events', 403],
  ['SELECT then a read of another workspace', 'SELECT count() FROM events; SELECT * FROM {OTHER}.events', 403],
  ['two statements after a comment', '/* x */ SELECT 1;; SELECT 2', 403],
  // SET, SYSTEM, KILL, USE and other statements that are not SELECT
  ['SET readonly', 'SET readonly = 0', 403],
  ['SET a limit', 'SET max_result_rows = 0', 403],
  ['SYSTEM', 'SYSTEM FLUSH LOGS', 403],
  ['SYSTEM SHUTDOWN', 'SYSTEM SHUTDOWN', 403],
  ['KILL', 'KILL QUERY WHERE 1', 403],
  ['USE another database', 'USE {OTHER}', 403],
  ['SHOW TABLES of another database', 'SHOW TABLES FROM {OTHER}', 403],
  ['DESCRIBE another table', 'DESCRIBE TABLE {OTHER}.events', 403],
  // A cluster's shard tables (src/storage/migrations/engines.ts): internal even where they exist
  ['the shard table of a cluster', 'SELECT count() FROM events_local', 403],
  ['the shard table, qualified', 'SELECT count() FROM {OWN}.events_local', 403],
  ["another workspace's shard table", 'SELECT count() FROM {OTHER}.events_local', 403],
  ['EXPLAIN', 'EXPLAIN SELECT * FROM {OTHER}.events', 403],
  // Another workspace's database, directly and through every kind of nesting
  ['direct', 'SELECT * FROM {OTHER}.events', 403],
  ['back-quoted', 'SELECT * FROM `{OTHER}`.`events`', 403],
  ['lower case and spaces', 'select * from {OTHER} . events', 403],
  ['subquery in FROM', 'SELECT count() FROM (SELECT * FROM {OTHER}.events)', 403],
  ['IN (SELECT ...)', 'SELECT * FROM events WHERE userId IN (SELECT userId FROM {OTHER}.events)', 403],
  ['IN a table', 'SELECT * FROM events WHERE userId IN {OTHER}.events', 403],
  ['JOIN', 'SELECT e.userId FROM events AS e JOIN {OTHER}.events AS b ON e.userId = b.userId', 403],
  ['comma join', 'SELECT * FROM events AS e, {OTHER}.events AS f', 403],
  ['UNION', 'SELECT userId FROM events UNION ALL SELECT userId FROM {OTHER}.events', 403],
  ['CTE', 'WITH b AS (SELECT * FROM {OTHER}.events) SELECT * FROM b', 403],
  ['CTE shadowing events', 'WITH events AS (SELECT * FROM {OTHER}.events) SELECT * FROM events', 403],
  ['EXISTS', 'SELECT count() FROM events WHERE EXISTS (SELECT 1 FROM {OTHER}.events)', 403],
  ['scalar subquery', 'SELECT (SELECT any(userId) FROM {OTHER}.events) AS leaked', 403],
  ['scalar subquery in a failing CAST (the value would be in the error)', 'SELECT CAST((SELECT any(userId) FROM {OTHER}.events) AS UInt64)', 403],
  ['column qualified with another database', 'SELECT {OTHER}.events.userId FROM events', 403],
  ['column qualified with another database, two parts', 'SELECT {OTHER}.event FROM events', 403],
  ['column qualified with a database that does not exist', 'SELECT no_such_database.event FROM events', 403],
  ['table of a database that does not exist', 'SELECT * FROM no_such_database.events', 403],
  ['the default workspace', 'SELECT * FROM {DEFAULT}.events', 403],
  ['the metadata database: workspaces', 'SELECT * FROM {META}.workspaces', 403],
  ['the metadata database: key hashes', 'SELECT * FROM {META}.api_keys', 403],
  ['the default database', 'SELECT * FROM default.events', 403],
  // system and information schema
  ['system.tables', 'SELECT * FROM system.tables', 403],
  ['system.databases', 'SELECT name FROM system.databases', 403],
  ['system.query_log', 'SELECT query FROM system.query_log', 403],
  ['system.users', 'SELECT name FROM system.users', 403],
  ['system.one explicitly', 'SELECT * FROM system.one', 403],
  ['SYSTEM in capitals', 'SELECT * FROM SYSTEM.tables', 403],
  ['INFORMATION_SCHEMA', 'SELECT * FROM INFORMATION_SCHEMA.TABLES', 403],
  ['information_schema', 'SELECT * FROM information_schema.columns', 403],
  // Table functions that reach files, URLs, servers or other databases
  ['file', "SELECT * FROM file('/etc/passwd', 'LineAsString')", 403],
  ['url', "SELECT * FROM url('http://127.0.0.1:1/', 'CSV', 'a String')", 403],
  ['s3', "SELECT * FROM s3('http://127.0.0.1:1/b/k.csv', 'CSV', 'a String')", 403],
  ['remote', "SELECT * FROM remote('127.0.0.1', '{OTHER}', 'events')", 403],
  ['remoteSecure', "SELECT * FROM remoteSecure('127.0.0.1', '{OTHER}', 'events')", 403],
  ['mysql', "SELECT * FROM mysql('127.0.0.1:3306', 'db', 't', 'u', 'p')", 403],
  ['postgresql', "SELECT * FROM postgresql('127.0.0.1:5432', 'db', 't', 'u', 'p')", 403],
  ['cluster', "SELECT * FROM cluster('default', '{OTHER}', 'events')", 403],
  ['merge', "SELECT * FROM merge('{OTHER}', 'events')", 403],
  ['merge with a regexp', "SELECT * FROM merge(REGEXP('.*'), '^events$')", 403],
  ['dictionary', "SELECT * FROM dictionary('d')", 403],
  ['executable', "SELECT * FROM executable('cat /etc/passwd', 'TSV', 'a String')", 403],
  ['input', "SELECT * FROM input('a String')", 403],
  ['view', 'SELECT * FROM view(SELECT * FROM {OTHER}.events)', 403],
  ['zeros (the engine refuses it in readonly mode; numbers does the same)', 'SELECT count() FROM zeros(10)', 403],
  ['sqlite', "SELECT * FROM sqlite('/tmp/x.db', 't')", 403],
  ['table function in a subquery', "SELECT count() FROM (SELECT * FROM url('http://127.0.0.1:1/', 'CSV', 'a String'))", 403],
  // Functions that read outside the workspace
  ['file() as a function', "SELECT file('/etc/hostname')", 403],
  ['dictGet', "SELECT dictGet('{OTHER}.d', 'x', toUInt64(1))", 403],
  ['joinGet', "SELECT joinGet('{OTHER}.j', 'v', 1)", 403],
  ['hasColumnInTable', "SELECT hasColumnInTable('{OTHER}', 'events', 'userId')", 403],
  // Functions that tell about the server
  ['getServerSetting', "SELECT getServerSetting('path')", 403],
  ['getMergeTreeSetting', "SELECT getMergeTreeSetting('index_granularity')", 403],
  ['hostName', 'SELECT hostName()', 403],
  ['hostname in lower case', 'SELECT hostname()', 403],
  ['FQDN', 'SELECT FQDN()', 403],
  ['filesystemCapacity', 'SELECT filesystemCapacity()', 403],
  ['filesystemAvailable', 'SELECT filesystemAvailable()', 403],
  ['buildId', 'SELECT buildId()', 403],
  ['uptime', 'SELECT uptime()', 403],
  ['serverUUID', 'SELECT serverUUID()', 403],
  ['currentUser', 'SELECT currentUser()', 403],
  ['getMacro', "SELECT getMacro('replica')", 403],
  ['in a subquery', 'SELECT count() FROM (SELECT hostName() AS h)', 403],
  // Output to files, formats, settings
  ['INTO OUTFILE', `SELECT * FROM events INTO OUTFILE '${OUTFILE}'`, 403],
  ['INTO OUTFILE with FORMAT', `SELECT 1 INTO OUTFILE '${OUTFILE}' FORMAT CSV`, 403],
  ['SETTINGS readonly = 0', 'SELECT 1 SETTINGS readonly = 0', 403],
  ['raised result rows', 'SELECT * FROM events SETTINGS max_result_rows = 1000000000', 403],
  ['no time limit', 'SELECT * FROM events SETTINGS max_execution_time = 0', 403],
  ['SETTINGS in a subquery', 'SELECT count() FROM (SELECT * FROM events SETTINGS max_memory_usage = 0)', 403],
  // Case and comment tricks
  ['mixed case', 'sElEcT * FrOm {OTHER}.EvEnTs', 403],
  ['comment before the other database', 'SELECT * FROM /* events */ {OTHER}.events', 403],
  ['a line comment that ends before the UNION', 'SELECT userId FROM events -- only mine\nUNION ALL SELECT userId FROM {OTHER}.events', 403],
  ['a comment hiding nothing before DROP', '/* SELECT */ DROP TABLE events', 403],
  // Allowed although the text holds forbidden words
  ['DROP in a string literal', "SELECT 'DROP TABLE events; SELECT * FROM {OTHER}.events' AS s", 200],
  ['system in a string literal', "SELECT count() AS n FROM events WHERE event = 'system.tables'", 200],
  ['forbidden words in a line comment', 'SELECT count() AS n FROM events -- DROP TABLE events; SELECT * FROM system.databases', 200],
  ['INTO OUTFILE in a block comment', "SELECT /* INTO OUTFILE '/tmp/x' */ count() AS n FROM events", 200],
  ['an alias with dots in back-quotes', 'SELECT count() AS `system.tables` FROM events', 200],
  ['file() in a string', "SELECT 'file(/etc/passwd)' AS f", 200],
  ['a semicolon in a string', "SELECT count() AS n FROM events WHERE userId = 'x; DROP TABLE events'", 200],
  ['SET and SETTINGS in strings', "SELECT 'SET readonly = 0' AS s, 'SETTINGS max_threads = 1' AS t", 200],
  ['INSERT in a CTE literal', "WITH 'INSERT INTO events' AS s SELECT s", 200],
  ['the own database, qualified', 'SELECT count() AS n FROM {OWN}.events', 200],
  ['a table alias on a column', "SELECT count() AS n FROM events AS e WHERE e.type = 'track'", 200],
  ['numbers()', 'SELECT sum(number) AS s FROM numbers(10)', 200],
  ['generate_series()', 'SELECT sum(generate_series) AS s FROM generate_series(1, 3)', 200],
  ['values()', "SELECT sum(a) AS s FROM values('a UInt8', 1, 2)", 200],
  ['generateRandom()', "SELECT a FROM generateRandom('a UInt8', 1) LIMIT 3", 200],
  ['a JSON key named system', "SELECT JSONExtractString(properties, 'system') AS s FROM events", 200],
  ['a scalar subquery on the own events', 'SELECT (SELECT count() FROM events) AS n', 200],
  ['version(): the engine version is no secret', 'SELECT version() AS v', 200],
  ['currentDatabase(): the own database', 'SELECT currentDatabase() AS d', 200],
  ['a CTE name on a column', 'WITH t AS (SELECT userId FROM events) SELECT t.userId FROM t', 200],
  ['a subquery alias on a column', 'SELECT s.n FROM (SELECT count() AS n FROM events) AS s', 200],
  ['a lambda over tuples', 'SELECT arrayMap(x -> x.1, [(1, 2)]) AS a', 200],
  ['an ARRAY JOIN alias', 'SELECT a FROM events ARRAY JOIN [1, 2] AS a', 200],
];

let svc: TestService;
const rooms = {} as Record<'A' | 'B', CreatedWorkspace>;
const SECRET = { A: 'SECRET_OF_A', B: 'SECRET_OF_B', DEFAULT: 'SECRET_OF_DEFAULT' };

beforeAll(async () => {
  svc = await startTestService();
  await sendEvents(svc, [{ type: 'track', event: SECRET.DEFAULT, userId: SECRET.DEFAULT }]);
  for (const label of ['A', 'B'] as const) {
    rooms[label] = await createWorkspace(svc, { name: uniqueName(`Sandbox${label}`) });
    await sendEvents(
      svc,
      [
        { type: 'track', event: SECRET[label], userId: SECRET[label], properties: { system: SECRET[label] } },
        { type: 'identify', userId: SECRET[label], traits: { email: `${SECRET[label]}@example.com` } },
      ],
      rooms[label].publicApiKey,
    );
  }
});
afterAll(() => svc.stop());

describe('the SQL sandbox', () => {
  for (const [reader, other] of [['A', 'B'], ['B', 'A']] as const) {
    for (const [what, template, status] of TABLE) {
      test(`${reader}: ${what} → ${status}`, async () => {
        const sql = template
          .replaceAll('{OTHER}', rooms[other].databaseName)
          .replaceAll('{OWN}', rooms[reader].databaseName)
          .replaceAll('{META}', svc.config.metaDatabase)
          .replaceAll('{DEFAULT}', svc.config.defaultWorkspaceDatabase);
        const res = await runQueries(svc, [sql], rooms[reader].privateApiKey);
        expect({ status: res.status, detail: res.body.detail }).toMatchObject({ status });
        expect(res.text).not.toContain(SECRET[other]);
        expect(res.text).not.toContain(SECRET.DEFAULT);
        if (status === 403) {
          expect(res.body.title).toBe('Forbidden');
          expect(res.body.errors).toEqual([{ pointer: '/queries/0', detail: expect.any(String) }]);
        }
      });
    }
  }

  testInProcess('nothing was changed or written by the table', async () => {
    for (const label of ['A', 'B'] as const) {
      const rows = await rowsOf(svc, 'SELECT count() AS n, groupUniqArray(userId) AS users FROM events', rooms[label].privateApiKey);
      expect(rows).toEqual([{ n: 2, users: [SECRET[label]] }]);
    }
    expect(existsSync(OUTFILE)).toBe(false);
    const databases = await svc.storage.query("SELECT name FROM system.databases WHERE name = 'evil'");
    expect(databases).toEqual([]);
  });

  test("an alias named like another workspace's database reads this workspace's table, and refusals do not tell which databases exist", async () => {
    const alias = uniqueName('namesake');
    const namesake = await createWorkspace(svc, { name: uniqueName('Namesake'), databaseName: alias });
    await sendEvents(svc, [{ type: 'track', event: 'NAMESAKE_SECRET' }], namesake.publicApiKey);
    const aliased = await runQueries(svc, [`SELECT count() AS n, groupArray(${alias}.event) AS events FROM events AS ${alias} WHERE ${alias}.type = 'track'`], rooms.A.privateApiKey);
    expect(aliased.status).toBe(200);
    expect(aliased.text).not.toContain('NAMESAKE_SECRET');
    // The same refusal, word for word, for a database that exists and one that does not.
    const existing = await runQueries(svc, [`SELECT ${alias}.event FROM events`], rooms.A.privateApiKey);
    const missing = await runQueries(svc, [`SELECT ${alias}_none.event FROM events`], rooms.A.privateApiKey);
    expect([existing.status, missing.status]).toEqual([403, 403]);
    expect(missing.body.detail.replace(`${alias}_none`, alias)).toBe(existing.body.detail);
  });

  test('a public key cannot run SQL: 403', async () => {
    const res = await runQueries(svc, ['SELECT 1'], rooms.A.publicApiKey);
    expect(res.status).toBe(403);
  });
});
