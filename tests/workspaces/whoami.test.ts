import { afterAll, beforeAll, expect, test } from 'bun:test';
import { createWorkspace, startTestService, type TestService } from '../helpers/test-service';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(() => svc.stop());

test('an admin key: kind admin and the default workspace', async () => {
  const res = await svc.request('GET', '/whoami', { key: svc.privateKey });
  expect(res.status).toBe(200);
  const body = (await res.json()) as any;
  expect(body.kind).toBe('admin');
  expect(body.workspace.isDefault).toBe(true);
  expect(body.workspace.databaseName).toBe(svc.config.defaultWorkspaceDatabase);
});

test("a workspace's private key: kind private and that workspace", async () => {
  const created = await createWorkspace(svc, { name: 'whoami-ws' });
  const res = await svc.request('GET', '/whoami', { key: created.privateApiKey });
  const { publicApiKey: _p, privateApiKey: _s, ...workspace } = created;
  expect(await res.json()).toEqual({ kind: 'private', workspace });
});

test('a public key: 403 saying it may only send events; an unknown key: 401', async () => {
  const pub = await svc.request('GET', '/whoami', { key: svc.publicKey });
  expect(pub.status).toBe(403);
  expect(((await pub.json()) as { detail: string }).detail).toContain('a public key was sent');
  const unknown = await svc.request('GET', '/whoami', { key: 'sk_never_issued_123' });
  expect(unknown.status).toBe(401);
  expect(unknown.headers.get('www-authenticate')).toContain('invalid_token');
});
