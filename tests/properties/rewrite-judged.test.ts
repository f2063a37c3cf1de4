import { afterAll, beforeAll, expect, test } from 'bun:test';
import { readCalls } from '../../src/properties/read-calls';
import { runQueries } from '../helpers/queries';
import { describeInProcess } from '../helpers/deno-service';
import { uniqueName } from '../helpers/engine-dir';
import { waitForStoredReads } from '../helpers/stored-reads';
import { createWorkspace, sendEvents, startTestService, type TestService } from '../helpers/test-service';

/**
 * The fast-property rewrite works on text, after the guard. Where its tokenizer and the engine
 * disagreed on what is a string literal (a placeholder whose type holds `'}'`), it replaced a
 * "read" inside a literal with a back-quoted name holding quotes, and the read's key, approved as
 * a string, became live SQL: another workspace's events, files, settings (found by a red-team
 * review). A rewrite is now judged by the guard again before anything analyses it.
 */
const SECRET = `OTHER_SECRET_${uniqueName('rewrite')}`;
// A key that is harmless text in a string literal, and a scalar subquery once it is code.
const KEY = ' || toString((SELECT groupArray(event) FROM {d:Identifier}.events)) || ';
const READ = `JSONExtractString(properties, '${KEY}')`;
const ATTACK = `SELECT ${READ} AS r, {p:Enum8('}' = 1)} AS e, 'A JSONExtractString(properties, {k:String}) B' AS s FROM events`;

let svc: TestService;
let other: string;

// It waits for the service's stored columns: in its own process only.
describeInProcess('a rewritten statement is judged again', () => {
  beforeAll(async () => {
    svc = await startTestService();
    const workspace = await createWorkspace(svc, { name: uniqueName('Other') });
    other = workspace.databaseName;
    await sendEvents(svc, [{ type: 'track', event: SECRET, userId: SECRET }], workspace.publicApiKey);
    await sendEvents(svc, [{ type: 'track', event: 'own', userId: 'u1' }]);
    // Two statements making the read give it a column.
    for (let i = 0; i < 2; i++) expect((await runQueries(svc, [`SELECT ${READ} AS r FROM events`])).status).toBe(200);
    await waitForStoredReads(svc, svc.config.defaultWorkspaceDatabase, [READ]);
  });
  afterAll(() => svc.stop());

  test("a read inside a string literal, behind a placeholder typed Enum8('}' = 1), does not become code", async () => {
    const params = new URLSearchParams({ query: ATTACK, param_p: '}', param_k: KEY, param_d: other, default_format: 'JSONEachRow' });
    const res = await fetch(`${svc.url}/clickhouse?${params}`, { headers: { authorization: `Bearer ${svc.privateKey}` } });
    const text = await res.text();
    expect(text).not.toContain(SECRET);
    expect(res.status).toBe(200);
    expect(JSON.parse(text)).toMatchObject({ s: 'A JSONExtractString(properties, {k:String}) B' });
  });
});

test('the tokenizer takes no placeholder whose type holds a quote, and so finds no read inside the literal', () => {
  const calls = readCalls(ATTACK, { k: KEY, p: '}', d: 'x' });
  expect(calls.map((c) => ATTACK.slice(c.start, c.end))).toEqual([READ]);
});
