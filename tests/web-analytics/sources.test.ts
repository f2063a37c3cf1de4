import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { uniqueName } from '../helpers/engine-dir';
import { testInProcess } from '../helpers/deno-service';
import { createWorkspace, listEvents, sendEvents, startTestService, type CreatedWorkspace, type TestService } from '../helpers/test-service';
import { identifier } from '../../src/storage/storage';

/**
 * Sources as Plausible names them, with known answers: spellings of one source are one row
 * (utm_source `twitter`, a t.co or twitter.com referrer, a source stored before the naming), the
 * page's `ref` and `source` parameters name the source when it has no utm_source, and a referrer
 * is shown as its host and path, without query.
 */

const DAY = '2026-06-12';
const at = (time: string) => `${DAY}T${time}Z`;

/** One visit of one page view, from `url` (on the site) and `referrer`. */
const visit = (id: string, url: string, referrer: string, time: string, context: Record<string, unknown> = {}) => ({
  type: 'page',
  anonymousId: id,
  context: { page: { path: new URL(url).pathname, url, referrer }, ...context },
  timestamp: at(time),
});

const SITE = 'https://sources.example';
const EVENTS = [
  visit('a', `${SITE}/?utm_source=twitter`, '', '10:00:00'),
  visit('b', `${SITE}/`, 'https://t.co/xyz', '10:01:00'),
  visit('c', `${SITE}/`, 'https://twitter.com/someone/', '10:02:00'),
  visit('d', `${SITE}/?utm_source=google`, '', '10:03:00'),
  visit('e', `${SITE}/`, 'https://www.google.com/', '10:04:00'),
  visit('f', `${SITE}/launch?ref=producthunt`, '', '10:05:00'),
  visit('g', `${SITE}/`, 'https://news.ycombinator.com/item?id=42#top', '10:06:00'),
  // The tag wins over the referrer: `source`, when there is no utm_source.
  visit('h', `${SITE}/?source=Newsletter`, 'https://t.co/abc', '10:07:00'),
  // A source stored as a client sent it (or as the service stored it before the naming): merged when read.
  visit('i', `${SITE}/`, '', '10:08:00', { source: 'twitter' }),
  // A referrer on the site itself is no source.
  visit('j', `${SITE}/next`, `${SITE}/`, '10:09:00'),
];

let svc: TestService;
let ws: CreatedWorkspace;
beforeAll(async () => {
  svc = await startTestService();
  ws = await createWorkspace(svc, { name: uniqueName('sources') });
  await sendEvents(svc, EVENTS, ws.publicApiKey);
});
afterAll(() => svc?.stop());

async function stats(dimension: string, service = svc) {
  const res = await service.request('POST', '/api/v2/query', { key: ws.privateApiKey, body: { site_id: ws.workspaceId, metrics: ['visits'], dimensions: [dimension], date_range: [DAY, DAY] } });
  const answer = (await res.json()) as any;
  if (res.status !== 200) throw new Error(`${res.status}: ${JSON.stringify(answer)}`);
  return answer.results as Array<{ metrics: number[]; dimensions: string[] }>;
}

describe('sources as Plausible names them', () => {
  test('the enrichment names each event\'s source: utm_source, `source` and `ref` merged with the known names, else the referrer\'s name', async () => {
    const events = (await listEvents(svc, 'orderByField=timestamp&orderByDirection=asc', ws.privateApiKey)).body.results;
    expect(events.map((e: any) => [e.anonymousId, e.context.source ?? null])).toEqual([
      ['a', 'Twitter'],
      ['b', 'Twitter'],
      ['c', 'Twitter'],
      ['d', 'Google'],
      ['e', 'Google'],
      ['f', 'producthunt'],
      ['g', 'Hacker News'],
      ['h', 'Newsletter'],
      ['i', 'twitter'],
      ['j', null],
    ]);
  });

  test('visit:source: `twitter`, t.co, twitter.com and a stored `twitter` are one row; `google` and Google one', async () => {
    expect(await stats('visit:source')).toEqual([
      { metrics: [4], dimensions: ['Twitter'] },
      { metrics: [2], dimensions: ['Google'] },
      { metrics: [1], dimensions: ['Direct / None'] },
      { metrics: [1], dimensions: ['Hacker News'] },
      { metrics: [1], dimensions: ['Newsletter'] },
      { metrics: [1], dimensions: ['producthunt'] },
    ]);
  });

  test('visit:referrer is the host without www. and the path, without query or fragment', async () => {
    expect(await stats('visit:referrer')).toEqual([
      { metrics: [5], dimensions: ['Direct / None'] },
      { metrics: [1], dimensions: ['google.com'] },
      { metrics: [1], dimensions: ['news.ycombinator.com/item'] },
      { metrics: [1], dimensions: ['t.co/abc'] },
      { metrics: [1], dimensions: ['t.co/xyz'] },
      { metrics: [1], dimensions: ['twitter.com/someone'] },
    ]);
  });

  test("visit:utm_source is the page's tag as sent: utm_source, else `source` or `ref`", async () => {
    expect(await stats('visit:utm_source')).toEqual([
      { metrics: [6], dimensions: ['(not set)'] },
      { metrics: [1], dimensions: ['Newsletter'] },
      { metrics: [1], dimensions: ['google'] },
      { metrics: [1], dimensions: ['producthunt'] },
      { metrics: [1], dimensions: ['twitter'] },
    ]);
  });

  // A second service over the same engine directory: one process only (a Deno service locks its own).
  testInProcess('visits built by an earlier visit definition are built again at start (an upgrade)', async () => {
    const db = identifier(ws.databaseName);
    // As an older version left them: a visit of its own naming, and progress without a definition.
    await svc.storage.command(
      `INSERT INTO ${db}.visits (visitKey, userId, anonymousId, start, end, pageviews, events, bounce, entryPage, exitPage, source, sign)
       VALUES ('old', '', 'old', '${DAY} 09:00:00', '${DAY} 09:00:00', 1, 1, 1, '/', '/', 'twitter', 1)`,
    );
    await svc.storage.command(`INSERT INTO ${db}.visit_progress (builtThrough, complete, historyThrough, timeoutMinutes, definition, version)
      SELECT builtThrough, complete, historyThrough, timeoutMinutes, 0, version + 1 FROM ${db}.visit_progress FINAL`);
    expect((await stats('visit:source')).find((r) => r.dimensions[0] === 'twitter')).toEqual({ metrics: [1], dimensions: ['twitter'] });
    const other = await startTestService({ ...svc.settings, PORT: '0' });
    try {
      while (!(await other.visits.built(ws.databaseName))) await Bun.sleep(50);
      expect((await stats('visit:source', other))[0]).toEqual({ metrics: [4], dimensions: ['Twitter'] });
      expect((await stats('visit:source', other)).some((r) => r.dimensions[0] === 'twitter')).toBe(false);
    } finally {
      await other.stop();
    }
  });
});
