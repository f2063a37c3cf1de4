import { afterAll, beforeAll, expect, test } from 'bun:test';
import { describeInChromium, HAS_CHROMIUM, launchChromium, offLoopback, type Chromium } from '../helpers/chromium';
import { bundleSnippet } from '../helpers/doc-snippets';
import { PageServer } from '../helpers/page-server';
import type { CreatedWorkspace, TestService } from '../helpers/test-service';
import { IDENTIFY_JOIN, JOINED, OTHER_SECRET, startSeeded } from './fixture';

/**
 * @clickhouse/client-web in Chromium, on a page of another origin that CORS_ORIGINS lists (a
 * dashboard hosted elsewhere): ping, JSONEachRow, query parameters, the identify join, and a
 * refusal it can read (the interface's headers are exposed to such a page).
 */
const PAGE_SCRIPT = `
import { createClient } from '@clickhouse/client-web';
window.runClickHouse = async (url, password, join) => {
  const client = createClient({ url, pathname: '/clickhouse', username: 'default', password });
  const rows = async (query, query_params) => (await client.query({ query, query_params, format: 'JSONEachRow' })).json();
  const ping = await client.ping();
  const events = await rows("SELECT event FROM events WHERE type = 'track' AND userId = {user:String} ORDER BY event", { user: 'ada' });
  const joined = await rows(join);
  const refused = await rows('SELECT * FROM system.users').then(() => 'ran', (err) => ({ code: err.code, type: err.type }));
  return { ping: ping.success, events, joined, refused };
};
`;

let svc: TestService;
let reader: CreatedWorkspace;
let pages: PageServer;
let chromium: Chromium;

beforeAll(async () => {
  pages = new PageServer();
  ({ svc, reader } = await startSeeded({ CORS_ORIGINS: pages.origin }));
  if (HAS_CHROMIUM) chromium = await launchChromium();
});
afterAll(async () => {
  await chromium?.close();
  pages.stop();
  await svc.stop();
});

describeInChromium('@clickhouse/client-web in Chromium, from a page on another origin', () => {
  test("reads the workspace's events and the identify join; a refusal comes back as ClickHouse's error", async () => {
    pages.script('/clickhouse-web.js', await bundleSnippet('clickhouse-web', PAGE_SCRIPT));
    const { page, requests } = await chromium.newPage();
    await page.goto(pages.page('/clickhouse-web/index.html', '<!doctype html><title>dashboard</title><script src="/clickhouse-web.js"></script>'));
    const outcome = await page.evaluate((url, key, join) => (globalThis as unknown as { runClickHouse: (...args: string[]) => Promise<unknown> }).runClickHouse(url, key, join), svc.url, reader.privateApiKey, IDENTIFY_JOIN);
    await page.close();
    expect(outcome).toEqual({
      ping: true,
      events: [{ event: 'Signed Up' }, { event: 'Upgraded' }],
      joined: JOINED,
      refused: { code: '497', type: 'ACCESS_DENIED' },
    });
    expect(JSON.stringify(outcome)).not.toContain(OTHER_SECRET);
    expect(offLoopback(requests)).toEqual([]);
  });
});
