import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { listingStatements } from '../../src/events/list-events';
import type { ListEventsQuery } from '../../src/events/model';
import { filterConditions } from '../../src/filters/compile';
import { readColumnName } from '../../src/properties/json-read';
import { SqlParams } from '../../src/sql-params';
import { runQueries, rowsOf } from '../helpers/queries';
import { describeInProcess } from '../helpers/deno-service';
import { fastReadsOf, readColumnsOf, waitForStoredReads } from '../helpers/stored-reads';
import { eventually } from '../helpers/eventually';
import { listEvents, sendEvents, startTestService, type TestService } from '../helpers/test-service';

/** Bodies as clients send them: key order and number spellings that JavaScript would not keep. */
const BODIES = [
  '{"type":"track","event":"buy","userId":"u1","messageId":"m1","properties":{"zeta":1,"plan":"pro","amount":19.990,"id":18446744073709551615,"big":1e309,"tiny":1.0E-7}}',
  '{"type":"track","event":"buy","userId":"u2","messageId":"m2","properties":{"plan":"free","amount":5,"tags":["a","b"],"nested":{"plan":"x"}},"context":{"page":{"path":"/p"}}}',
  '{"type":"track","event":"buy","userId":"u3","messageId":"m3","properties":{"plan":null,"amount":"7.5"}}',
  '{"type":"page","event":"/home","anonymousId":"a1","messageId":"m4"}',
];
const PLAN = "JSONExtract(properties, 'plan', 'String')";
const AMOUNT = "JSONExtract(properties, 'amount', 'Float64')";
const BREAKDOWN = `SELECT ${PLAN}, sum(${AMOUNT}), count() FROM events GROUP BY 1 ORDER BY 1`;

let svc: TestService;
let database: string;
let before: { text: string; listing: string; export: string };
let stored: ReturnType<typeof fastReadsOf>;

const ask = async (sql: string) => {
  const answer = await runQueries(svc, [sql]);
  expect(answer.status).toBe(200);
  return answer.text;
};
const listing = async () => (await svc.request('GET', '/events?limit=10&orderByField=timestamp&orderByDirection=ASC', { key: svc.privateKey })).text();
const exported = async () => (await svc.request('GET', '/events/export?format=ndjson', { key: svc.privateKey })).text();

// They read the service's storage (its stored columns and mutations): in its own process only.
describeInProcess('fast property reads', () => {
  beforeAll(async () => {
    svc = await startTestService();
    database = svc.config.defaultWorkspaceDatabase;
    for (const [i, body] of BODIES.entries()) {
      const res = await svc.request('POST', '/events', { key: svc.publicKey, body: `{"events":[${body.replace('"type"', `"timestamp":"2024-01-0${i + 1}T00:00:00Z","type"`)}]}` });
      expect(res.status).toBe(201);
    }
    before = { text: await ask(BREAKDOWN), listing: await listing(), export: await exported() };
    // The second statement making these reads has them stored.
    await ask(BREAKDOWN);
    await waitForStoredReads(svc, database, [PLAN, AMOUNT]);
    stored = fastReadsOf(svc);
  });
  afterAll(async () => {
    await stored.close();
    await svc.stop();
  });

  describe('a property read made by two statements', () => {
    test('gets a column in the events table and in events_with_persons, which SELECT * leaves out', async () => {
      const names = [PLAN, AMOUNT].map(readColumnName).sort();
      expect(await readColumnsOf(svc, database)).toEqual(names);
      expect(await readColumnsOf(svc, database, 'events_with_persons')).toEqual(names);
      for (const table of ['events', 'events_with_persons']) {
        const [row] = await rowsOf(svc, `SELECT * FROM ${table} LIMIT 1`);
        expect(Object.keys(row).filter((k) => k.startsWith('property_read_'))).toEqual([]);
      }
    });

    test('is read from its column, and the answer is the same, names of result columns included', async () => {
      const sql = `SELECT ${PLAN}, sum(${AMOUNT}), count() FROM events GROUP BY ${PLAN} ORDER BY ${PLAN}`;
      const statement = await stored.fastReads.prepare(stored.sandbox, database, sql);
      expect(statement).toContain(`(${readColumnName(PLAN)} AS \`${PLAN}\`)`);
      expect(statement.replace(/`[^`]*`/g, '')).not.toContain('JSONExtract(');
      expect(await ask(BREAKDOWN)).toBe(before.text);
    });

    test('is read from its column where the analyzer reads a part of it (`!= \'\'` is its `.size` subcolumn)', async () => {
      // Alone in `!= ''`, the column is read as its subcolumn of lengths: the rewrite still holds
      // (the Stats API's condition on a visitor's browser reads so).
      const sql = `SELECT count() AS n FROM events WHERE ${PLAN} != ''`;
      const statement = await stored.fastReads.prepare(stored.sandbox, database, sql);
      expect(statement).toContain(`(${readColumnName(PLAN)} AS \`${PLAN}\`)`);
      expect(await stored.sandbox.inspect(database, statement)).toBe(await stored.sandbox.inspect(database, sql));
    });

    test('is read from its column through events_with_persons and a table alias', async () => {
      const sql = `SELECT e.personId, ${PLAN.replace('properties', 'e.properties')} AS plan FROM events_with_persons AS e ORDER BY e.personId`;
      expect(await stored.fastReads.prepare(stored.sandbox, database, sql)).toContain(`(e.${readColumnName(PLAN)} AS`);
    });
  });

  describe('reads left as written', () => {
    const unchanged: Array<[string, string]> = [
      ['the JSON column of a subquery', `SELECT ${PLAN} FROM (SELECT context AS properties FROM events)`],
      ['a CTE', `WITH t AS (SELECT properties FROM events) SELECT ${PLAN} FROM t`],
      ['the traits of the persons view', "SELECT JSONExtract(traits, 'plan', 'String') FROM persons"],
      ['one read of the events and one of a subquery, by the same keys', `SELECT ${PLAN}, (SELECT any(${PLAN}) FROM (SELECT '{}' AS properties)) FROM events`],
      ['a read with no column yet', "SELECT JSONExtract(properties, 'zeta', 'Int64') FROM events"],
    ];
    for (const [what, sql] of unchanged) {
      test(what, async () => {
        expect(await stored.fastReads.prepare(stored.sandbox, database, sql)).toBe(sql);
      });
    }

    test('a rewrite that would change a result column is not made', async () => {
      // The same name given to reads of two different tables: one alias cannot stand for both.
      const sql = `SELECT ${PLAN.replace('properties', 'a.properties')}, ${PLAN.replace('properties', 'b.properties')} FROM events AS a JOIN events AS b ON a.uuid = b.uuid`;
      expect(await stored.fastReads.prepare(stored.sandbox, database, sql)).toBe(sql);
    });
  });

  test('filters compiled by the service read the columns, once their reads are stored', async () => {
    const params = new SqlParams();
    const where = filterConditions([{ property: 'plan', operator: 'eq', value: 'pro' }], 'events', { params, cohort: () => '' }, '');
    const sql = `SELECT count() AS n FROM events_with_persons WHERE ${where}`;
    const statement = () => stored.fastReads.prepare(stored.sandbox, database, sql, params.values);
    const calls = (statement: string) => statement.replace(/`[^`]*`/g, '').match(/JSON\w+\(/g) ?? [];
    // JSONExtract(properties, 'plan', 'String') has its column already; the other two reads not yet.
    expect(calls(await statement())).toEqual(['JSONType(', 'JSONHas(']);
    const reads = ["JSONType(properties, 'plan')", "JSONHas(properties, 'plan')"];
    await ask(`SELECT ${reads.join(', ')} FROM events`);
    await ask(`SELECT ${reads.join(', ')} FROM events`);
    await waitForStoredReads(svc, database, reads);
    const rewritten = await statement();
    expect(calls(rewritten)).toEqual([]);
    // The same count as reading the text: 0 here, since the first event's properties hold 1e309,
    // which the engine's JSON reader refuses, and with it every key of that object.
    const count = (text: string) => stored.sandbox.inspect(database, text, params.values);
    expect(await count(rewritten)).toBe(await count(sql));
    expect(JSON.parse(await count(rewritten))).toEqual({ n: 0 });
  });

  test('GET /events property filters read the columns once two listings have made their reads, and answer the same', async () => {
    const query = { 'properties.plan': 'free', limit: '10' };
    const list = async () => (await svc.request('GET', `/events?${new URLSearchParams(query)}`, { key: svc.privateKey })).text();
    const first = await list();
    expect(JSON.parse(first).total).toBe(1);
    await list();
    await waitForStoredReads(svc, database, ["JSONExtractString(properties, 'plan')", "JSONExtractRaw(properties, 'plan')"]);
    const { rows, count } = listingStatements(database, query as unknown as ListEventsQuery);
    for (const statement of [rows, count]) expect(await stored.fastReads.prepareOwn(database, statement.sql, statement.params, false)).toContain('property_read_');
    expect(await list()).toBe(first);
  });

  /** The text of `body`'s properties object as sent (the bodies above hold no braces in strings). */
  function sentProperties(body: string): string {
    const start = body.indexOf('"properties":');
    let depth = 0;
    for (let i = body.indexOf('{', start); ; i++) {
      if (body[i] === '{') depth++;
      if (body[i] === '}' && --depth === 0) return body.slice(start, i + 1);
    }
  }

  test('GET /events and exports answer properties as they were sent, and as before the columns', async () => {
    expect(await listing()).toBe(before.listing);
    expect(await exported()).toBe(before.export);
    for (const body of BODIES.filter((b) => b.includes('"properties"'))) {
      expect(before.listing).toContain(sentProperties(body));
      expect(before.export).toContain(sentProperties(body));
    }
  });

  test('a column whose filling never started (the service stopped between its ADD and its MATERIALIZE) is filled at the next start; a filled one is not filled again', async () => {
    const first = await startTestService();
    let after: TestService | undefined;
    try {
      const db = first.config.defaultWorkspaceDatabase;
      await sendEvents(first, [{ type: 'track', event: 'x', userId: 'u', properties: { tier: 'gold' } }]);
      await eventually('the event stored', async () => (await listEvents(first)).body.results?.length === 1);
      // What such a stop leaves: the column, and its parts stored before it without it.
      const tier = "JSONExtractString(properties, 'tier')";
      await first.storage.command(`ALTER TABLE ${db}.events ADD COLUMN ${readColumnName(tier)} String MATERIALIZED ${tier}`);
      const partsWith = async (svc: TestService, column: string) =>
        Number((await svc.storage.query('SELECT count() AS n FROM system.parts_columns WHERE database = {db:String} AND table = {table:String} AND active AND column = {column:String}', { db, table: 'events', column }))[0]!.n);
      // The fillings of this column (a migration fills the visit-event column of new tables too).
      const fillings = async (svc: TestService) =>
        Number((await svc.storage.query("SELECT count() AS n FROM system.mutations WHERE database = {db:String} AND startsWith(command, '(MATERIALIZE COLUMN') AND position(command, {column:String}) > 0", { db, column: readColumnName(tier) }))[0]!.n);
      expect(await partsWith(first, readColumnName(tier))).toBe(0);
      expect(await fillings(first)).toBe(0);
      await first.stop();
      after = await startTestService(first.settings);
      await eventually('the column filled', async () => (await partsWith(after!, readColumnName(tier))) > 0 && (await fillings(after!)) === 1);
      await eventually('the filling done', async () => Number((await after!.storage.query('SELECT count() AS n FROM system.mutations WHERE database = {db:String} AND NOT is_done', { db }))[0]!.n) === 0);
      // Filled: another start leaves it alone (a MATERIALIZE rewrites the column in every part).
      await after.stop();
      after = await startTestService(first.settings);
      await Bun.sleep(500);
      expect(await fillings(after)).toBe(1);
    } finally {
      await after?.stop();
    }
  });

  test('PROPERTY_COLUMNS_MAX bounds the columns of a workspace', async () => {
    const bounded = await startTestService({ PROPERTY_COLUMNS_MAX: '1' });
    try {
      const db = bounded.config.defaultWorkspaceDatabase;
      await bounded.request('POST', '/events', { key: bounded.publicKey, body: { events: [{ type: 'track', event: 'x', properties: { a: 1, b: 2 } }] } });
      const sql = "SELECT JSONExtract(properties, 'a', 'Int64'), JSONExtract(properties, 'b', 'Int64') FROM events";
      for (let i = 0; i < 3; i++) expect((await runQueries(bounded, [sql])).status).toBe(200);
      await waitForStoredReads(bounded, db, []);
      await Bun.sleep(500);
      expect(await readColumnsOf(bounded, db)).toHaveLength(1);
    } finally {
      await bounded.stop();
    }
  });
});
