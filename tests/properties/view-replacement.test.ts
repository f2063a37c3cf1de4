import { afterAll, beforeAll, expect, test } from 'bun:test';
import { describeInProcess } from '../helpers/deno-service';
import { runQueries } from '../helpers/queries';
import { waitForStoredReads } from '../helpers/stored-reads';
import { sendEvents, startTestService, type TestService } from '../helpers/test-service';

/**
 * While the service adds property columns, it replaces `events_with_persons` (to carry them);
 * statements reading the view meanwhile, through every door that reads it, must never find it
 * missing. The default workspace's database is `default`, as shipped: chDB's `default` is no
 * Atomic database, where `CREATE OR REPLACE VIEW` drops the view before creating it again.
 */
const SITE = 'view-replacement.example';
const READS = Array.from({ length: 9 }, (_, i) => `JSONExtract(properties, 'key${i}', 'String')`);

let svc: TestService;

describeInProcess('replacing events_with_persons while statements read it', () => {
  beforeAll(async () => {
    // The Stats API's and the insights' own reads (the bot flag, a page's path and browser) take
    // columns too while they run in a loop: room for them and the nine reads of the test.
    svc = await startTestService({ DEFAULT_WORKSPACE_DATABASE: 'default', PROPERTY_COLUMNS_MAX: '24' });
    await svc.request('PATCH', '/workspaces/current', { key: svc.privateKey, body: { siteDomains: [SITE] } });
    const properties = Object.fromEntries(READS.map((_, i) => [`key${i}`, `v${i}`]));
    await sendEvents(svc, [
      { type: 'track', event: 'signup', userId: 'u1', timestamp: '2024-03-01T10:00:00Z', properties },
      { type: 'page', name: '/', anonymousId: 'a1', timestamp: '2024-03-01T11:00:00Z', context: { page: { url: `https://${SITE}/` } } },
    ]);
  });
  afterAll(() => svc.stop());

  test('no statement fails in POST /queries, insights or the Stats API while property columns are added', async () => {
    const answers: Array<{ door: string; status: number; text: string }> = [];
    let adding = true;
    const doors: Record<string, () => Promise<Response>> = {
      queries: () => svc.request('POST', '/queries', { key: svc.privateKey, body: { queries: ['SELECT count() AS n FROM events_with_persons'] } }),
      insights: () => svc.request('POST', '/insights/trends', { key: svc.privateKey, body: { series: [{ event: 'signup' }], dateFrom: '2024-03-01', dateTo: '2024-03-02', interval: 'day' } }),
      stats: () => svc.request('POST', '/api/v2/query', { key: svc.privateKey, body: { site_id: SITE, metrics: ['visitors', 'events'], date_range: ['2024-03-01', '2024-03-02'] } }),
    };
    const readers = [...Object.entries(doors), ...Object.entries(doors)].map(async ([door, ask]) => {
      while (adding) {
        const res = await ask();
        answers.push({ door, status: res.status, text: res.status === 200 ? '' : await res.text() });
      }
    });
    try {
      // A read made by a second statement is stored in a column, which replaces the view.
      for (const read of READS) {
        for (let i = 0; i < 2; i++) expect((await runQueries(svc, [`SELECT count() AS n FROM events WHERE ${read} != ''`])).status).toBe(200);
        await waitForStoredReads(svc, 'default', [read]);
      }
    } finally {
      adding = false;
      await Promise.all(readers);
    }
    for (const door of Object.keys(doors)) expect(answers.filter((a) => a.door === door).length).toBeGreaterThan(0);
    expect(answers.filter((a) => a.status !== 200)).toEqual([]);
  });
});
