import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { Session } from 'chdb';
import { sandboxPassword, sandboxUserStatements, dropSandboxUserStatement } from '../../src/storage/sandbox-users';
import { startClickHouseFixture, type ClickHouseFixture } from '../fixtures/clickhouse-http-fixture';
import { ENGINE_DIR, uniqueName } from '../helpers/engine-dir';
import { eventually } from '../helpers/eventually';
import { runQueries } from '../helpers/queries';
import { createWorkspace, sendEvents, startTestService, type TestService } from '../helpers/test-service';

/**
 * With a ClickHouse server, each workspace's SQL runs as a user that may read only its database.
 * No modern ClickHouse server runs here (ENGINE-NOTES.md), so the server is the HTTP fixture over
 * chDB, which checks every user statement with the engine's parser, keeps the users and their
 * grants, and refuses a made user's request without its password. That the server then refuses
 * a foreign table to such a user is ClickHouse's grant system, not tested here.
 */
const PASSWORD = 'service-password';

describe('sandbox users on a server that allows access management', () => {
  let fixture: ClickHouseFixture;
  let svc: TestService;

  beforeAll(async () => {
    fixture = await startClickHouseFixture(ENGINE_DIR, 0, { accessManagement: true });
    svc = await startTestService({ CLICKHOUSE_URL: fixture.url, CLICKHOUSE_PASSWORD: PASSWORD, CLICKHOUSE_SANDBOX_USERS: 'on' });
  });
  afterAll(async () => {
    await svc.stop();
    await fixture.stop();
  });

  test("a workspace's statements run as its own user, which may only SELECT from its database; the service's own statements do not", async () => {
    const room = await createWorkspace(svc, { name: uniqueName('Users') });
    await sendEvents(svc, [{ type: 'track', event: 'e1' }], room.publicApiKey);
    const { status, body } = await runQueries(svc, ['SELECT count() AS probe FROM events'], room.privateApiKey);
    expect(status).toBe(200);
    expect(body.results[0].results).toEqual([{ probe: 1 }]);

    const user = `sandbox_${room.databaseName}`;
    expect(fixture.users.get(user)).toEqual({ password: sandboxPassword(PASSWORD, room.databaseName), grants: [`\`${room.databaseName}\`.*`] });
    const asUser = fixture.requests.filter((r) => r.user === user).map((r) => r.sql);
    expect(asUser.some((sql) => sql.includes('EXPLAIN AST'))).toBe(true);
    expect(asUser.some((sql) => /^SELECT count\(\) AS probe\s+FROM events/.test(sql))).toBe(true);
    expect(fixture.requests.filter((r) => r.user !== user && r.sql.includes('AS probe')).length).toBe(0);
    expect(fixture.requests.some((r) => r.user === user && /^\s*INSERT/.test(r.sql))).toBe(false);
  });

  test('a statement export runs as the workspace user too', async () => {
    const room = await createWorkspace(svc, { name: uniqueName('UsersExport') });
    const res = await svc.request('POST', '/queries/export', { key: room.privateApiKey, body: { query: 'SELECT 1 AS export_probe', format: 'csv' } });
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('export_probe');
    const sent = fixture.requests.filter((r) => r.sql.startsWith('SELECT 1 AS export_probe'));
    expect(sent.map((r) => r.user)).toEqual([`sandbox_${room.databaseName}`]);
  });

  test('a deleted workspace takes its user along; one made again with the same database gets its user again', async () => {
    const databaseName = uniqueName('users_again');
    const first = await createWorkspace(svc, { name: uniqueName('UsersAgain'), databaseName });
    expect((await runQueries(svc, ['SELECT 1 AS one'], first.privateApiKey)).status).toBe(200);
    expect(fixture.users.has(`sandbox_${databaseName}`)).toBe(true);
    expect((await svc.request('DELETE', `/workspaces/${first.workspaceId}`, { key: svc.privateKey })).status).toBe(200);
    expect(fixture.users.has(`sandbox_${databaseName}`)).toBe(false);
    const second = await createWorkspace(svc, { name: uniqueName('UsersAgain'), databaseName });
    expect((await runQueries(svc, ['SELECT 1 AS one'], second.privateApiKey)).status).toBe(200);
    expect(fixture.users.has(`sandbox_${databaseName}`)).toBe(true);
  });

  test('a second process sharing the server derives the same password and uses the same user', async () => {
    // Its own data directory (its ingest log), the same server, metadata and password.
    const { DATA_DIR: _own, ...shared } = svc.settings;
    const twin = await startTestService(shared);
    try {
      const room = await createWorkspace(svc, { name: uniqueName('Twin') });
      expect((await runQueries(svc, ['SELECT 1 AS one'], room.privateApiKey)).status).toBe(200);
      // Each process makes the user once (idempotent statements) and both answer as it.
      await eventually('the twin knows the new workspace', async () => (await runQueries(twin, ['SELECT 2 AS two'], room.privateApiKey)).status === 200);
      expect(fixture.requests.filter((r) => r.user === `sandbox_${room.databaseName}` && r.sql.startsWith('SELECT 2 AS two')).length).toBe(1);
    } finally {
      await twin.stop();
    }
  });
});

describe('sandbox users on a server that refuses access management (as chDB does)', () => {
  let fixture: ClickHouseFixture;
  beforeAll(async () => {
    fixture = await startClickHouseFixture(ENGINE_DIR);
  });
  afterAll(() => fixture.stop());

  test('auto: user SQL still runs, as the service user', async () => {
    const svc = await startTestService({ CLICKHOUSE_URL: fixture.url, CLICKHOUSE_SANDBOX_USERS: 'auto' });
    try {
      const { status } = await runQueries(svc, ['SELECT 1 AS one']);
      expect(status).toBe(200);
      expect(fixture.requests.some((r) => r.user.startsWith('sandbox_'))).toBe(false);
    } finally {
      await svc.stop();
    }
  });

  test('on: user SQL is refused with 503, not run without its user', async () => {
    const svc = await startTestService({ CLICKHOUSE_URL: fixture.url, CLICKHOUSE_SANDBOX_USERS: 'on' });
    try {
      const res = await runQueries(svc, ['SELECT 1 AS refused_probe']);
      expect(res.status).toBe(503);
      expect(fixture.requests.some((r) => r.sql.includes('refused_probe'))).toBe(false);
    } finally {
      await svc.stop();
    }
  });
});

describe('the statements that make sandbox users', () => {
  test("parse with the engine's parser, with and without a cluster", async () => {
    const session = new Session(ENGINE_DIR);
    try {
      for (const cluster of ['', 'analytics']) {
        const statements = [...sandboxUserStatements('ws_one', sandboxPassword('x', 'ws_one'), cluster), dropSandboxUserStatement('ws_one', cluster)];
        for (const sql of statements) {
          const formatted = (await session.queryBindAsync('SELECT formatQuery({sql:String}) AS f', { sql }, { format: 'JSONEachRow' })).text();
          expect(formatted).toContain('ws_one');
          if (cluster) expect(sql).toContain('ON CLUSTER `analytics`');
        }
      }
    } finally {
      session.close();
    }
  });

  test('the derived password differs by database and by the service password', () => {
    expect(sandboxPassword('a', 'ws1')).toMatch(/^[0-9a-f]{64}$/);
    expect(sandboxPassword('a', 'ws1')).not.toBe(sandboxPassword('a', 'ws2'));
    expect(sandboxPassword('a', 'ws1')).not.toBe(sandboxPassword('b', 'ws1'));
  });
});
