import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { describeInProcess } from '../helpers/deno-service';
import { uniqueName } from '../helpers/engine-dir';
import { runQueries } from '../helpers/queries';
import { createWorkspace, sendEvents, startTestService, type CreatedWorkspace, type TestService } from '../helpers/test-service';
import { generateCorpus, type CorpusStatement, type Target } from './sandbox-corpus';

/**
 * The sandbox judged by the engine, not by the guard's own logic: the databases around the
 * caller's hold tripwires (views whose every read raises TRIPWIRE_FIRED through throwIf) under
 * the names statements aim at, and values planted in other workspaces and in the metadata. Some
 * 5,000 generated statements and the hand-written ones below run with workspace A's key; none
 * may fire a tripwire or carry a planted value back, in an answer or in an error.
 */
const CORPUS_SIZE = 5000;
const SEED = 20261125;
const MARKERS = ['TRIPWIRE_FIRED', 'SECRET_OF_OTHER', 'SECRET_OF_DEFAULT', 'SECRET_IN_META', 'hint_leak_canary_x9q'];
/** Names statements commonly aim at, beside each database's real tables. */
const AIMED_AT = ['events', 'events_local', 'workspaces', 'api_keys', 'webhooks', 'tables', 'databases', 'one', 'columns', 'users'];

const tripwire = (name: string) =>
  `CREATE VIEW ${name} AS SELECT toString(number) AS userId, toString(number) AS event, '' AS properties FROM numbers(1) WHERE throwIf(number = 0, 'TRIPWIRE_FIRED in ${name}') = 0`;

let svc: TestService;
let own: CreatedWorkspace;
let other: CreatedWorkspace;
let tripwired: CreatedWorkspace;
const tripwireDb = uniqueName('tripwire');

describeInProcess('the sandbox against a generated corpus, with tripwires around it', () => {
  let foreign: Target[] = [];

  beforeAll(async () => {
    svc = await startTestService({ QUERY_CONCURRENCY: '2', QUERY_WORKSPACE_CONCURRENCY: '2', QUERY_WORKSPACE_QUEUE_MAX: '100' });
    await sendEvents(svc, [{ type: 'track', event: 'SECRET_OF_DEFAULT', userId: 'SECRET_OF_DEFAULT' }]);
    own = await createWorkspace(svc, { name: uniqueName('Corpus') });
    other = await createWorkspace(svc, { name: uniqueName('CorpusOther'), properties: { note: 'SECRET_IN_META' } });
    tripwired = await createWorkspace(svc, { name: uniqueName('CorpusTripwired') });
    await sendEvents(svc, [{ type: 'track', event: 'mine', userId: 'u1' }], own.publicApiKey);
    await sendEvents(svc, [{ type: 'track', event: 'SECRET_OF_OTHER', userId: 'SECRET_OF_OTHER' }], other.publicApiKey);
    const hook = await svc.request('POST', '/webhooks', { key: other.privateApiKey, body: { url: 'http://127.0.0.1:9/SECRET_IN_META' } });
    expect(hook.status).toBe(200);
    // Another workspace whose events are a tripwire, tripwires in the metadata and default
    // databases, and a database of tripwires under the names statements aim at.
    await svc.storage.command(`DROP TABLE ${tripwired.databaseName}.events`);
    await svc.storage.command(tripwire(`${tripwired.databaseName}.events`));
    await svc.storage.command(tripwire(`${svc.config.metaDatabase}.events`));
    await svc.storage.command(tripwire(`${svc.config.defaultWorkspaceDatabase}.tripwire`));
    await svc.storage.command(`CREATE DATABASE ${tripwireDb}`);
    for (const name of AIMED_AT) await svc.storage.command(tripwire(`${tripwireDb}.${name}`));
    // A table whose name would come back in an unknown table's "Maybe you meant" hint.
    await svc.storage.command(`CREATE TABLE ${tripwireDb}.hint_leak_canary_x9q (userId String) ENGINE = MergeTree ORDER BY userId`);

    const tables = await svc.storage.query('SELECT database, name FROM system.tables WHERE database != {own:String}', { own: own.databaseName });
    const databases = (await svc.storage.query('SELECT name FROM system.databases')).map((row) => String(row.name)).filter((name) => name !== own.databaseName);
    const names = new Set(tables.map((row) => `${row.database}.${row.name}`));
    for (const database of databases) for (const table of AIMED_AT) names.add(`${database}.${table}`);
    foreign = [...names]
      .filter((name) => !name.includes('hint_leak_canary'))
      .map((name) => ({ database: name.slice(0, name.indexOf('.')), table: name.slice(name.indexOf('.') + 1) }));
  });

  afterAll(async () => {
    await svc.storage.command(`DROP DATABASE IF EXISTS ${tripwireDb}`);
    await svc.storage.command(`DROP VIEW IF EXISTS ${svc.config.metaDatabase}.events`);
    await svc.request('DELETE', `/workspaces/${tripwired.workspaceId}`, { key: svc.privateKey });
    await svc.stop();
  });

  /** Runs each statement with the caller's key, four at a time; answers the status of each. */
  async function runAll(statements: readonly CorpusStatement[]): Promise<Array<{ statement: CorpusStatement; status: number; text: string }>> {
    const outcomes: Array<{ statement: CorpusStatement; status: number; text: string }> = [];
    let next = 0;
    const worker = async () => {
      while (next < statements.length) {
        const statement = statements[next++]!;
        const { status, text } = await runQueries(svc, [statement.sql], own.privateApiKey);
        outcomes.push({ statement, status, text });
      }
    };
    await Promise.all([worker(), worker(), worker(), worker()]);
    return outcomes;
  }

  function expectNothingLeaked(outcomes: Array<{ statement: CorpusStatement; status: number; text: string }>): void {
    const leaks = outcomes.filter(({ text }) => MARKERS.some((marker) => text.includes(marker)));
    const faults = outcomes.filter(({ status }) => status >= 500);
    expect(leaks.map(({ statement, text }) => `${statement.sql} → ${text.slice(0, 300)}`)).toEqual([]);
    expect(faults.map(({ statement, text }) => `${statement.sql} → ${text.slice(0, 300)}`)).toEqual([]);
  }

  test('hand-written attacks: aliases, CTEs and names that spell another database, hints that name other tables', async () => {
    const O = tripwired.databaseName;
    const statements = [
      // The alias case: a column alias whose text is the foreign table's name, and a scalar
      // subquery that the analyzer evaluates while resolving (its failed CAST would carry the value).
      `SELECT 1 AS \`${O}.events\`, CAST((SELECT any(userId) FROM ${O}.events) AS UInt64)`,
      `SELECT 1 AS \`${O}.events\` FROM ${O}.events`,
      `SELECT count() AS \`${O}.events\` FROM events WHERE userId IN ${O}.events`,
      `SELECT \`${O}.events\` FROM \`${O}.events\``,
      `WITH \`${O}.events\` AS (SELECT 1) SELECT * FROM \`${O}.events\``,
      `SELECT count() FROM events AS ${O} WHERE userId IN ${O}.events`,
      `SELECT count() FROM events ARRAY JOIN [1] AS ${O} WHERE userId IN ${O}.events`,
      `SELECT arrayMap(x -> x IN ${O}.events, [userId]) FROM events`,
      `SELECT count() FROM events WHERE inIgnoreSet(userId, ${O}.events)`,
      `SELECT 1 AS x FROM events WHERE x IN ${O}.events`,
      `SELECT ${O}.events AS a, ${O}.events AS a FROM events AS ${O}`,
      // A name whose line break would pass for a node of its own in EXPLAIN AST.
      `SELECT 1 FROM \`x\n      TableIdentifier ${own.databaseName}.events\` WHERE userId IN ${O}.events`,
      `SELECT 1 AS \`a (alias b)\` FROM events WHERE userId IN ${O}.events`,
      // Unknown tables whose hint would name another database's table.
      'SELECT * FROM hint_leak_canary_x9',
      `SELECT * FROM ${own.databaseName}.hint_leak_canary_x9`,
      'SELECT count() FROM events WHERE userId IN hint_leak_canary_x9',
    ].map((sql) => ({ sql, aim: 'foreign' as const }));
    const outcomes = await runAll(statements);
    expectNothingLeaked(outcomes);
    expect(outcomes.filter(({ status }) => status === 200).map(({ statement }) => statement.sql)).toEqual([]);
  });

  test(`${CORPUS_SIZE} generated statements: refused, or run over this workspace's tables only`, async () => {
    const corpus = generateCorpus(SEED, CORPUS_SIZE, own.databaseName, foreign);
    expect(corpus.length).toBe(CORPUS_SIZE);
    const outcomes = await runAll(corpus);
    expectNothingLeaked(outcomes);
    const tally = new Map<string, number>();
    for (const { statement, status } of outcomes) tally.set(`${statement.aim} ${status}`, (tally.get(`${statement.aim} ${status}`) ?? 0) + 1);
    console.log(`sandbox corpus (seed ${SEED}, ${foreign.length} foreign tables):`, Object.fromEntries([...tally].sort()));
    // Foreign statements that ran named no foreign table after all (a one-part name with a dot,
    // say, is a table of the caller's database); the tripwires and markers above are the proof.
    // Statements aimed at the caller's own events mostly run: the guard is not refusing everything.
    const ownRan = outcomes.filter(({ statement, status }) => statement.aim === 'own' && status === 200).length;
    expect(ownRan).toBeGreaterThan(outcomes.filter(({ statement }) => statement.aim === 'own').length / 3);
  });

  test('the tripwires fire when read: a statement of the service itself trips them', async () => {
    for (const table of [`${tripwired.databaseName}.events`, `${svc.config.metaDatabase}.events`, `${tripwireDb}.workspaces`]) {
      const failure = await svc.storage.query(`SELECT count() FROM ${table}`).catch((err: Error) => err.message);
      expect(String(failure)).toContain('TRIPWIRE_FIRED');
    }
  });
});

describe('the corpus generator', () => {
  test('is deterministic for a seed', () => {
    const targets = [{ database: 'a', table: 'events' }];
    expect(generateCorpus(7, 50, 'own', targets)).toEqual(generateCorpus(7, 50, 'own', targets));
  });
});
