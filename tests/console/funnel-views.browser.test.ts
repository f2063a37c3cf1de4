import { expect, test } from 'bun:test';
import { describeInChromium } from '../helpers/chromium';
import { consoleMoves } from '../helpers/console-page';
import { consoleSuite, lightAndDark } from '../helpers/console-suite';
import { seededRandom } from '../helpers/seeded-random';
import { DAY_MS, type LogEvent } from './insights-log';

/**
 * A funnel's three views in the insight builder, in headless Chromium: the view switch (Steps,
 * Conversion over time, Time to convert) asks the API for that view, and what the page shows (the
 * table of periods, the chart's legend at each bin) is what the API answers for the query in the
 * page's URL; a saved insight opens in its view, and a dashboard tile draws it. Screenshots as in
 * the other browser tests.
 */
declare const document: any;
declare const location: { hash: string };

/** Two weeks of visitors: each day some view /pricing, more of them sign up as days go by, some buy. */
function funnelLog(now = Date.now()): LogEvent[] {
  const random = seededRandom(41);
  const today = Math.floor(now / DAY_MS) * DAY_MS;
  const events: LogEvent[] = [];
  const at = (ms: number) => new Date(ms).toISOString();
  for (let day = -13; day <= -1; day++) {
    const visitors = 8 + ((day + 13) % 4) * 3;
    for (let i = 0; i < visitors; i++) {
      const userId = `v${day}-${i}`;
      const viewed = today + day * DAY_MS + 9 * 3_600_000 + i * 7 * 60_000;
      events.push({ type: 'page', event: '/pricing', userId, properties: { path: '/pricing' }, timestamp: at(viewed) });
      if (random() > 0.3 + (day + 13) * 0.03) continue;
      const signedUp = viewed + Math.round(1 + random() * 180) * 60_000;
      events.push({ type: 'track', event: 'signup', userId, properties: {}, timestamp: at(signedUp) });
      if (random() < 0.5) events.push({ type: 'track', event: 'purchase', userId, properties: {}, timestamp: at(Math.min(now - 60_000, signedUp + Math.round(1 + random() * 48) * 3_600_000)) });
    }
  }
  return events;
}

const STEPS = { steps: [{ event: '$pageview' }, { event: 'signup' }, { event: 'purchase' }], dateFrom: '-14d', timezone: 'UTC' };

describeInChromium('the funnel views in Chromium', () => {
  const suite = consoleSuite(funnelLog);

  /** The query in the page's URL now. */
  const urlQuery = async () => {
    const hash = await suite.page.evaluate(() => location.hash);
    return JSON.parse(new URLSearchParams(hash.slice(hash.indexOf('?') + 1)).get('q') ?? 'null') as Record<string, unknown>;
  };
  const apiAnswer = async (query: unknown) => {
    const res = await suite.svc.request('POST', '/insights/funnels', { key: suite.svc.privateKey, body: query });
    expect(res.status).toBe(200);
    return ((await res.json()) as { results: any[] }).results[0];
  };
  /** Waits until the query has rested and its answer is drawn. */
  const settled = async () => {
    await Bun.sleep(550);
    await suite.page.waitForFunction(() => !document.querySelector('.insight-result-body[aria-busy]') && !document.querySelector('.insight-status')?.textContent?.startsWith('Updating'), { timeout: 20_000 });
    await Bun.sleep(100);
  };
  const chooseView = async (view: string) => {
    await suite.page.click(`button[data-view="${view}"]`);
    await suite.page.waitForSelector(`button[data-view="${view}"][aria-pressed="true"]`);
    await settled();
  };
  /** The legend's value (the first series) with the mouse over place `index` of `count` (bars: the middle of each). */
  const legendAt = async (index: number, count: number, bars: boolean) => {
    const box = (await (await suite.page.$('.insight-output .period-chart .u-over'))!.boundingBox())!;
    const at = bars ? (index + 0.5) / count : index / (count - 1);
    await suite.page.mouse.move(box.x + Math.min(box.width - 2, Math.max(2, at * box.width)), box.y + box.height / 2);
    await Bun.sleep(80);
    return suite.page.$eval('.insight-output .period-chart .u-legend .u-series:nth-child(2) td.u-value', (td: any) => td.textContent.trim());
  };
  const shots = async (name: string) => {
    await suite.page.mouse.move(0, 0);
    await lightAndDark(suite.page, name);
  };
  const phoneShot = async (name: string, selector: string) => {
    await suite.page.setViewport({ width: 390, height: 844, isMobile: true, hasTouch: true, deviceScaleFactor: 1 });
    await (await suite.page.waitForSelector(selector))!.evaluate((e: any) => e.scrollIntoView());
    await consoleMoves(suite.page).shot(name);
    await suite.page.setViewport({ width: 1440, height: 900 });
    await Bun.sleep(300);
  };

  test('conversion over time: the periods the API answers, its rates on the chart', async () => {
    await suite.page.evaluate((q: string) => (location.hash = `#/insights/funnels?q=${encodeURIComponent(q)}`), JSON.stringify(STEPS));
    await suite.page.waitForSelector('.funnel');
    await settled();
    await chooseView('trends');
    const query = await urlQuery();
    expect(query).toMatchObject({ ...STEPS, funnelVizType: 'trends' });
    const answer = await apiAnswer(query);
    expect(answer.entered.filter((n: number) => n > 0).length).toBeGreaterThanOrEqual(13);
    const rows = await suite.page.$$eval('.funnel-trends-table tbody tr', (trs) => trs.map((tr: any) => [...tr.querySelectorAll('td')].map((td: any) => td.textContent)));
    expect(rows.map((r) => [Number(r[1]), Number(r[2])])).toEqual(answer.labels.map((_: string, i: number) => [answer.entered[i], answer.completed[i]]));
    expect(await suite.page.$$eval('.funnel-trends-table tbody td:first-child', (tds) => tds.map((td: any) => td.title))).toEqual(answer.labels);
    const busy = answer.entered.findIndex((n: number) => n > 0);
    expect(await legendAt(busy, answer.labels.length, false)).toBe(`${(answer.conversionRate[busy] * 100).toFixed(1)}%`);
    await shots('insights-funnels-trends');
    await phoneShot('insights-funnels-trends-phone', '.insight-output .period-chart');
  });

  test('time to convert: the bins the API answers, with the bins asked for', async () => {
    await chooseView('time_to_convert');
    let query = await urlQuery();
    expect(query.funnelVizType).toBe('time_to_convert');
    expect('interval' in query).toBe(false);
    let answer = await apiAnswer(query);
    expect(answer.conversions).toBeGreaterThan(10);
    expect(await suite.page.$eval('.funnel-time-summary', (p: any) => p.textContent)).toStartWith(`${answer.conversions} converted · average `);
    for (const [i, bin] of answer.bins.entries()) expect({ i, count: await legendAt(i, answer.bins.length, true) }).toEqual({ i, count: String(bin.count) });
    // From the second step: bins of the time from sign-up to purchase, four of them.
    await suite.page.select('select[aria-label="From step"]', '1');
    await settled();
    await suite.page.type('.q-section input[placeholder="auto"]', '4');
    await settled();
    query = await urlQuery();
    expect(query).toMatchObject({ funnelFromStep: 1, binCount: 4 });
    answer = await apiAnswer(query);
    expect(answer.bins.length).toBe(4);
    for (const [i, bin] of answer.bins.entries()) expect({ i, count: await legendAt(i, 4, true) }).toEqual({ i, count: String(bin.count) });
    await shots('insights-funnels-time-to-convert');
    await phoneShot('insights-funnels-time-to-convert-phone', '.funnel-time-to-convert');
  });

  test('a saved insight opens in its view; dashboard tiles draw both views; Steps is the funnel again', async () => {
    const saved = async (path: string, body: unknown) => {
      const res = await suite.svc.request('POST', path, { key: suite.svc.privateKey, body });
      expect(res.status).toBe(201);
      return ((await res.json()) as { id: string }).id;
    };
    const timeId = await saved('/insights/saved', { name: 'Sign-up to purchase', kind: 'funnels', query: await urlQuery() });
    const trendId = await saved('/insights/saved', { name: 'Pricing to purchase, by day', kind: 'funnels', query: { ...STEPS, funnelVizType: 'trends' } });
    await suite.page.evaluate((id: string) => (location.hash = `#/insights/funnels?saved=${id}`), timeId);
    await suite.page.waitForSelector('button[data-view="time_to_convert"][aria-pressed="true"]');
    await suite.page.waitForSelector('.funnel-time-to-convert .period-chart');
    const dashboard = await saved('/dashboards', { name: 'Conversion', tiles: [{ insightId: trendId, x: 0, y: 0, w: 6, h: 4 }, { insightId: timeId, x: 6, y: 0, w: 6, h: 4 }] });
    await consoleMoves(suite.page).go(`dashboards/${dashboard}`);
    await suite.page.waitForFunction(() => document.querySelectorAll('.tile .period-chart .u-over').length === 2, { timeout: 20_000 });
    expect(await suite.page.$$eval('.tile .period-chart', (charts) => charts.map((c: any) => c.getAttribute('data-mode')))).toEqual(['line', 'bar']);
    await shots('dashboard-funnel-views');
    await suite.page.evaluate((q: string) => (location.hash = `#/insights/funnels?q=${encodeURIComponent(q)}`), JSON.stringify({ ...STEPS, funnelVizType: 'trends', interval: 'week' }));
    await suite.page.waitForSelector('button[data-view="trends"][aria-pressed="true"]');
    await settled();
    await chooseView('steps');
    const query = await urlQuery();
    expect(query).toEqual(STEPS);
    await suite.page.waitForSelector('.funnel .funnel-step');
    expect(suite.faults).toEqual({ blocked: [], errors: [] });
  });
});
