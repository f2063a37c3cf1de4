import { h } from '../../dom';
import { periodTick } from '../../ui/format';
import { notice } from '../../ui/notice';
import { PALETTE, periodChart } from '../../ui/period-chart';
import { field, intervalField, numberInput, section, select, type FormContext } from './fields';
import { formatDuration, formatNumber, formatPercent } from './format';
import { FUNNEL_VIEWS, incompleteIndex, type FunnelTimeResult, type FunnelTrendResult, type FunnelView, type FunnelsQuery, type Interval } from './types';

/**
 * A funnel's other views than its steps (docs/api/insights.md#other-views-of-a-funnel): the view
 * switch of the funnel form, conversion over time as a line of the conversion rate per period, and
 * time to convert as bars of the histogram, both drawn by the period chart (uPlot). The view is a
 * field of the query, so the URL and a saved insight keep it.
 */

export const VIEW_LABELS: Record<FunnelView, string> = { steps: 'Steps', trends: 'Conversion over time', time_to_convert: 'Time to convert' };

/** The fields of each view but its own, removed when the view changes (the service refuses them). */
const VIEW_FIELDS = { interval: 'trends', binCount: 'time_to_convert' } as const;

/** The buttons choosing the view; a view other than steps has one series, so no breakdown. */
export function viewSwitch(q: FunnelsQuery, ctx: FormContext): HTMLElement {
  const current = q.funnelVizType ?? 'steps';
  const buttons = FUNNEL_VIEWS.map((view) => {
    const b = h('button', { type: 'button', class: 'segment', 'aria-pressed': String(view === current), 'data-view': view }, VIEW_LABELS[view]);
    b.addEventListener('click', () => {
      if (view === current) return;
      if (view === 'steps') delete q.funnelVizType;
      else q.funnelVizType = view;
      for (const [key, owner] of Object.entries(VIEW_FIELDS)) if (owner !== view) delete q[key as keyof typeof VIEW_FIELDS];
      if (view === 'steps') (delete q.funnelFromStep, delete q.funnelToStep);
      else delete q.breakdown;
      ctx.changed(true);
    });
    return b;
  });
  return h('div', { class: 'segments funnel-views', role: 'group', 'aria-label': 'Funnel view' }, ...buttons);
}

/** The fields of the chosen view: the steps between which it counts, and its interval or bins. */
export function viewFields(q: FunnelsQuery, ctx: FormContext): HTMLElement | null {
  const view = q.funnelVizType ?? 'steps';
  if (view === 'steps') return null;
  const last = q.steps.length - 1;
  const steps = q.steps.map((s, i) => [String(i), `${i + 1}. ${s.event || '…'}`] as const);
  const from = select(String(Math.min(q.funnelFromStep ?? 0, last - 1)), steps.slice(0, -1), (v) => {
    q.funnelFromStep = Number(v) || undefined;
    if ((q.funnelToStep ?? last) <= Number(v)) q.funnelToStep = Number(v) + 1;
    ctx.changed(true);
  }, { 'aria-label': 'From step' });
  const to = select(String(Math.min(q.funnelToStep ?? last, last)), steps.slice(1), (v) => {
    q.funnelToStep = Number(v) === last ? undefined : Number(v);
    if ((q.funnelFromStep ?? 0) >= Number(v)) q.funnelFromStep = Number(v) - 1 || undefined;
    ctx.changed(true);
  }, { 'aria-label': 'To step' });
  const own =
    view === 'trends'
      ? intervalField(q, ctx)
      : field('Bins', numberInput(q.binCount, 1, 90, (v) => {
          q.binCount = v;
          ctx.changed();
        }, { placeholder: 'auto' }));
  return h('div', { class: 'inline-fields' }, field('From step', from), field('To step', to), own);
}

/** Conversion over time: the conversion rate of each period, a line (no point where nobody entered). */
export function conversionChart(result: FunnelTrendResult | undefined, interval: Interval | undefined, incompleteFrom: string | undefined, height?: number): HTMLElement {
  if (!result || result.entered.every((n) => n === 0)) return notice('empty', 'Nobody entered this funnel', 'No one did the first step in this range.');
  return periodChart({
    labels: result.labels,
    series: [{ label: 'Conversion', values: result.conversionRate.map((r, i) => (result.entered[i] === 0 ? null : r * 100)), colour: PALETTE[0]!, incompleteFrom: incompleteIndex(result.labels, incompleteFrom) }],
    mode: 'line',
    title: 'Funnel conversion over time',
    tick: (l) => periodTick(l, interval),
    format: (v) => `${v.toFixed(1)}%`,
    axis: (v) => `${v}%`,
    height,
  });
}

/** The periods of conversion over time as a table: entered, completed, conversion. */
export function conversionTable(result: FunnelTrendResult, interval: Interval | undefined, noun: string): HTMLElement {
  const th = (text: string, num = false) => h('th', { scope: 'col', ...(num ? { class: 'num' } : {}) }, text);
  return h(
    'table',
    { class: 'data-table funnel-trends-table' },
    h('thead', {}, h('tr', {}, th('Period'), h('th', { scope: 'col', class: 'num', title: `${noun} who entered` }, 'Entered'), th('Completed', true), th('Conversion', true))),
    h(
      'tbody',
      {},
      ...result.labels.map((label, i) =>
        h('tr', {}, h('td', { title: label }, periodTick(label, interval)), h('td', { class: 'num' }, formatNumber(result.entered[i]!)), h('td', { class: 'num' }, formatNumber(result.completed[i]!)), h('td', { class: 'num' }, result.entered[i] === 0 ? '—' : formatPercent(result.conversionRate[i]!))),
      ),
    ),
  );
}

/** Time to convert: a bar per bin (its start and end under it), the average and median above. */
export function timeToConvertChart(result: FunnelTimeResult | undefined, height?: number): HTMLElement {
  if (!result || result.conversions === 0) return notice('empty', 'Nobody converted', 'No one reached the last step in this range.');
  const width = result.binWidthSeconds ?? 0;
  const labels = result.bins.map((b) => `${formatDuration(b.fromSeconds)}–${formatDuration(b.fromSeconds + width)}`);
  const chart = periodChart({
    labels,
    series: [{ label: 'Conversions', values: result.bins.map((b) => b.count), colour: PALETTE[0]! }],
    mode: 'bar',
    title: `Time to convert: ${result.conversions} conversions`,
    xName: 'Time to convert',
    // Under the axis a bin's start, which fits a phone; the legend shows its whole span.
    tick: (label) => label.split('–')[0]!,
    height,
  });
  const summary = h(
    'p',
    { class: 'funnel-time-summary' },
    `${formatNumber(result.conversions)} converted · average ${formatDuration(result.averageSeconds)} · median ${formatDuration(result.medianSeconds)}`,
  );
  return h('div', { class: 'funnel-time-to-convert' }, summary, chart);
}

/** The conversion over time's legend line for the builder: the whole range's rate. */
export function conversionSummary(result: FunnelTrendResult): HTMLElement {
  const entered = result.entered.reduce((a, b) => a + b, 0);
  const completed = result.completed.reduce((a, b) => a + b, 0);
  return h('p', { class: 'funnel-time-summary' }, `${formatNumber(completed)} of ${formatNumber(entered)} entries converted over the range (${formatPercent(entered === 0 ? 0 : completed / entered)})`);
}

export const viewSection = (q: FunnelsQuery, ctx: FormContext) => section('View', viewSwitch(q, ctx), viewFields(q, ctx));
