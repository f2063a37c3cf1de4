import { DAY_MS, type LogEvent } from './insights-log';

/**
 * A known event log for the paths picture's browser test (tests/console/paths.browser.test.ts):
 * visitors of a SaaS site two days ago who enter by different pages and meet at /signup, so the
 * edges into /signup are many small ones and the edge out of it one large one. An answer cut to
 * its largest edges then keeps `4_/signup → 5_signup` without any edge into `4_/signup`: the node
 * of step 4 that d3 alone would draw as an entry point, in the first column.
 *
 * Each route is walked by `count` persons, one page or event a minute.
 */
const ROUTES: Array<{ count: number; nodes: string[] }> = [
  { count: 6, nodes: ['/', '/pricing', '/features', '/signup', 'signup'] },
  { count: 5, nodes: ['/blog/launch-week', '/pricing', '/customers', '/signup', 'signup'] },
  { count: 5, nodes: ['/docs', '/docs/install', '/pricing', '/signup', 'signup'] },
  { count: 4, nodes: ['/features', '/integrations', '/pricing', '/signup', 'signup'] },
  { count: 4, nodes: ['/changelog', '/', '/pricing', '/signup', 'signup'] },
  { count: 3, nodes: ['/pricing', '/', '/features', '/blog/launch-week'] },
  { count: 2, nodes: ['/docs', '/docs/a-very-long-page-about-single-sign-on-and-directory-sync', '/pricing'] },
];

export function pathsLog(now = Date.now()): LogEvent[] {
  const start = Math.floor(now / DAY_MS) * DAY_MS - 2 * DAY_MS + 9 * 3_600_000;
  const events: LogEvent[] = [];
  let person = 0;
  for (const route of ROUTES) {
    for (let i = 0; i < route.count; i++) {
      const userId = `visitor-${++person}`;
      route.nodes.forEach((node, k) => {
        const timestamp = new Date(start + person * 600_000 + k * 60_000).toISOString();
        events.push(node.startsWith('/') ? { type: 'page', event: node, userId, properties: { path: node }, timestamp } : { type: 'track', event: node, userId, properties: {}, timestamp });
      });
    }
  }
  return events;
}
