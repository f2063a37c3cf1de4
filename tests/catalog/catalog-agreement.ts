import { expect } from 'bun:test';
import { rowsOf } from '../helpers/queries';
import { seededRandom } from '../helpers/seeded-random';
import type { CreatedWorkspace, TestService } from '../helpers/test-service';
import { referenceCatalog, type ReferenceItem, type StoredEvent } from './catalog-reference';

/**
 * The catalog's agreement with a plain computation (catalog-reference.ts) over a workspace's
 * stored events, on a service in the test's process or in its own.
 */

export type CatalogClient = Pick<TestService, 'request' | 'privateKey'>;

export const DAY = 86_400_000;
/** The first day of the random logs' events. */
export const DAY0 = Math.floor(Date.now() / DAY) * DAY - 6 * DAY;

/** A seeded log whose properties disagree in type, nest past three parts, hold arrays, nulls, empty objects and long text. */
export function randomLog(seed: number, n: number): unknown[] {
  const random = seededRandom(seed);
  const pick = <T>(values: readonly T[]): T => values[Math.floor(random() * values.length)]!;
  const libraries = [{ name: 'analytics.js', version: '2.0' }, { name: 'tracker' }, undefined, { name: 7 }];
  return Array.from({ length: n }, (_, i) => {
    const type = pick(['track', 'track', 'track', 'page', 'identify', 'group']);
    const timestamp = new Date(DAY0 + Math.floor(random() * 5 * DAY)).toISOString();
    const library = pick(libraries);
    const context = { ...(library ? { library } : {}), ...(random() < 0.5 ? { page: { path: pick(['/a', '/b']), referrer: '' } } : {}), locale: pick(['en', 'fr', null]) };
    const properties: Record<string, unknown> = {
      plan: pick(['free', 'pro', 3, true]),
      amount: pick([1, 2.5, '10', null]),
      ...(random() < 0.5 ? { items: [1, 2] } : {}),
      ...(random() < 0.3 ? { deep: { a: { b: { c: pick([1, 'x']) } } }, empty: {} } : {}),
      ...(random() < 0.2 ? { note: 'x'.repeat(120) } : {}),
    };
    const base = { type, timestamp, userId: `u${i % 17}`, context };
    if (type === 'track') return { ...base, event: pick(['signup', 'purchase', 'Order Completed']), properties };
    if (type === 'page') return { ...base, properties: { path: pick(['/a', '/b']), title: pick(['A', 'B']) } };
    if (type === 'group') return { ...base, groupId: 'g1', traits: { name: 'Acme', size: pick([5, '5']) } };
    return { ...base, traits: { email: `u${i}@example.com`, age: pick([30, '30', null]), address: { city: pick(['Paris', 'Oslo']) } } };
  });
}

export const catalogOf = async (svc: CatalogClient, key: string, what: 'events' | 'properties', query = '') => {
  const res = await svc.request('GET', `/catalog/${what}?limit=1000${query}`, { key });
  expect(res.status).toBe(200);
  return ((await res.json()) as { results: any[] }).results;
};

export async function storedEvents(svc: CatalogClient, key: string): Promise<StoredEvent[]> {
  const rows = await rowsOf(svc, "SELECT type, event, properties, traits, context, formatDateTime(timestamp, '%Y-%m-%dT%H:%i:%S.%fZ') AS timestamp FROM events", key);
  // The statement's answer gives the object columns as objects; the log's times are whole milliseconds.
  const text = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value));
  return rows.map((r) => ({ ...r, properties: text(r.properties), traits: text(r.traits), context: text(r.context), timestamp: r.timestamp.replace(/(\.\d{3})000Z$/, '$1Z') }));
}

/** The service's catalog of workspace `ws` agrees with the plain computation over its stored events. */
export async function expectAgreement(svc: CatalogClient, ws: CreatedWorkspace): Promise<void> {
  const reference = referenceCatalog(await storedEvents(svc, ws.privateApiKey));
  const observed = (item: ReferenceItem) => {
    const { values: _values, ...rest } = item;
    return rest;
  };
  const events = await catalogOf(svc, ws.privateApiKey, 'events');
  expect(events.map(({ name, types, volume, firstSeen, lastSeen, libraries }) => ({ name, types, volume, firstSeen, lastSeen, libraries })).sort((x, y) => x.name.localeCompare(y.name))).toEqual(
    reference.events.map(observed).sort((x, y) => x.name.localeCompare(y.name)),
  );
  const properties = await catalogOf(svc, ws.privateApiKey, 'properties');
  const key = (p: { source?: string; name: string }) => `${p.source}:${p.name}`;
  expect(properties.map(({ name, source, types, volume, firstSeen, lastSeen, libraries, events }) => ({ name, source, types, volume, firstSeen, lastSeen, libraries, events })).sort((x, y) => key(x).localeCompare(key(y)))).toEqual(
    reference.properties.map(observed).sort((x, y) => key(x).localeCompare(key(y))) as any[],
  );
  // Examples: up to five distinct short values the property took; one at least when it took any.
  const values = new Map(reference.properties.map((p) => [key(p), p.values]));
  for (const p of properties) {
    const seen = values.get(key(p))!;
    expect(new Set(p.examples).size).toBe(p.examples.length);
    expect(p.examples.length).toBeLessThanOrEqual(5);
    if (seen.size > 0) expect(p.examples.length).toBeGreaterThan(0);
    for (const example of p.examples) expect(seen.has(example)).toBe(true);
  }
}
