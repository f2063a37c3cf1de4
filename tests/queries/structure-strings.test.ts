import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { DashboardDoor, throughDoor, type Answer } from './hostile-sql/doors';
import type { DoorName } from './hostile-sql/derivation';
import { canariesIn, startTarget, type Target } from './hostile-sql/target';

/**
 * A table function's structure string is code: the engine evaluates a column's ALIAS, DEFAULT or
 * MATERIALIZED expression when the column is read, so `file('/proc/self/environ')` written there
 * answered the process's environment, admin key included. Each statement must be refused through
 * every door, and no answer may hold a canary (the admin key, DATA_DIR, the canary file in it).
 */
const ENVIRON = "file(''/proc/self/environ'')";
const STATEMENTS: Array<[string, (t: Target) => string]> = [
  ['generateRandom, ALIAS', () => `SELECT b FROM generateRandom('a UInt8, b String ALIAS ${ENVIRON}') LIMIT 1`],
  ['values, ALIAS', () => `SELECT b FROM values('a UInt8, b String ALIAS ${ENVIRON}', 1)`],
  ['format, ALIAS', () => `SELECT b FROM format(JSONEachRow, 'a UInt8, b String ALIAS ${ENVIRON}', '{"a":1}')`],
  ['format, DEFAULT of a missing column', () => `SELECT b FROM format(JSONEachRow, 'a UInt8, b String DEFAULT ${ENVIRON}', '{"a":1}')`],
  ['null, ALIAS', () => `SELECT b FROM null('a UInt8, b String ALIAS ${ENVIRON}')`],
  ['values, ALIAS reading a file of DATA_DIR by a relative path', (t) => `SELECT b FROM values('a UInt8, b String ALIAS file(''${t.terrain.canaryFileFromCwd}'')', 1)`],
];
const DOORS: readonly DoorName[] = ['queries', 'export', 'clickhouse-get', 'clickhouse-post', 'dashboard'];

let target: Target;
let dashboard: DashboardDoor;
beforeAll(async () => {
  target = await startTarget();
  dashboard = new DashboardDoor(target.url, target.attackerKey, 1);
});
afterAll(() => target.stop());

async function send(door: DoorName, sql: string): Promise<Answer> {
  if (door === 'dashboard') return (await dashboard.answer([{ sql }]))[0]!;
  return throughDoor(door, target.url, target.attackerKey, { sql });
}

describe('code in a structure string', () => {
  for (const [what, statement] of STATEMENTS) {
    for (const door of DOORS) {
      test(`${what}, through ${door}: refused, and no canary in the answer`, async () => {
        const sql = statement(target);
        const answer = await send(door, sql);
        expect(canariesIn(answer.text, target.canaries, sql)).toEqual([]);
        expect(answer.status).toBe(403);
        if (door.startsWith('clickhouse')) {
          // ClickHouse's error shape: its text and code, ACCESS_DENIED or READONLY.
          expect([497, 164]).toContain(answer.clickhouseCode!);
          expect(answer.text).toMatch(/\n\nCode: (497|164)\. DB::Exception: .*\((ACCESS_DENIED|READONLY)\)/);
        } else if (door === 'dashboard') {
          expect(JSON.parse(answer.text).error).toMatchObject({ title: 'Forbidden', status: 403, errors: [{ pointer: '/tiles/0/query' }] });
        } else {
          expect(answer.text).toContain('content-type: application/problem+json');
          expect(JSON.parse(answer.text.slice(answer.text.indexOf('\n\n') + 2))).toMatchObject({ title: 'Forbidden', status: 403, errors: [{ pointer: '/queries/0' }] });
        }
      });
    }
  }
});
