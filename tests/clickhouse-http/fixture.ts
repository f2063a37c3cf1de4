import { uniqueName } from '../helpers/engine-dir';
import { createWorkspace, sendEvents, startTestService, type CreatedWorkspace, type TestService } from '../helpers/test-service';

/** The identify join of the interface document (docs/sql.md), as every client runs it. */
export const IDENTIFY_JOIN = `SELECT e.event AS event, JSONExtractString(i.traits, 'email') AS email
FROM events AS e
LEFT JOIN (SELECT userId, traits FROM events WHERE type = 'identify') AS i ON e.userId = i.userId
WHERE e.type = 'track'
ORDER BY event`;

/** What IDENTIFY_JOIN answers over the events of `seedWorkspace`. */
export const JOINED = [
  { event: 'Signed Up', email: 'ada@example.com' },
  { event: 'Upgraded', email: 'ada@example.com' },
];

/** A value only the other workspace holds: no answer to the reader may carry it. */
export const OTHER_SECRET = 'SECRET_OF_THE_OTHER_WORKSPACE';

/** Two track events and an identify in `workspace`, a secret in `other`. */
export async function seedWorkspaces(svc: TestService): Promise<{ reader: CreatedWorkspace; other: CreatedWorkspace }> {
  const reader = await createWorkspace(svc, { name: uniqueName('ClickHouseReader') });
  const other = await createWorkspace(svc, { name: uniqueName('ClickHouseOther') });
  await sendEvents(
    svc,
    [
      { type: 'track', event: 'Signed Up', userId: 'ada', properties: { plan: 'free' } },
      { type: 'track', event: 'Upgraded', userId: 'ada', properties: { plan: 'pro' } },
      { type: 'identify', userId: 'ada', traits: { email: 'ada@example.com' } },
    ],
    reader.publicApiKey,
  );
  await sendEvents(svc, [{ type: 'track', event: OTHER_SECRET, userId: OTHER_SECRET }], other.publicApiKey);
  return { reader, other };
}

export async function startSeeded(overrides: Record<string, string> = {}): Promise<{ svc: TestService; reader: CreatedWorkspace; other: CreatedWorkspace }> {
  const svc = await startTestService(overrides);
  return { svc, ...(await seedWorkspaces(svc)) };
}

/** A request to the interface with `key` as the password of HTTP Basic. */
export function clickhouseFetch(svc: TestService, key: string, search: Record<string, string>, init: RequestInit = {}, path = '/clickhouse'): Promise<Response> {
  const headers = new Headers(init.headers);
  if (!headers.has('authorization')) headers.set('authorization', `Basic ${btoa(`default:${key}`)}`);
  return fetch(`${svc.url}${path}?${new URLSearchParams(search)}`, { ...init, headers });
}
