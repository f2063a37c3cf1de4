import './overview.css';
import { api, describeError } from '../../api';
import { h } from '../../dom';
import type { KeyIdentity } from '../../types';
import { currentRoute, replaceHash } from '../../ui/hash';
import { notice } from '../../ui/notice';
import { zoneNote } from '../../ui/zone-note';
import { notOverFrom, overviewChart, seriesOf, timeDimension } from './chart';
import { filterChips, filterParams, filtersFromParams, toStatsFilters, withFilter, type Dimension, type Filter } from './filters';
import { liveVisitors } from './live';
import { numbersRow, type Values } from './numbers';
import type { PanelRequest } from './columns';
import { PANELS, panel, type PanelHandle } from './panels';
import { dateRangeOf, describeRange, isDate, PERIODS, previousOf, rangeOf, resolvedBy, type PeriodId, type Range } from './period';
import { METRICS, stats, type Metric, type StatsAnswer, type StatsFilter, type StatsRequest } from './query';

const isPeriod = (p: string | null): p is PeriodId => PERIODS.some((x) => x.id === p);
const isMetric = (m: string | null): m is Metric => (METRICS as readonly string[]).includes(m ?? '');
/** The tab chosen in each panel, kept while the console is open. */
const chosenTabs = new Map<string, Dimension>();

interface State {
  site: string;
  period: PeriodId;
  from?: string;
  to?: string;
  metric: Metric;
  filters: Filter[];
}


/**
 * The overview (`#/overview`), Plausible's dashboard for one of the workspace's sites: the six
 * numbers beside the previous period's, the chosen one over time, the top sources, pages,
 * countries and devices, every row a filter for the whole screen, and the visitors of the last
 * minutes. Everything on it is asked of Plausible's Stats API v2 (`POST /api/v2/query`), as any
 * client of that API would ask. The URL holds the site, period, metric and filters.
 */
export function overviewView(root: HTMLElement): () => void {
  const params = currentRoute().params;
  const state: State = {
    site: params.get('site') ?? '',
    period: isPeriod(params.get('period')) ? (params.get('period') as PeriodId) : '30d',
    from: isDate(params.get('from')) ? params.get('from')! : undefined,
    to: isDate(params.get('to')) ? params.get('to')! : undefined,
    metric: isMetric(params.get('metric')) ? (params.get('metric') as Metric) : 'visitors',
    filters: filtersFromParams(params),
  };
  let stopped = false;
  let stopLive: (() => void) | undefined;
  let asked: AbortController | undefined;
  let panels: PanelHandle[] = [];

  const status = h('span', { class: 'muted ov-status', role: 'status', 'aria-live': 'polite' });
  const siteSlot = h('span', { class: 'ov-site' });
  // The workspace's site domains: only Plausible's keyless tracker needs one (its events are routed by domain).
  let siteDomains: string[] = [];
  const liveSlot = h('span', { class: 'ov-live-slot' });
  const periodSelect = h('select', { class: 'ov-period', 'aria-label': 'Date range' }, ...PERIODS.map((p) => h('option', { value: p.id, selected: p.id === state.period }, p.label)));
  const fromInput = h('input', { type: 'date', name: 'from', 'aria-label': 'From' });
  const toInput = h('input', { type: 'date', name: 'to', 'aria-label': 'To' });
  const apply = h('button', { type: 'button', class: 'secondary small' }, 'Apply');
  const custom = h('span', { class: 'ov-custom date-range', hidden: state.period !== 'custom' }, fromInput, h('span', { class: 'muted' }, '–'), toInput, apply);
  const rangeText = h('span', { class: 'muted ov-range' });
  // The Stats API counts days in the workspace's time zone: said beside the range.
  const zoneSlot = h('span', { class: 'ov-zone' });
  const header = h('div', { class: 'page-header ov-header' }, h('h1', {}, 'Overview'), siteSlot, liveSlot, h('span', { class: 'spacer' }), status, rangeText, zoneSlot, periodSelect, custom);
  const chipsSlot = h('div', { class: 'ov-chips-slot' });
  const emptySlot = h('div', { class: 'ov-empty-slot' });
  const numbersSlot = h('div', { class: 'ov-numbers-slot' });
  const chartSlot = h('div', { class: 'ov-chart-slot card' });
  const grid = h('div', { class: 'ov-panels' });
  const body = h('div', { class: 'ov-body' }, chipsSlot, emptySlot, h('div', { class: 'ov-top card' }, numbersSlot, chartSlot), grid);
  const page = h('div', { class: 'overview' }, header, body);
  root.append(page);

  const range = () => rangeOf(state.period, { from: state.from, to: state.to });
  const writeUrl = () => {
    const q = new URLSearchParams();
    if (siteDomains.includes(state.site)) q.set('site', state.site);
    if (state.period !== '30d') q.set('period', state.period);
    if (state.period === 'custom') {
      q.set('from', range().from);
      q.set('to', range().to);
    }
    if (state.metric !== 'visitors') q.set('metric', state.metric);
    for (const f of filterParams(state.filters)) q.append('f', f);
    replaceHash(`#/overview${q.size ? `?${q}` : ''}`);
  };
  const ask = (request: Omit<StatsRequest, 'site_id'>, signal: AbortSignal) => stats({ site_id: state.site, ...request }, signal);

  /** The numbers of a range, as the API answers them, and the range it says it counted. */
  const totals = async (r: Range, signal: AbortSignal): Promise<{ values: Values; resolved: Range }> => {
    // With a page filter the API has no views per visit (as Plausible): not asked, shown as none.
    const metrics = state.filters.some((f) => f.dimension === 'event:page') ? METRICS.filter((m) => m !== 'views_per_visit') : METRICS;
    const answer = await ask({ metrics, date_range: dateRangeOf(r), filters: toStatsFilters(state.filters) }, signal);
    const row = answer.results[0];
    return { values: Object.fromEntries(metrics.map((m, i) => [m, row ? (row.metrics[i] ?? null) : 0])), resolved: resolvedBy(r, answer.query?.date_range) };
  };
  const overTime = (r: Range, signal: AbortSignal): Promise<StatsAnswer> =>
    ask({ metrics: [state.metric], date_range: dateRangeOf(r), dimensions: [timeDimension(r)], filters: toStatsFilters(state.filters), include: { time_labels: true, partial_time_labels: true, present_index: true } }, signal);

  const drawChips = () =>
    chipsSlot.replaceChildren(
      state.filters.length
        ? filterChips(state.filters, (f) => {
            state.filters = f === 'all' ? [] : state.filters.filter((x) => x !== f);
            reload();
          })
        : '',
    );

  let lastTotals: { current: Values; previous?: Values } | undefined;
  const drawNumbers = () => {
    if (!lastTotals) return;
    numbersSlot.replaceChildren(
      numbersRow(lastTotals.current, lastTotals.previous, state.metric, (m) => {
        if (m === state.metric) return;
        state.metric = m;
        writeUrl();
        drawNumbers();
        void loadChart();
      }),
    );
  };

  const emptyState = () => {
    const origin = location.origin;
    const plausible = siteDomains.length
      ? [
          h('p', {}, "Or Plausible's tracker (npm @plausible-analytics/tracker), with its endpoint changed:"),
          h('pre', { class: 'snippet' }, `import { init } from '@plausible-analytics/tracker';\ninit({ domain: '${siteDomains[0]}', endpoint: '${origin}/api/event' });`),
        ]
      : [h('p', { class: 'muted' }, "Plausible's tracker sends no key: give the workspace your site's domain (Workspaces, Edit, Sites) to route its events here.")];
    return h(
      'div',
      { class: 'notice notice-info ov-empty', role: 'status' },
      h('strong', {}, 'No visits in this period yet.'),
      h('p', {}, "Point this service's script at your pages, with the workspace's public key, and their page views show here within seconds:"),
      h('pre', { class: 'snippet' }, `<script defer src="${origin}/script.js" data-key="PUBLIC_KEY"></script>`),
      ...plausible,
      h('p', { class: 'muted' }, state.period === 'today' ? 'Another period, above, may have visits already.' : "Today's visits show under Today: the last 7 and 30 days end yesterday, as Plausible's do.", state.period === 'today' ? null : ' ', state.period === 'today' ? null : showToday()),
    );
  };
  const showToday = () => {
    const button = h('button', { type: 'button', class: 'secondary small' }, 'Show today');
    button.addEventListener('click', () => {
      periodSelect.value = 'today';
      custom.hidden = true;
      state.period = 'today';
      reload();
    });
    return button;
  };

  /** The range asked, the days the API counted for it, and the period before: what the chart draws. */
  let ranges: { asked: Range; resolved: Range; previous: Range } | undefined;
  let chartAsked: AbortController | undefined;
  const loadChart = async () => {
    if (!ranges) return;
    chartAsked?.abort();
    const controller = (chartAsked = new AbortController());
    const { asked: r, resolved, previous } = ranges;
    chartSlot.setAttribute('aria-busy', 'true');
    try {
      const [now, before] = await Promise.all([overTime(r, controller.signal), overTime(previous, controller.signal)]);
      if (controller.signal.aborted || stopped) return;
      chartSlot.replaceChildren(overviewChart(state.metric, resolved, seriesOf(now, resolved), seriesOf(before, previous), notOverFrom(now, resolved)));
    } catch (err) {
      if (controller.signal.aborted || stopped) return;
      chartSlot.replaceChildren(notice('error', 'The chart could not be drawn', describeError(err)));
    } finally {
      if (!controller.signal.aborted) chartSlot.removeAttribute('aria-busy');
    }
  };

  const failed = (err: unknown) => {
    status.textContent = '';
    page.removeAttribute('aria-busy');
    numbersSlot.replaceChildren(notice('error', 'The numbers could not be read', describeError(err)));
  };

  const reload = () => {
    writeUrl();
    drawChips();
    asked?.abort();
    const controller = (asked = new AbortController());
    const gone = () => controller.signal.aborted || stopped;
    const r = range();
    rangeText.textContent = describeRange(r);
    status.textContent = 'Loading…';
    page.setAttribute('aria-busy', 'true');
    // Every question of the screen is asked at once, the numbers first, and each part is drawn
    // when its own answer comes. The period before is worked out from the days counted here
    // (UTC, as the API counts them), not from the API's answer, so it need not wait for it.
    ranges = { asked: r, resolved: r, previous: previousOf(state.period, r) };
    const numbers = Promise.all([totals(r, controller.signal), totals(ranges.previous, controller.signal)]);
    void loadChart();
    for (const p of panels) p.reload();
    numbers.then(async ([{ values: current, resolved }, { values: earlier }]) => {
      if (gone()) return;
      let before = earlier;
      if (resolved.from !== r.from || resolved.to !== r.to) {
        // The API counted other days (its clock passed midnight, say): the period before them is asked again.
        ranges = { asked: r, resolved, previous: previousOf(state.period, resolved) };
        rangeText.textContent = describeRange(resolved);
        void loadChart();
        try {
          before = (await totals(ranges.previous, controller.signal)).values;
        } catch (err) {
          if (!gone()) failed(err);
          return;
        }
        if (gone()) return;
      }
      lastTotals = { current, previous: before };
      drawNumbers();
      emptySlot.replaceChildren(!current.visitors && !current.pageviews && state.filters.length === 0 ? emptyState() : '');
      status.textContent = '';
      page.removeAttribute('aria-busy');
      page.dataset.loaded = `${resolved.from}/${resolved.to}/${filterParams(state.filters).join('&')}`;
    }, (err) => void (gone() || failed(err)));
  };

  /** A panel's rows as the Stats API is asked for them: ranked by the first number, the screen's filters held. */
  const panelQuery = (p: PanelRequest): Omit<StatsRequest, 'site_id'> => ({
    metrics: p.metrics,
    date_range: dateRangeOf(range()),
    dimensions: [p.dimension],
    filters: [...toStatsFilters(state.filters), ...(p.search ? [['contains', p.dimension, [p.search], { case_sensitive: false }] as StatsFilter] : [])],
    order_by: [[p.metrics[0]!, 'desc']],
    pagination: { limit: p.limit, ...(p.offset ? { offset: p.offset } : {}) },
    ...(p.totalRows ? { include: { total_rows: true } } : {}),
  });

  const pick = (dimension: Dimension, value: string) => {
    state.filters = withFilter(state.filters, { dimension, value });
    reload();
  };

  const start = () => {
    stopLive?.();
    const live = liveVisitors(state.site);
    stopLive = live.stop;
    liveSlot.replaceChildren(live.element);
    panels = PANELS.map((spec) =>
      panel(
        spec,
        chosenTabs.get(spec.id) ?? spec.tabs[0]!.dimension,
        (request, signal) => ask(panelQuery(request), signal),
        pick,
        (dimension) => chosenTabs.set(spec.id, dimension),
      ),
    );
    grid.replaceChildren(...panels.map((p) => p.element));
    reload();
  };

  periodSelect.addEventListener('change', () => {
    const next = periodSelect.value as PeriodId;
    custom.hidden = next !== 'custom';
    if (next === 'custom') {
      const r = range();
      fromInput.value = state.from ?? r.from;
      toInput.value = state.to ?? r.to;
      fromInput.focus();
      return;
    }
    state.period = next;
    reload();
  });
  apply.addEventListener('click', () => {
    if (!isDate(fromInput.value) || !isDate(toInput.value)) return void (status.textContent = 'Choose both days.');
    state.period = 'custom';
    state.from = fromInput.value;
    state.to = toInput.value;
    reload();
  });
  if (state.period === 'custom') {
    const r = range();
    fromInput.value = r.from;
    toInput.value = r.to;
  }

  // The workspace's sites, read again: they may have been set since signing in. Its events are
  // its site: without domains the Stats API is asked by the workspace's id.
  api<KeyIdentity>('GET', '/whoami').then(
    (identity) => {
      if (stopped) return;
      zoneSlot.replaceChildren(zoneNote(identity.workspace.timezone || 'UTC'));
      const sites = (siteDomains = identity.workspace.siteDomains ?? []);
      if (sites.length === 0) {
        state.site = identity.workspace.workspaceId;
        siteSlot.replaceChildren();
        start();
        return;
      }
      if (!sites.includes(state.site)) state.site = sites[0]!;
      const select = h('select', { class: 'ov-site-select', 'aria-label': 'Site' }, ...sites.map((s) => h('option', { value: s, selected: s === state.site }, s)));
      select.addEventListener('change', () => {
        state.site = select.value;
        state.filters = [];
        start();
      });
      siteSlot.replaceChildren(select);
      start();
    },
    (err) => {
      if (!stopped) body.replaceChildren(notice('error', 'The workspace could not be read', describeError(err)));
    },
  );

  return () => {
    stopped = true;
    asked?.abort();
    chartAsked?.abort();
    stopLive?.();
  };
}
