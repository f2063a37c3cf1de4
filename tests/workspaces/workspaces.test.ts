import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { testInProcess } from '../helpers/deno-service';
import { uniqueName } from '../helpers/engine-dir';
import { createWorkspace, listEvents, sendEvents, startTestService, type TestService } from '../helpers/test-service';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(() => svc.stop());

const admin = (method: string, path: string, body?: unknown) => svc.request(method, path, { key: svc.privateKey, body });

async function json(res: Response): Promise<any> {
  return res.json();
}

async function databaseExists(name: string): Promise<boolean> {
  return (await svc.storage.query('SELECT 1 FROM system.databases WHERE name = {name:String}', { name })).length > 0;
}

async function eventsTableExists(database: string): Promise<boolean> {
  const rows = await svc.storage.query("SELECT 1 FROM system.tables WHERE database = {database:String} AND name = 'events'", { database });
  return rows.length > 0;
}

async function defaultWorkspaceId(): Promise<string> {
  const list = await json(await admin('GET', '/workspaces'));
  return list.results.find((w: any) => w.isDefault).workspaceId;
}

describe('POST /workspaces', () => {
  testInProcess('with a databaseName: 200 with the workspace and its keys; database and events table exist at once', async () => {
    const databaseName = uniqueName('ws_given');
    const created = await createWorkspace(svc, { name: uniqueName('Given'), databaseName });
    expect(created).toMatchObject({ databaseName, isDefault: false });
    expect(created.workspaceId).toMatch(/^[0-9a-f-]{36}$/);
    expect(Date.parse(created.createdAt)).not.toBeNaN();
    expect(created.publicApiKey).toMatch(/^pk_[A-Za-z0-9_-]{32}$/);
    expect(created.privateApiKey).toMatch(/^sk_[A-Za-z0-9_-]{32}$/);
    expect(created.properties).toBeUndefined();
    expect(await eventsTableExists(databaseName)).toBe(true);
    // The keys are shown once: reading the workspace back does not reveal them.
    const read = await json(await admin('GET', `/workspaces/${created.workspaceId}`));
    expect(read.publicApiKey).toBeUndefined();
    expect(read.privateApiKey).toBeUndefined();
    const { publicApiKey: _p, privateApiKey: _s, ...workspace } = created;
    expect(read).toEqual(workspace);
  });

  testInProcess('without a databaseName: derived from the name', async () => {
    const tag = uniqueName('x').replace(/_/g, '-');
    const created = await createWorkspace(svc, { name: `Acme Inc. ${tag}` });
    expect(created.databaseName).toBe(`ws_acme_inc_${tag.replace(/-/g, '_')}`);
    expect(await eventsTableExists(created.databaseName)).toBe(true);
  });

  test('a derived name that is taken gets a random suffix', async () => {
    const tag = uniqueName('dup');
    const first = await createWorkspace(svc, { name: `Same ${tag}` });
    const second = await createWorkspace(svc, { name: `same-${tag}` });
    expect(first.databaseName).toBe(`ws_same_${tag}`);
    expect(second.databaseName).toMatch(new RegExp(`^ws_same_${tag}_[0-9a-f]{8}$`));
  });

  test('properties round-trip through create, get and list', async () => {
    const properties = { plan: 'enterprise', seats: 25, tags: ['a', 'b'], nested: { ok: true } };
    const created = await createWorkspace(svc, { name: uniqueName('Props'), properties });
    expect(created.properties).toEqual(properties);
    expect((await json(await admin('GET', `/workspaces/${created.workspaceId}`))).properties).toEqual(properties);
    const listed = (await json(await admin('GET', '/workspaces'))).results.find((w: any) => w.workspaceId === created.workspaceId);
    expect(listed.properties).toEqual(properties);
  });

  test('a name already taken: 409', async () => {
    const name = uniqueName('Taken');
    await createWorkspace(svc, { name });
    const res = await admin('POST', '/workspaces', { name });
    expect(res.status).toBe(409);
    expect(res.headers.get('content-type')).toBe('application/problem+json');
    expect((await json(res)).detail).toContain('already exists');
  });

  test('a databaseName another workspace has: 409', async () => {
    const databaseName = uniqueName('ws_taken');
    await createWorkspace(svc, { name: uniqueName('First'), databaseName });
    const res = await admin('POST', '/workspaces', { name: uniqueName('Second'), databaseName });
    expect(res.status).toBe(409);
    expect((await json(res)).detail).toContain(`database ${databaseName} belongs to workspace`);
  });

  testInProcess('a databaseName that exists in ClickHouse outside any workspace: 409, and it is left alone', async () => {
    const databaseName = uniqueName('not_a_workspace');
    await svc.storage.command(`CREATE DATABASE ${databaseName}`);
    const res = await admin('POST', '/workspaces', { name: uniqueName('Squatter'), databaseName });
    expect(res.status).toBe(409);
    expect((await json(res)).detail).toContain('already exists in ClickHouse');
    for (const name of ['system', 'information_schema']) {
      expect((await admin('POST', '/workspaces', { name: uniqueName('Sys'), databaseName: name })).status).toBe(409);
    }
    expect(await databaseExists(databaseName)).toBe(true);
  });

  const badDatabaseNames: Array<[string, string]> = [
    ['a single quote', "ws_o'brien"],
    ['a double quote', 'ws_"x"'],
    ['a dot', 'other.events'],
    ['a space', 'ws acme'],
    ['a backtick', 'ws_`x`'],
    ['a semicolon', 'ws_x;DROP'],
    ['a hyphen', 'ws-acme'],
    ['a leading digit', '1ws'],
    ['non-ASCII letters', 'ws_café'],
    ['nothing', ''],
    ['200 characters', 'w'.repeat(200)],
    ['64 characters', 'w'.repeat(64)],
  ];
  for (const [what, databaseName] of badDatabaseNames) {
    test(`a databaseName with ${what}: 400 naming /databaseName, nothing created`, async () => {
      const name = uniqueName('BadDb');
      const res = await admin('POST', '/workspaces', { name, databaseName });
      expect(res.status).toBe(400);
      const body = await json(res);
      expect(body.errors).toEqual([{ pointer: '/databaseName', detail: expect.stringContaining('letters, digits or underscores') }]);
      const names = (await json(await admin('GET', '/workspaces'))).results.map((w: any) => w.name);
      expect(names).not.toContain(name);
    });
  }

  const badBodies: Array<[string, unknown, string, string]> = [
    ['no name', { databaseName: 'ws_x' }, '/name', 'is required'],
    ['a blank name', { name: '   ' }, '/name', 'non-blank'],
    ['a name that is a number', { name: 7 }, '/name', 'non-blank string'],
    ['a name over 200 characters', { name: 'n'.repeat(201) }, '/name', 'at most 200'],
    ['properties that are an array', { name: 'x', properties: [1] }, '/properties', 'must be a JSON object'],
    ['isDefault that is a string', { name: 'x', isDefault: 'yes' }, '/isDefault', 'must be true or false'],
    ['an unknown field', { name: 'x', owner: 'me' }, '/owner', 'is not a known field'],
    ['a body that is an array', [], '', 'must be a JSON object'],
  ];
  for (const [what, body, pointer, detail] of badBodies) {
    test(`${what}: 400 naming ${pointer || 'the body'}`, async () => {
      const res = await admin('POST', '/workspaces', body);
      expect(res.status).toBe(400);
      expect((await json(res)).errors).toContainEqual({ pointer, detail: expect.stringContaining(detail) });
    });
  }
});

describe('isDefault', () => {
  test('moves from one workspace to another, and the environment keys follow it', async () => {
    const original = await defaultWorkspaceId();
    const next = await createWorkspace(svc, { name: uniqueName('NextDefault'), isDefault: true });
    expect(next.isDefault).toBe(true);
    expect((await json(await admin('GET', `/workspaces/${original}`))).isDefault).toBe(false);
    const defaults = (await json(await admin('GET', '/workspaces'))).results.filter((w: any) => w.isDefault);
    expect(defaults.map((w: any) => w.workspaceId)).toEqual([next.workspaceId]);

    // The environment's keys now act on the new default workspace.
    const sent = await sendEvents(svc, [{ type: 'track', event: 'to-new-default' }]);
    expect((await listEvents(svc, 'event=to-new-default', next.privateApiKey)).body.results[0].uuid).toBe(sent.results[0]!.uuid);

    // And back, with PUT.
    const back = await admin('PUT', `/workspaces/${original}`, { name: 'Default', isDefault: true });
    expect(back.status).toBe(200);
    expect((await json(back)).isDefault).toBe(true);
    expect((await json(await admin('GET', `/workspaces/${next.workspaceId}`))).isDefault).toBe(false);
    expect((await listEvents(svc, 'event=to-new-default')).body.total).toBe(0);
  });

  test('the default workspace cannot be made not-default directly: 409', async () => {
    const id = await defaultWorkspaceId();
    const res = await admin('PUT', `/workspaces/${id}`, { name: 'Default', isDefault: false });
    expect(res.status).toBe(409);
    expect((await json(res)).detail).toContain('make another workspace the default');
    expect(await defaultWorkspaceId()).toBe(id);
  });
});

describe('PUT /workspaces/{id}', () => {
  test('replaces name and properties; an absent isDefault keeps its value', async () => {
    const created = await createWorkspace(svc, { name: uniqueName('Before'), properties: { a: 1, b: 2 } });
    const name = uniqueName('After');
    const res = await admin('PUT', `/workspaces/${created.workspaceId}`, { name, properties: { c: 3 } });
    expect(res.status).toBe(200);
    const updated = await json(res);
    expect(updated).toEqual({
      workspaceId: created.workspaceId,
      name,
      isDefault: false,
      databaseName: created.databaseName,
      createdAt: created.createdAt,
      properties: { c: 3 },
      allowedOrigins: ['*'],
      siteDomains: [],
      retentionDays: 0,
      timezone: 'UTC',
    });
    expect(await json(await admin('GET', `/workspaces/${created.workspaceId}`))).toEqual(updated);
    // Absent properties are removed: PUT replaces.
    const cleared = await json(await admin('PUT', `/workspaces/${created.workspaceId}`, { name }));
    expect(cleared.properties).toBeUndefined();
    // Its keys still work after the changes.
    await sendEvents(svc, [{ type: 'page' }], created.publicApiKey);
  });

  test('the same databaseName is accepted; a different one is refused with 400', async () => {
    const created = await createWorkspace(svc, { name: uniqueName('Db') });
    const same = await admin('PUT', `/workspaces/${created.workspaceId}`, { name: created.name, databaseName: created.databaseName });
    expect(same.status).toBe(200);
    const other = await admin('PUT', `/workspaces/${created.workspaceId}`, { name: created.name, databaseName: 'ws_elsewhere' });
    expect(other.status).toBe(400);
    expect((await json(other)).errors).toEqual([{ pointer: '/databaseName', detail: expect.stringContaining('cannot change') }]);
    expect((await json(await admin('GET', `/workspaces/${created.workspaceId}`))).databaseName).toBe(created.databaseName);
  });

  test("another workspace's name: 409", async () => {
    const a = await createWorkspace(svc, { name: uniqueName('A') });
    const b = await createWorkspace(svc, { name: uniqueName('B') });
    const res = await admin('PUT', `/workspaces/${b.workspaceId}`, { name: a.name });
    expect(res.status).toBe(409);
    expect((await json(await admin('GET', `/workspaces/${b.workspaceId}`))).name).toBe(b.name);
  });

  test('an invalid body: 400', async () => {
    const created = await createWorkspace(svc, { name: uniqueName('Invalid') });
    const res = await admin('PUT', `/workspaces/${created.workspaceId}`, { properties: {} });
    expect(res.status).toBe(400);
    expect((await json(res)).errors).toContainEqual({ pointer: '/name', detail: 'is required' });
  });
});

describe('unknown workspaces', () => {
  for (const id of ['00000000-0000-4000-8000-000000000000', 'not-a-uuid']) {
    for (const method of ['GET', 'PUT', 'DELETE']) {
      test(`${method} /workspaces/${id}: 404`, async () => {
        const res = await admin(method, `/workspaces/${id}`, method === 'PUT' ? { name: uniqueName('Nobody') } : undefined);
        expect(res.status).toBe(404);
        expect(await json(res)).toMatchObject({ status: 404, detail: `no workspace ${id}` });
      });
    }
  }
});

describe('DELETE /workspaces/{id}', () => {
  testInProcess('revokes the keys on the very next request and drops the database', async () => {
    const created = await createWorkspace(svc, { name: uniqueName('Doomed') });
    await sendEvents(svc, [{ type: 'track', event: 'doomed' }], created.publicApiKey);
    const res = await admin('DELETE', `/workspaces/${created.workspaceId}`);
    expect(res.status).toBe(200);
    expect((await json(res)).workspaceId).toBe(created.workspaceId);
    expect((await svc.request('POST', '/events', { key: created.publicApiKey, body: { events: [{ type: 'page' }] } })).status).toBe(401);
    expect((await listEvents(svc, '', created.privateApiKey)).status).toBe(401);
    expect(await databaseExists(created.databaseName)).toBe(false);
    expect((await admin('GET', `/workspaces/${created.workspaceId}`)).status).toBe(404);
    expect((await admin('DELETE', `/workspaces/${created.workspaceId}`)).status).toBe(404);
  });

  testInProcess('frees the name and the database name: a new workspace with them starts empty', async () => {
    const name = uniqueName('Reborn');
    const databaseName = uniqueName('ws_reborn');
    const first = await createWorkspace(svc, { name, databaseName });
    await sendEvents(svc, [{ type: 'track', event: 'old-life' }], first.publicApiKey);
    expect((await admin('DELETE', `/workspaces/${first.workspaceId}`)).status).toBe(200);
    const second = await createWorkspace(svc, { name, databaseName });
    expect(second.workspaceId).not.toBe(first.workspaceId);
    expect(await eventsTableExists(databaseName)).toBe(true);
    expect((await listEvents(svc, '', second.privateApiKey)).body.total).toBe(0);
    expect((await listEvents(svc, '', first.privateApiKey)).status).toBe(401);
  });

  test('the default workspace cannot be deleted: 409, and it keeps working', async () => {
    const id = await defaultWorkspaceId();
    const res = await admin('DELETE', `/workspaces/${id}`);
    expect(res.status).toBe(409);
    expect((await json(res)).detail).toContain('default workspace cannot be deleted');
    await sendEvents(svc, [{ type: 'page' }]);
  });
});

describe('GET /workspaces', () => {
  test('lists every workspace oldest first, in the paginated wrapper', async () => {
    const a = await createWorkspace(svc, { name: uniqueName('ListA') });
    const b = await createWorkspace(svc, { name: uniqueName('ListB') });
    const all = await json(await admin('GET', '/workspaces'));
    expect(all).toMatchObject({ limit: 1000, offset: 0, total: all.results.length });
    const ids = all.results.map((w: any) => w.workspaceId);
    expect(ids.indexOf(a.workspaceId)).toBeLessThan(ids.indexOf(b.workspaceId));
    expect(all.results[0].isDefault).toBe(true);
    const page = await json(await admin('GET', '/workspaces?limit=1&offset=1'));
    expect(page).toMatchObject({ limit: 1, offset: 1, total: all.total });
    expect(page.results).toEqual([all.results[1]]);
  });

  test('an unknown parameter: 400', async () => {
    const res = await admin('GET', '/workspaces?name=x');
    expect(res.status).toBe(400);
    expect((await json(res)).errors).toEqual([{ parameter: 'name', detail: 'is not a known field' }]);
  });
});
