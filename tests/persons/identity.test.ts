import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { acceptEvent } from '../../src/events/event-rows';
import { identityLinksOf } from '../../src/events/identity-link';
import { silentLogger } from '../../src/log';
import { IdentityLinks } from '../../src/persons/identity-links';
import { nowMicros } from '../../src/timestamps';
import { testInProcess } from '../helpers/deno-service';
import { rowsOf } from '../helpers/queries';
import { sendEvents, startTestService, type TestService } from '../helpers/test-service';

/** Persons as `events_with_persons` counts them: personId → events, sorted. */
async function personsOf(svc: TestService, ids: string[]): Promise<Record<string, number>> {
  const list = ids.map((id) => `'${id}'`).join(', ');
  const rows = await rowsOf(
    svc,
    `SELECT personId, count() AS n FROM events_with_persons WHERE userId IN (${list}) OR anonymousId IN (${list}) GROUP BY personId ORDER BY personId`,
  );
  return Object.fromEntries(rows.map((r) => [r.personId, Number(r.n)]));
}

const at = (minute: number) => new Date(Date.UTC(2026, 10, 20, 12, minute)).toISOString();

describe('identity links, with known answers', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService();
  });
  afterAll(() => svc.stop());

  test('three anonymous page views, then sign-up and purchase: one person with five events', async () => {
    await sendEvents(svc, [
      { type: 'page', anonymousId: 'v1-anon', timestamp: at(1) },
      { type: 'page', anonymousId: 'v1-anon', timestamp: at(2) },
      { type: 'page', anonymousId: 'v1-anon', timestamp: at(3) },
    ]);
    await sendEvents(svc, [
      { type: 'identify', userId: 'v1-user', anonymousId: 'v1-anon', traits: { email: 'v1@example.com' }, timestamp: at(4) },
      { type: 'track', event: 'purchase', userId: 'v1-user', timestamp: at(5) },
    ]);
    expect(await personsOf(svc, ['v1-anon', 'v1-user'])).toEqual({ 'v1-user': 5 });
  });

  test('two devices identified as the same user are one person', async () => {
    await sendEvents(svc, [
      { type: 'page', anonymousId: 'v2-phone', timestamp: at(1) },
      { type: 'page', anonymousId: 'v2-laptop', timestamp: at(2) },
      { type: 'identify', userId: 'v2-user', anonymousId: 'v2-phone', timestamp: at(3) },
      { type: 'identify', userId: 'v2-user', anonymousId: 'v2-laptop', timestamp: at(4) },
    ]);
    expect(await personsOf(svc, ['v2-phone', 'v2-laptop', 'v2-user'])).toEqual({ 'v2-user': 4 });
  });

  test('an alias chain resolves to its final userId, also for events sent with the earlier ids', async () => {
    await sendEvents(svc, [
      { type: 'page', anonymousId: 'v3-anon', timestamp: at(1) },
      { type: 'identify', userId: 'v3-first', anonymousId: 'v3-anon', timestamp: at(2) },
      { type: 'track', event: 'a', userId: 'v3-first', timestamp: at(3) },
    ]);
    const alias = (previousId: string, userId: string, minute: number) =>
      svc.request('POST', '/v1/alias', { key: svc.publicKey, body: { previousId, userId, timestamp: at(minute) } });
    expect((await alias('v3-first', 'v3-second', 4)).status).toBe(200);
    await sendEvents(svc, [{ type: 'track', event: 'b', userId: 'v3-second', timestamp: at(5) }]);
    expect((await alias('v3-second', 'v3-third', 6)).status).toBe(200);
    await sendEvents(svc, [{ type: 'track', event: 'c', userId: 'v3-third', timestamp: at(7) }]);
    expect(await personsOf(svc, ['v3-anon', 'v3-first', 'v3-second', 'v3-third'])).toEqual({ 'v3-third': 7 });
  });

  test('a rename chain sent in one request resolves to its end', async () => {
    await sendEvents(svc, [
      { type: 'track', event: 'a', userId: 'v4-a', timestamp: at(1) },
      { type: 'track', event: 'b', userId: 'v4-b', timestamp: at(2) },
    ]);
    const res = await svc.request('POST', '/v1/batch', {
      key: svc.publicKey,
      body: {
        batch: [
          { type: 'alias', previousId: 'v4-a', userId: 'v4-b', timestamp: at(3) },
          { type: 'alias', previousId: 'v4-b', userId: 'v4-c', timestamp: at(4) },
        ],
      },
    });
    expect(res.status).toBe(200);
    expect(await personsOf(svc, ['v4-a', 'v4-b', 'v4-c'])).toEqual({ 'v4-c': 4 });
  });

  test('a shared browser: anonymous events stay with the first link, by time, whatever the order links arrive in', async () => {
    await sendEvents(svc, [
      { type: 'page', anonymousId: 'v5-browser', timestamp: at(1) },
      { type: 'identify', userId: 'v5-alice', anonymousId: 'v5-browser', timestamp: at(2) },
      { type: 'track', event: 'x', userId: 'v5-alice', anonymousId: 'v5-browser', timestamp: at(3) },
      { type: 'page', anonymousId: 'v5-browser', timestamp: at(4) },
    ]);
    expect(await personsOf(svc, ['v5-browser', 'v5-alice', 'v5-bob'])).toEqual({ 'v5-alice': 4 });
    const ids = ['v5-browser', 'v5-alice', 'v5-bob', 'v5-carol'];
    await sendEvents(svc, [{ type: 'identify', userId: 'v5-bob', anonymousId: 'v5-browser', timestamp: at(5) }]);
    // Alice's link is the first: the anonymous page views stay hers; Bob has what he sent signed in.
    expect(await personsOf(svc, ids)).toEqual({ 'v5-alice': 4, 'v5-bob': 1 });
    // A link sent late but made earlier (an import of older events) is the first one now.
    await sendEvents(svc, [{ type: 'identify', userId: 'v5-carol', anonymousId: 'v5-browser', timestamp: at(0) }]);
    expect(await personsOf(svc, ids)).toEqual({ 'v5-alice': 2, 'v5-bob': 1, 'v5-carol': 3 });
  });

  test('a link dated after the first one, arriving late, takes nothing from it', async () => {
    const ids = ['v8-browser', 'v8-alice', 'v8-bob'];
    await sendEvents(svc, [
      { type: 'page', anonymousId: 'v8-browser', timestamp: at(10) },
      { type: 'identify', userId: 'v8-bob', anonymousId: 'v8-browser', timestamp: at(11) },
      { type: 'track', event: 'x', userId: 'v8-bob', anonymousId: 'v8-browser', timestamp: at(13) },
    ]);
    expect(await personsOf(svc, ids)).toEqual({ 'v8-bob': 3 });
    // Out of time order (an import of old events), between two of Bob's links: Bob's at 11 is the first.
    await sendEvents(svc, [{ type: 'identify', userId: 'v8-alice', anonymousId: 'v8-browser', timestamp: at(12) }]);
    expect(await personsOf(svc, ids)).toEqual({ 'v8-alice': 1, 'v8-bob': 3 });
    await sendEvents(svc, [{ type: 'page', anonymousId: 'v8-browser', timestamp: at(14) }]);
    expect(await personsOf(svc, ids)).toEqual({ 'v8-alice': 1, 'v8-bob': 4 });
  });

  test('an identify arriving after the anonymous events links them (retroactive)', async () => {
    await sendEvents(svc, [{ type: 'page', anonymousId: 'v6-anon', timestamp: at(1) }]);
    expect(await personsOf(svc, ['v6-anon', 'v6-user'])).toEqual({ 'v6-anon': 1 });
    await sendEvents(svc, [{ type: 'identify', userId: 'v6-user', anonymousId: 'v6-anon', timestamp: at(2) }]);
    expect(await personsOf(svc, ['v6-anon', 'v6-user'])).toEqual({ 'v6-user': 2 });
  });

  test('links survive a restart', async () => {
    await svc.stop();
    svc = await startTestService(svc.settings);
    expect(await personsOf(svc, ['v1-anon', 'v1-user'])).toEqual({ 'v1-user': 5 });
    expect(await personsOf(svc, ['v3-anon', 'v3-first', 'v3-second', 'v3-third'])).toEqual({ 'v3-third': 7 });
    expect(await personsOf(svc, ['v5-browser', 'v5-alice', 'v5-bob', 'v5-carol'])).toEqual({ 'v5-alice': 2, 'v5-bob': 1, 'v5-carol': 3 });
  });

  testInProcess('a data directory of the latest-link rule follows the first-link rule after the upgrade', async () => {
    const db = `\`${svc.settings.DEFAULT_WORKSPACE_DATABASE!}\``;
    const ids = ['v10-browser', 'v10-alice', 'v10-bob'];
    await sendEvents(svc, [
      { type: 'page', anonymousId: 'v10-browser', timestamp: at(1) },
      { type: 'identify', userId: 'v10-alice', anonymousId: 'v10-browser', timestamp: at(2) },
      { type: 'identify', userId: 'v10-bob', anonymousId: 'v10-browser', timestamp: at(3) },
      { type: 'page', anonymousId: 'v10-browser', timestamp: at(4) },
    ]);
    expect(await personsOf(svc, ids)).toEqual({ 'v10-alice': 3, 'v10-bob': 1 });
    // Back to the schema and the state of a release that followed the latest link (before migration 8).
    const command = (sql: string) => svc.storage.command(sql, {}, 'write');
    await command(`DELETE FROM \`${svc.settings.META_DATABASE}\`.schema_migrations WHERE database = '${svc.settings.DEFAULT_WORKSPACE_DATABASE}' AND version = 8`);
    await command(`DROP VIEW ${db}.person_links`);
    await command(`DROP TABLE ${db}.person_first_links`);
    await command(
      `CREATE TABLE ${db}.person_links (id String, userId String, kind LowCardinality(String), linkedAt DateTime64(6, 'UTC'), parsedAt DateTime64(6, 'UTC')) ENGINE = ReplacingMergeTree(linkedAt) ORDER BY id`,
    );
    await command(`INSERT INTO ${db}.person_links VALUES ('v10-browser', 'v10-bob', 'identify', '2026-11-20 12:03:00', now64(6))`);
    await command(`INSERT INTO ${db}.person_lookup VALUES ('v10-browser', 'v10-bob', false, 1)`);
    await svc.stop();
    svc = await startTestService(svc.settings);
    expect(await personsOf(svc, ids)).toEqual({ 'v10-alice': 3, 'v10-bob': 1 });
    expect(await rowsOf(svc, `SELECT userId FROM person_links WHERE id = 'v10-browser'`)).toEqual([{ userId: 'v10-alice' }]);
  });

  testInProcess('a round of 50,000 new links of 36-character ids resolves in seconds', async () => {
    // Compared with the key as one array parameter, their ids took the engine 24 s here (chDB 3.4.0; it grows with rows × ids).
    const db = svc.settings.DEFAULT_WORKSPACE_DATABASE!;
    const links = new IdentityLinks(svc.storage, false, silentLogger);
    const ids = Array.from({ length: 50_000 }, () => crypto.randomUUID());
    const started = performance.now();
    links.loaded(db, identityLinksOf(ids.map((anonymousId, i) => acceptEvent({ type: 'track', event: 'x', anonymousId, userId: `v9-${i}` }, nowMicros(), db))));
    await links.settled(db);
    expect(performance.now() - started).toBeLessThan(15_000);
    const rows = await rowsOf(svc, `SELECT count() AS n FROM person_lookup FINAL WHERE startsWith(personId, 'v9-')`);
    expect(Number(rows[0]!.n)).toBe(50_000);
  });

  testInProcess('events stored without their links (a stop between the insert and the round storing them) are linked at the next start', async () => {
    const db = svc.settings.DEFAULT_WORKSPACE_DATABASE!;
    await svc.storage.command(
      `INSERT INTO \`${db}\`.events (uuid, type, event, userId, anonymousId, timestamp, parsedAt)
       VALUES (generateUUIDv4(), 'page', '', '', 'v7-anon', now64(6), now64(6)), (generateUUIDv4(), 'identify', '', 'v7-user', 'v7-anon', now64(6), now64(6))`,
      {},
      'write',
    );
    expect(await personsOf(svc, ['v7-anon', 'v7-user'])).toEqual({ 'v7-anon': 1, 'v7-user': 1 });
    await svc.stop();
    svc = await startTestService(svc.settings);
    expect(await personsOf(svc, ['v7-anon', 'v7-user'])).toEqual({ 'v7-user': 2 });
  });
});
