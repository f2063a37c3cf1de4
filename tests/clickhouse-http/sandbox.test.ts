import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { CreatedWorkspace, TestService } from '../helpers/test-service';
import { fillStatement, TABLE } from '../queries/sandbox-table';
import { clickhouseFetch, OTHER_SECRET, startSeeded } from './fixture';

/**
 * The interface holds to the sandbox of POST /queries: the same hostile statements are refused
 * (in ClickHouse's form) and the same harmless ones run; then what only this door has: settings,
 * the database parameter, query parameters, credentials.
 */
let svc: TestService;
let reader: CreatedWorkspace;
let other: CreatedWorkspace;

beforeAll(async () => {
  ({ svc, reader, other } = await startSeeded({ QUERY_MAX_RESULT_ROWS: '1000' }));
});
afterAll(() => svc.stop());

/** Runs `sql` as the reader (in the body of a POST), answering status, code header and text. */
async function run(sql: string, search: Record<string, string> = {}, key = reader.privateApiKey): Promise<{ status: number; code: string | null; text: string }> {
  const res = await clickhouseFetch(svc, key, search, { method: 'POST', body: sql });
  return { status: res.status, code: res.headers.get('x-clickhouse-exception-code'), text: await res.text() };
}

/** A refusal as ClickHouse gives one: the code in the header and at the start of the text, nothing of the other workspace. */
function expectRefused(answer: { status: number; code: string | null; text: string }, status: number, codes: readonly string[]): void {
  expect({ status: answer.status, code: answer.code }).toEqual({ status, code: expect.stringMatching(new RegExp(`^(?:${codes.join('|')})$`)) });
  expect(answer.text).toStartWith(`Code: ${answer.code}. DB::Exception: `);
  expect(answer.text).not.toContain(OTHER_SECRET);
}

/**
 * Entries of the list that this door answers where POST /queries refuses them: the system tables
 * BI tools read, answered with the workspace's own rows (src/clickhouse-http/catalog.ts).
 */
const ANSWERED_FROM_THE_CATALOG = new Set(['system.tables', 'system.databases', 'INFORMATION_SCHEMA', 'information_schema']);

describe('the hostile statements of POST /queries, through ClickHouse’s HTTP interface', () => {
  for (const [what, template, status] of TABLE) {
    const runs = status === 200 || ANSWERED_FROM_THE_CATALOG.has(what);
    test(`${what} → ${runs ? 'runs' : 'refused'}`, async () => {
      const sql = fillStatement(template, { other: other.databaseName, own: reader.databaseName, meta: svc.config.metaDatabase, defaultDatabase: svc.config.defaultWorkspaceDatabase });
      const answer = await run(sql);
      if (!runs) return expectRefused(answer, 403, ['497', '164']);
      expect(answer.status).toBe(200);
      expect(answer.text).not.toContain(OTHER_SECRET);
      // The catalog names no other database (the list's own statements may name them in literals).
      if (status === 403) for (const foreign of [other.databaseName, svc.config.metaDatabase, svc.config.defaultWorkspaceDatabase]) expect(answer.text).not.toContain(foreign);
    });
  }
});

describe('what only this door has', () => {
  test('settings that would widen access are refused: READONLY', async () => {
    for (const [name, value] of [['readonly', '0'], ['readonly', '2'], ['allow_ddl', '1'], ['allow_introspection_functions', '1']] as const) {
      expectRefused(await run('SELECT 1', { [name]: value }), 403, ['164']);
    }
    expect((await run('SELECT 1', { readonly: '1', allow_ddl: '0' })).status).toBe(200);
  });

  test('a raised limit keeps the sandbox’s; a lowered one is honoured', async () => {
    expectRefused(await run('SELECT number FROM numbers(5000)', { max_result_rows: '0' }), 400, ['396']);
    expectRefused(await run('SELECT number FROM numbers(5000)', { max_result_rows: '100000000' }), 400, ['396']);
    expectRefused(await run('SELECT number FROM numbers(50)', { max_result_rows: '10' }), 400, ['396']);
    expect((await run('SELECT number FROM numbers(50)', { max_execution_time: '0', max_memory_usage: '0' })).status).toBe(200);
  });

  test('a value a setting cannot take is the statement’s 400 in ClickHouse’s form, not a 500', async () => {
    for (const value of ['abc', '-1', '1e3']) expectRefused(await run('SELECT 1', { max_result_rows: value }), 400, ['27']);
    expectRefused(await run('SELECT 1', { max_execution_time: 'soon' }), 400, ['27']);
    // Values of output settings the engine itself refuses, told by the setting's name.
    for (const [name, value] of [['date_time_output_format', 'nope'], ['output_format_json_quote_64bit_integers', 'maybe'], ['format_csv_delimiter', 'ab']] as const) {
      const answer = await run('SELECT 1', { [name]: value });
      expectRefused(answer, 400, ['36']);
      expect(answer.text).toContain(`'${name}'`);
    }
    expect((await run('SELECT 1 AS one', { max_execution_time: '2.5', date_time_output_format: 'iso' })).text).toBe('1\n');
  });

  test('settings clients send and the interface ignores: the answer is the same', async () => {
    const ignored = await run('SELECT 1 AS one', { wait_end_of_query: '1', session_id: 'abc', session_timeout: '60', send_progress_in_http_headers: '1', join_use_nulls: '1' });
    expect(ignored).toEqual({ status: 200, code: null, text: '1\n' });
  });

  test("the database parameter and header: the workspace's own, or default; any other is refused", async () => {
    expect((await run('SELECT count() FROM events', { database: reader.databaseName })).text).toBe('3\n');
    expect((await run('SELECT count() FROM events', { database: 'default' })).text).toBe('3\n');
    expectRefused(await run('SELECT count() FROM events', { database: other.databaseName }), 403, ['497']);
    const header = await clickhouseFetch(svc, reader.privateApiKey, {}, { method: 'POST', body: 'SELECT 1', headers: { 'x-clickhouse-database': other.databaseName } });
    expect(header.status).toBe(403);
  });

  test('a parameter of type Identifier is judged as the table it names', async () => {
    expectRefused(await run('SELECT count() FROM {t:Identifier}', { param_t: `${other.databaseName}.events` }), 403, ['497']);
    expect((await run('SELECT count() FROM {t:Identifier}', { param_t: 'events' })).text).toBe('3\n');
    // The same text with another value is judged again, not taken from the verdict of the first.
    expectRefused(await run('SELECT count() FROM {t:Identifier}', { param_t: `${other.databaseName}.events` }), 403, ['497']);
  });

  test('a statement split between the query parameter and the body is judged whole', async () => {
    expectRefused(await run(`${other.databaseName}.events`, { query: 'SELECT * FROM' }), 403, ['497']);
    expectRefused(await run('', { query: 'DROP TABLE events' }), 403, ['497']);
  });

  test('credentials: none, a wrong key, a public key, two ways at once', async () => {
    const noKey = await fetch(`${svc.url}/clickhouse?query=SELECT%201`);
    expect({ status: noKey.status, code: noKey.headers.get('x-clickhouse-exception-code') }).toEqual({ status: 401, code: '516' });
    expectRefused(await run('SELECT 1', {}, 'not-a-key-at-all'), 401, ['516']);
    expectRefused(await run('SELECT 1', {}, reader.publicApiKey), 403, ['497']);
    expectRefused(await run('SELECT 1', { user: 'default', password: reader.privateApiKey }), 401, ['516']);
    const byHeaders = await fetch(`${svc.url}/clickhouse?query=SELECT%201`, { headers: { 'x-clickhouse-user': other.databaseName, 'x-clickhouse-key': reader.privateApiKey } });
    expect(await byHeaders.text()).toBe('1\n');
    const byParameters = await fetch(`${svc.url}/clickhouse?${new URLSearchParams({ query: 'SELECT currentDatabase()', user: 'anyone', password: reader.privateApiKey })}`);
    expect(await byParameters.text()).toBe(`${reader.databaseName}\n`);
  });

  test("ClickHouse's native compression is refused with a plain message", async () => {
    expectRefused(await run('SELECT 1', { compress: '1' }), 501, ['48']);
  });

  test('an unknown format: UNKNOWN_FORMAT; an empty statement: SYNTAX_ERROR; no 500 anywhere', async () => {
    expectRefused(await run('SELECT 1 FORMAT NoSuchFormat'), 404, ['73']);
    expectRefused(await run('SELECT 1', { default_format: 'Template' }), 404, ['73']);
    expectRefused(await run('   '), 400, ['62']);
    expectRefused(await run('SELEC 1'), 400, ['62']);
    expectRefused(await run('SELECT no_such_column FROM events'), 404, ['47']);
  });
});
