import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { uniqueName } from '../helpers/engine-dir';
import { createWorkspace, startTestService, type CreatedWorkspace, type TestService } from '../helpers/test-service';

/**
 * Every route with every kind of key. The admin key is the environment's private key; the
 * environment's public key belongs to the default workspace; a created workspace has a public
 * and a private key of its own.
 */
let svc: TestService;
let member: CreatedWorkspace;
beforeAll(async () => {
  svc = await startTestService();
  member = await createWorkspace(svc, { name: uniqueName('Member') });
});
afterAll(() => svc.stop());

type Caller = 'none' | 'admin' | 'env public' | 'workspace public' | 'workspace private';
const CALLERS: Caller[] = ['none', 'admin', 'env public', 'workspace public', 'workspace private'];

function keyOf(caller: Caller): string | undefined {
  return {
    none: undefined,
    admin: svc.privateKey,
    'env public': svc.publicKey,
    'workspace public': member.publicApiKey,
    'workspace private': member.privateApiKey,
  }[caller];
}

interface Route {
  method: string;
  /** The path; a workspace route gets a fresh target, so that a DELETE that succeeds harms nothing else. */
  path: (target: string) => string;
  body?: () => unknown;
  /** The status each caller must get. */
  expect: Record<Caller, number>;
}

const ADMIN_ONLY = { none: 401, admin: 200, 'env public': 403, 'workspace public': 403, 'workspace private': 403 };

const ROUTES: Route[] = [
  { method: 'GET', path: () => '/', expect: { none: 200, admin: 200, 'env public': 200, 'workspace public': 200, 'workspace private': 200 } },
  {
    method: 'POST',
    path: () => '/events',
    body: () => ({ events: [{ type: 'track', event: 'scope' }] }),
    expect: { none: 401, admin: 201, 'env public': 201, 'workspace public': 201, 'workspace private': 201 },
  },
  { method: 'GET', path: () => '/events', expect: { none: 401, admin: 200, 'env public': 403, 'workspace public': 403, 'workspace private': 200 } },
  {
    method: 'POST',
    path: () => '/queries',
    body: () => ({ queries: ['SELECT count() FROM events'] }),
    expect: { none: 401, admin: 200, 'env public': 403, 'workspace public': 403, 'workspace private': 200 },
  },
  { method: 'GET', path: () => '/workspaces', expect: ADMIN_ONLY },
  { method: 'POST', path: () => '/workspaces', body: () => ({ name: uniqueName('ScopeNew') }), expect: ADMIN_ONLY },
  { method: 'GET', path: (id) => `/workspaces/${id}`, expect: ADMIN_ONLY },
  { method: 'PUT', path: (id) => `/workspaces/${id}`, body: () => ({ name: uniqueName('ScopeRenamed') }), expect: ADMIN_ONLY },
  { method: 'DELETE', path: (id) => `/workspaces/${id}`, expect: ADMIN_ONLY },
];

describe('scope matrix', () => {
  for (const route of ROUTES) {
    for (const caller of CALLERS) {
      const status = route.expect[caller];
      test(`${route.method} ${route.path(':id')} with ${caller === 'none' ? 'no key' : `the ${caller} key`}: ${status}`, async () => {
        const target = await createWorkspace(svc, { name: uniqueName('Target') });
        const res = await svc.request(route.method, route.path(target.workspaceId), { key: keyOf(caller), body: route.body?.() });
        expect(res.status).toBe(status);
        if (status === 401) expect(res.headers.get('www-authenticate')).toStartWith('Bearer');
        if (status === 403) expect(((await res.json()) as any).detail).toContain('key');
        // A refused caller changed nothing: the target workspace is still there as it was.
        if (status >= 400) {
          const after = await svc.request('GET', `/workspaces/${target.workspaceId}`, { key: svc.privateKey });
          expect(((await after.json()) as any).name).toBe(target.name);
        }
      });
    }
  }

  test("a workspace's private key acts on its own workspace, the admin key on the default", async () => {
    const own = await svc.request('POST', '/events', { key: member.privateApiKey, body: { events: [{ type: 'track', event: 'own-private' }] } });
    expect(own.status).toBe(201);
    const mine = (await (await svc.request('GET', '/events?event=own-private', { key: member.privateApiKey })).json()) as any;
    const admins = (await (await svc.request('GET', '/events?event=own-private', { key: svc.privateKey })).json()) as any;
    expect(mine.total).toBe(1);
    expect(admins.total).toBe(0);
  });
});
