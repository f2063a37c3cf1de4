import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { createHash } from 'node:crypto';
import { listEvents, sendEvents, startTestService, type TestService } from '../helpers/test-service';
import { regulate, settledRegulation } from './helpers';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(() => svc?.stop());

const post = (body: unknown, key = svc.privateKey) => svc.request('POST', '/regulations', { key, body });

describe('POST /regulations', () => {
  const bad: Array<[string, unknown, string]> = [
    ['an unknown type', { regulationType: 'ERASE', subjectType: 'userId', subjectIds: ['a'] }, '/regulationType'],
    ['an unknown subject type', { regulationType: 'DELETE', subjectType: 'email', subjectIds: ['a'] }, '/subjectType'],
    ['no ids', { regulationType: 'DELETE', subjectType: 'userId', subjectIds: [] }, '/subjectIds'],
    ['5,001 ids', { regulationType: 'DELETE', subjectType: 'userId', subjectIds: Array.from({ length: 5001 }, (_, i) => `u${i}`) }, '/subjectIds'],
    ['an empty id', { regulationType: 'DELETE', subjectType: 'userId', subjectIds: [''] }, '/subjectIds/0'],
    ['an unknown field', { regulationType: 'DELETE', subjectType: 'userId', subjectIds: ['a'], reason: 'x' }, '/reason'],
  ];
  for (const [what, body, pointer] of bad) {
    test(`${what}: 400 naming ${pointer}, nothing recorded`, async () => {
      const before = (await (await svc.request('GET', '/regulations', { key: svc.privateKey })).json()) as any;
      const res = await post(body);
      expect(res.status).toBe(400);
      expect(res.headers.get('content-type')).toBe('application/problem+json');
      expect(((await res.json()) as any).errors.map((e: any) => e.pointer)).toContain(pointer);
      const after = (await (await svc.request('GET', '/regulations', { key: svc.privateKey })).json()) as any;
      expect(after.total).toBe(before.total);
    });
  }

  test('a public key: 403; no key: 401', async () => {
    const body = { regulationType: 'DELETE', subjectType: 'userId', subjectIds: ['a'] };
    expect((await post(body, svc.publicKey)).status).toBe(403);
    expect((await svc.request('POST', '/regulations', { body })).status).toBe(401);
    expect((await svc.request('GET', '/regulations', { key: svc.publicKey })).status).toBe(403);
  });

  test('an unknown id: 404', async () => {
    const res = await svc.request('GET', '/regulations/00000000-0000-4000-8000-000000000000', { key: svc.privateKey });
    expect(res.status).toBe(404);
  });
});

describe('the audit list', () => {
  test('records who asked (key kind and a prefix of its hash, never the key), what and when, newest first', async () => {
    const id = await regulate(svc, svc.privateKey, 'SUPPRESS', 'anonymousId', ['anon-audit', 'anon-audit']);
    const done = await settledRegulation(svc, svc.privateKey, id);
    expect(done).toMatchObject({ id, regulationType: 'SUPPRESS', subjectType: 'anonymousId', subjectIds: ['anon-audit'], subjectCount: 1, status: 'finished' });
    expect(done.requestedBy).toEqual({ keyKind: 'admin', keyId: createHash('sha256').update(svc.privateKey).digest('hex').slice(0, 12) });
    expect(Date.parse(done.finishedAt)).toBeGreaterThanOrEqual(Date.parse(done.createdAt));
    const second = await regulate(svc, svc.privateKey, 'UNSUPPRESS', 'anonymousId', ['anon-audit']);
    await settledRegulation(svc, svc.privateKey, second);
    const list = (await (await svc.request('GET', '/regulations?limit=1', { key: svc.privateKey })).json()) as any;
    expect(list.limit).toBe(1);
    expect(list.total).toBeGreaterThanOrEqual(2);
    expect(list.results.map((r: any) => r.id)).toEqual([second]);
    expect(JSON.stringify(list)).not.toContain(svc.privateKey);
  });

  test("another workspace's regulation is not found", async () => {
    const id = await regulate(svc, svc.privateKey, 'SUPPRESS', 'userId', ['nobody']);
    const other = await svc.request('POST', '/workspaces', { key: svc.privateKey, body: { name: `Other ${id}` } });
    const { privateApiKey } = (await other.json()) as any;
    expect((await svc.request('GET', `/regulations/${id}`, { key: privateApiKey })).status).toBe(404);
    expect(((await (await svc.request('GET', '/regulations', { key: privateApiKey })).json()) as any).total).toBe(0);
    await settledRegulation(svc, svc.privateKey, id);
    // The other workspace's events of the same id are not suppressed.
    await sendEvents(svc, [{ type: 'track', event: 'x', userId: 'nobody' }], privateApiKey);
    expect((await listEvents(svc, 'userId=nobody', privateApiKey)).body.total).toBe(1);
  });
});
