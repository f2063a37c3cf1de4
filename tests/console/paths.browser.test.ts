import { expect, test } from 'bun:test';
import { describeInChromium } from '../helpers/chromium';
import { consoleMoves } from '../helpers/console-page';
import { consoleSuite, lightAndDark } from '../helpers/console-suite';
import { pathsLog } from './paths-log';

/**
 * The paths picture in headless Chromium, in the builder and on a dashboard tile, over a known log
 * (tests/console/paths-log.ts): each node is drawn in the column of its step in the API's answer
 * (under the heading "Step <n>"), also when the answer's limit cut every edge into it, and no two
 * labels overlap, at 1440x900 and on a phone. Screenshots as in the other browser tests.
 */
declare const document: any;
declare const location: { hash: string };

interface Edge {
  source: string;
  target: string;
  value: number;
}
interface Box {
  text: string;
  left: number;
  top: number;
  right: number;
  bottom: number;
}
const stepOf = (node: string) => Number(/^(\d+)_/.exec(node)![1]);
const QUERY = { steps: 5, limit: 50, dateFrom: '-7d', timezone: 'UTC' };

describeInChromium('the paths picture in Chromium', () => {
  const suite = consoleSuite(pathsLog);

  const answer = async (query: object): Promise<Edge[]> => {
    const res = await suite.svc.request('POST', '/insights/paths', { key: suite.svc.privateKey, body: query });
    expect(res.status).toBe(200);
    return ((await res.json()) as { results: Edge[] }).results;
  };
  const openPaths = async (query: object) => {
    await suite.page.evaluate((q: string) => (location.hash = `#/insights/paths?q=${encodeURIComponent(q)}`), JSON.stringify(query));
    await suite.page.waitForSelector('.insight-output .sankey svg g[data-node]');
    await suite.page.waitForFunction(() => !document.querySelector('.insight-result-body[aria-busy]'));
  };
  /** Each drawn node's left edge, and the left edge of each column's heading by its text. */
  const columns = (scope: string) =>
    suite.page.$eval(scope, (root: any) => ({
      nodes: Object.fromEntries([...root.querySelectorAll('g[data-node]')].map((g: any) => [g.getAttribute('data-node'), g.querySelector('rect').getBoundingClientRect().left])),
      headings: Object.fromEntries([...root.querySelectorAll('text.sankey-column')].map((t: any) => [t.textContent, t.getBoundingClientRect().left])),
    }));
  /** The boxes of every text drawn (node labels and headings). */
  const labelBoxes = (scope: string): Promise<Box[]> =>
    suite.page.$eval(scope, (root: any) =>
      [...root.querySelectorAll('text')].map((t: any) => {
        const r = t.getBoundingClientRect();
        return { text: t.textContent, left: r.left, top: r.top, right: r.right, bottom: r.bottom };
      }),
    );
  const overlaps = (boxes: Box[]) =>
    boxes.flatMap((a, i) => boxes.slice(i + 1).filter((b) => a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom).map((b) => `${a.text} / ${b.text}`));
  /** Every node of `edges` drawn under the heading of its step, and no labels overlapping. */
  const checkPicture = async (scope: string, edges: Edge[]) => {
    const drawn = await columns(scope);
    const nodes = [...new Set(edges.flatMap((e) => [e.source, e.target]))];
    expect(Object.keys(drawn.nodes).toSorted()).toEqual(nodes.toSorted());
    for (const node of nodes) expect({ node, x: Math.round(drawn.nodes[node]!) }).toEqual({ node, x: Math.round(drawn.headings[`Step ${stepOf(node)}`]!) });
    const boxes = await labelBoxes(scope);
    expect(boxes.length).toBeGreaterThan(Object.keys(drawn.headings).length);
    expect(overlaps(boxes)).toEqual([]);
  };
  /** On a phone's screen: waits until the diagram is drawn again for its narrower box (scrolled sideways when its columns need more). */
  const onPhone = async (scope: string) => {
    const before = await suite.page.$eval(`${scope} svg`, (svg: any) => svg.getAttribute('width'));
    await suite.page.setViewport({ width: 390, height: 844, isMobile: true, hasTouch: true, deviceScaleFactor: 1 });
    await suite.page.waitForFunction((s: string, w: string) => document.querySelector(s)?.clientWidth < 400 && document.querySelector(`${s} svg`)?.getAttribute('width') !== w, {}, scope, before);
  };
  const shots = async (name: string) => {
    await suite.page.mouse.move(0, 0);
    await lightAndDark(suite.page, name);
  };

  test('each node in the column of its step, under "Step <n>", labels apart, at 1440x900 and on a phone', async () => {
    const edges = await answer(QUERY);
    expect(edges.length).toBeGreaterThan(10);
    await openPaths(QUERY);
    expect(await suite.page.$$eval('.insight-output text.sankey-column', (ts) => ts.map((t: any) => t.textContent))).toEqual(['Step 1', 'Step 2', 'Step 3', 'Step 4', 'Step 5']);
    await checkPicture('.insight-output .sankey', edges);
    // A label cut to its column keeps the whole in its title.
    const long = '/docs/a-very-long-page-about-single-sign-on-and-directory-sync';
    expect(await suite.page.$eval(`.insight-output g[data-node="2_${long}"] text`, (t: any, whole: string) => [t.textContent.includes(whole), t.parentNode.querySelector('title').textContent], long)).toEqual([false, `${long}: 2`]);
    await shots('insights-paths-steps');
    await onPhone('.insight-output .sankey');
    await checkPicture('.insight-output .sankey', edges);
    await suite.page.$eval('.insight-output .sankey', (e: any) => e.scrollIntoView());
    await consoleMoves(suite.page).shot('insights-paths-steps-phone');
    await suite.page.setViewport({ width: 1440, height: 900 });
  });

  test('a node whose incoming edges the limit cut stays in the column of its step, not the first', async () => {
    const query = { ...QUERY, limit: 1 };
    const edges = await answer(query);
    // The answer keeps 4_/signup → 5_signup without any edge into 4_/signup.
    expect(edges.some((e) => e.source === '4_/signup')).toBe(true);
    expect(edges.some((e) => e.target === '4_/signup')).toBe(false);
    await openPaths(query);
    await checkPicture('.insight-output .sankey', edges);
    const drawn = await columns('.insight-output .sankey');
    expect(drawn.nodes['4_/signup']!).toBeGreaterThan(drawn.headings['Step 3']!);
  });

  test('the dashboard tile: the largest edges, each node in the column of its step, labels apart', async () => {
    const created = async (path: string, body: unknown) => {
      const res = await suite.svc.request('POST', path, { key: suite.svc.privateKey, body });
      expect(res.status).toBe(201);
      return ((await res.json()) as { id: string }).id;
    };
    const insightId = await created('/insights/saved', { name: 'Where visitors go', kind: 'paths', query: QUERY });
    const trendId = await created('/insights/saved', { name: 'Sign-ups', kind: 'trends', query: { series: [{ event: 'signup' }], dateFrom: '-7d', interval: 'day', timezone: 'UTC' } });
    const id = await created('/dashboards', { name: 'Acquisition', tiles: [{ insightId, x: 0, y: 0, w: 6, h: 4 }, { insightId: trendId, x: 6, y: 0, w: 6, h: 4 }] });
    await consoleMoves(suite.page).go(`dashboards/${id}`);
    await suite.page.waitForSelector('.tile .sankey svg g[data-node]');
    const edges = (await answer(QUERY)).toSorted((a, b) => b.value - a.value).slice(0, 8);
    await checkPicture('.tile .sankey', edges);
    await shots('dashboard-paths-tile');
    await onPhone('.tile .sankey');
    await checkPicture('.tile .sankey', edges);
    await shots('dashboard-paths-tile-phone');
    expect(suite.faults).toEqual({ blocked: [], errors: [] });
  });
});
