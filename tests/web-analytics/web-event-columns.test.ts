import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { PERSON_ID_VIEW, personIdView } from '../../src/storage/migrations/persons';
import { plainTarget } from '../../src/storage/migrations/runner';
import { describeInProcess } from '../helpers/deno-service';
import { uniqueName } from '../helpers/engine-dir';
import { rowsOf } from '../helpers/queries';
import { seededRandom } from '../helpers/seeded-random';
import { makesVisits } from './stats-reference';
import { createWorkspace, listEvents, sendEvents, startTestService, type CreatedWorkspace, type TestService } from '../helpers/test-service';

/**
 * Each event stores whether it makes visits (`visitEvent`) and its page's path (`pagePath`),
 * src/storage/migrations/visits.ts: the columns must hold the definition of
 * docs/web-analytics.md#visits and the page's path for every event, as plain TypeScript reads of
 * the stored event (after enrichment; stats-reference.ts's) say, over seeded random events of
 * every kind: page views and custom events, Plausible's engagement reports, identify and group
 * calls, crawlers, backend calls with neither page nor browser, pages given in the context or
 * the properties, by path or URL, empty or not.
 */

const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const GOOGLEBOT = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';
const EVENTS = 300;

function randomEvents(seed: number): Array<Record<string, unknown>> {
  const random = seededRandom(seed);
  const pick = <T>(values: readonly T[]): T => values[Math.floor(random() * values.length)]!;
  return Array.from({ length: EVENTS }, (_, i) => {
    const type = pick(['page', 'page', 'track', 'track', 'identify', 'group']);
    const context: Record<string, unknown> = {};
    const page: Record<string, string> = {};
    if (random() < 0.5) page.path = pick(['/', '/pricing', '']);
    if (random() < 0.3) page.url = pick(['https://site.example/docs', '']);
    if (Object.keys(page).length > 0) context.page = page;
    const userAgent = pick([undefined, undefined, CHROME, GOOGLEBOT]);
    if (userAgent) context.userAgent = userAgent;
    const properties: Record<string, unknown> = {};
    if (random() < 0.3) properties.path = pick(['/blog', '']);
    if (random() < 0.2) properties.url = pick(['https://site.example/blog', '']);
    const event: Record<string, unknown> = { type, anonymousId: `device-${i % 17}`, timestamp: `2026-06-10T10:${String(i % 60).padStart(2, '0')}:00Z`, context, properties };
    if (type === 'track') event.event = pick(['Signup', 'engagement', 'Download']);
    if (type === 'group') event.groupId = 'g1';
    return event;
  });
}

/** The page's path of a stored event: `context.page.path`, else `properties.path`. */
const pathOf = (e: any): string => e.context?.page?.path || e.properties?.path || '';

let svc: TestService;
let ws: CreatedWorkspace;

describe('the web-analytics columns of the events', () => {
  beforeAll(async () => {
    svc = await startTestService();
    ws = await createWorkspace(svc, { name: uniqueName('visit_event') });
    await sendEvents(svc, randomEvents(20261129), ws.publicApiKey);
  });
  afterAll(() => svc?.stop());

  test('hold the visit definition and the page path of every event, as plain reads of the stored event say', async () => {
    const { status, body } = await listEvents(svc, 'limit=1000', ws.privateApiKey);
    expect(status).toBe(200);
    expect(body.results).toHaveLength(EVENTS);
    const rows = await rowsOf(svc, 'SELECT toString(uuid) AS uuid, visitEvent, pagePath FROM events_with_persons', ws.privateApiKey);
    const stored = new Map(rows.map((r) => [r.uuid as string, [Boolean(r.visitEvent), r.pagePath]]));
    const expected = new Map((body.results as any[]).map((e) => [e.uuid as string, [makesVisits(e), pathOf(e)]]));
    expect(stored).toEqual(expected);
    expect(new Set(rows.map((r) => r.pagePath))).toEqual(new Set(['', '/', '/pricing', '/blog']));
    // The generator reached both answers, and the reasons for each.
    const reasons = (body.results as any[]).map((e) => [e.type, e.event ?? '', e.context?.bot === true, makesVisits(e)].join(' '));
    for (const reason of ['page  false true', 'page  true false', 'track Signup false true', 'track engagement false false', 'identify  false false']) expect(reasons).toContain(reason);
    expect((body.results as any[]).some((e) => e.type === 'track' && !e.context?.bot && e.event !== 'engagement' && !makesVisits(e))).toBe(true);
  });

  test("are hidden from SELECT *, on the table and on events_with_persons, as the read columns are", async () => {
    for (const table of ['events', 'events_with_persons']) {
      const [row] = await rowsOf(svc, `SELECT * FROM ${table} LIMIT 1`, ws.privateApiKey);
      expect(Object.keys(row)).not.toContain('visitEvent');
      expect(Object.keys(row)).not.toContain('pagePath');
    }
  });

  test('selects the page views the Stats API counts', async () => {
    const [row] = await rowsOf(svc, "SELECT countIf(visitEvent AND type = 'page') AS n FROM events", ws.privateApiKey);
    const res = await svc.request('POST', '/api/v2/query', { key: ws.privateApiKey, body: { site_id: ws.workspaceId, metrics: ['pageviews'], date_range: ['2026-06-10', '2026-06-10'] } });
    expect(res.status).toBe(200);
    const answer = (await res.json()) as { results: Array<{ metrics: number[] }> };
    expect(answer.results[0]!.metrics[0]).toBe(Number(row.n));
    expect(Number(row.n)).toBeGreaterThan(0);
  });
});

/**
 * A workspace whose events were stored before the columns existed (as by a release before them):
 * their migrations add them, fill them for the stored events in the background, and make
 * events_with_persons show them. The earlier schema is made from a current one on the real
 * engine: the columns dropped, the view of that release made again, the migrations forgotten.
 */
describeInProcess('the web-analytics columns added to stored events', () => {
  let before: TestService;
  let after: TestService;
  beforeAll(async () => {
    before = await startTestService();
    await sendEvents(before, randomEvents(7));
    const database = before.settings.DEFAULT_WORKSPACE_DATABASE!;
    const target = plainTarget(database);
    await before.storage.command(`ALTER TABLE ${target.db}.events DROP COLUMN visitEvent, DROP COLUMN pagePath`);
    await before.storage.command(`DROP VIEW ${target.db}.${PERSON_ID_VIEW}`);
    await before.storage.command(personIdView(target));
    await before.storage.command(`DELETE FROM ${before.settings.META_DATABASE}.schema_migrations WHERE database = {database:String} AND version IN (11, 12)`, { database });
    await before.stop();
    after = await startTestService(before.settings);
  });
  afterAll(() => after?.stop());

  test('fill them for every stored part, and they hold the visit definition and the path through events_with_persons', async () => {
    const database = after.settings.DEFAULT_WORKSPACE_DATABASE!;
    const { body } = await listEvents(after, 'limit=1000');
    const expected = (body.results as any[]).filter(makesVisits).map((e) => e.uuid as string).sort();
    expect(expected.length).toBeGreaterThan(0);
    const flagged = await rowsOf(after, 'SELECT toString(uuid) AS uuid FROM events_with_persons WHERE visitEvent ORDER BY uuid');
    expect(flagged.map((r) => r.uuid)).toEqual(expected);
    const paths = new Map((body.results as any[]).map((e) => [e.uuid as string, pathOf(e)]));
    const storedPaths = await rowsOf(after, 'SELECT toString(uuid) AS uuid, pagePath FROM events_with_persons');
    expect(new Map(storedPaths.map((r) => [r.uuid as string, r.pagePath]))).toEqual(paths);
    for (let waited = 0; ; waited += 50) {
      const [row] = await after.storage.query(
        `SELECT count() AS parts, countIf(hasAll(columns, ['visitEvent', 'pagePath'])) AS filled FROM (
           SELECT name, groupArray(column) AS columns FROM system.parts_columns WHERE database = {database:String} AND table = 'events' AND active GROUP BY name)`,
        { database },
      );
      if (Number(row!.parts) > 0 && row!.parts === row!.filled) break;
      if (waited > 30_000) throw new Error(`stored parts not filled: ${JSON.stringify(row)}`);
      await Bun.sleep(50);
    }
    expect((await rowsOf(after, 'SELECT toString(uuid) AS uuid FROM events WHERE visitEvent ORDER BY uuid')).map((r) => r.uuid)).toEqual(expected);
  });
});
