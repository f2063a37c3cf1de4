import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { existsSync } from 'node:fs';
import { testInProcess } from '../helpers/deno-service';
import { uniqueName } from '../helpers/engine-dir';
import { runQueries, rowsOf } from '../helpers/queries';
import { createWorkspace, sendEvents, startTestService, type CreatedWorkspace, type TestService } from '../helpers/test-service';
import { fillStatement, OUTFILE, TABLE } from './sandbox-table';

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
        const sql = fillStatement(template, {
          other: rooms[other].databaseName,
          own: rooms[reader].databaseName,
          meta: svc.config.metaDatabase,
          defaultDatabase: svc.config.defaultWorkspaceDatabase,
        });
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
