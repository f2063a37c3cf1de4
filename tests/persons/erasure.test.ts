import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { uniqueName } from '../helpers/engine-dir';
import { rowsOf } from '../helpers/queries';
import { listEvents, sendEvents, startTestService, type TestService } from '../helpers/test-service';
import { regulate, settledRegulation } from '../regulations/helpers';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(() => svc.stop());

const at = (minute: number) => new Date(Date.UTC(2026, 10, 20, 12, minute)).toISOString();

async function eraseUser(userId: string, type = 'DELETE') {
  const regulation = await settledRegulation(svc, svc.privateKey, await regulate(svc, svc.privateKey, type, 'userId', [userId]));
  expect(regulation.status).toBe('finished');
  return regulation;
}

describe('erasure follows persons', () => {
  test("erasing a userId removes the anonymous events linked to it, earlier userIds' events, the links and the profile", async () => {
    const p = uniqueName('erase');
    await sendEvents(svc, [
      { type: 'page', anonymousId: `${p}-anon`, timestamp: at(1) },
      { type: 'page', anonymousId: `${p}-anon`, timestamp: at(2) },
      { type: 'identify', userId: `${p}-old`, anonymousId: `${p}-anon`, traits: { email: 'x@example.com' }, timestamp: at(3) },
      { type: 'track', event: 'buy', userId: `${p}-old`, timestamp: at(4) },
      // Someone else's event: it stays.
      { type: 'track', event: 'buy', userId: `${p}-other`, timestamp: at(4) },
    ]);
    const alias = await svc.request('POST', '/v1/alias', { key: svc.publicKey, body: { previousId: `${p}-old`, userId: `${p}-user`, timestamp: at(5) } });
    expect(alias.status).toBe(200);
    await sendEvents(svc, [{ type: 'track', event: 'buy', userId: `${p}-user`, timestamp: at(6) }]);
    expect((await svc.request('GET', `/persons/${p}-user`, { key: svc.privateKey })).status).toBe(200);

    const regulation = await eraseUser(`${p}-user`);
    expect(regulation.eventsDeleted).toBe(6);

    const left = await rowsOf(svc, `SELECT userId, anonymousId FROM events WHERE startsWith(userId, '${p}') OR startsWith(anonymousId, '${p}') ORDER BY userId`);
    expect(left).toEqual([{ userId: `${p}-other`, anonymousId: '' }]);
    for (const query of [`anonymousId=${p}-anon`, `userId=${p}-old`, `userId=${p}-user`]) expect((await listEvents(svc, query)).body.total).toBe(0);
    expect(await rowsOf(svc, `SELECT count() AS n FROM person_links WHERE startsWith(id, '${p}') OR startsWith(userId, '${p}')`)).toEqual([{ n: 0 }]);
    expect(await rowsOf(svc, `SELECT count() AS n FROM person_lookup FINAL WHERE startsWith(id, '${p}')`)).toEqual([{ n: 0 }]);
    expect((await svc.request('GET', `/persons/${p}-user`, { key: svc.privateKey })).status).toBe(404);
    expect((await svc.request('GET', `/persons/${p}-other`, { key: svc.privateKey })).status).toBe(200);
  });

  test("a shared browser: erasing its first user erases its anonymous events (hers), and the browser is then the next user's", async () => {
    const p = uniqueName('shared');
    await sendEvents(svc, [
      { type: 'identify', userId: `${p}-alice`, anonymousId: `${p}-browser`, timestamp: at(1) },
      { type: 'identify', userId: `${p}-bob`, anonymousId: `${p}-browser`, timestamp: at(2) },
      { type: 'page', anonymousId: `${p}-browser`, timestamp: at(3) },
    ]);
    expect((await eraseUser(`${p}-alice`)).eventsDeleted).toBe(2);
    await sendEvents(svc, [{ type: 'page', anonymousId: `${p}-browser`, timestamp: at(4) }]);
    const persons = await rowsOf(svc, `SELECT personId, count() AS n FROM events_with_persons WHERE startsWith(anonymousId, '${p}') GROUP BY personId`);
    expect(persons).toEqual([{ personId: `${p}-bob`, n: 2 }]);
  });

  test('suppressing a userId also drops new events of its linked anonymousId', async () => {
    const p = uniqueName('suppress');
    await sendEvents(svc, [{ type: 'identify', userId: `${p}-user`, anonymousId: `${p}-anon`, timestamp: at(1) }]);
    await eraseUser(`${p}-user`, 'SUPPRESS');
    await sendEvents(svc, [
      { type: 'page', anonymousId: `${p}-anon`, timestamp: at(2) },
      { type: 'page', anonymousId: `${p}-someone`, timestamp: at(2) },
    ]);
    expect((await listEvents(svc, `anonymousId=${p}-anon`)).body.total).toBe(1);
    expect((await listEvents(svc, `anonymousId=${p}-someone`)).body.total).toBe(1);
  });
});
