import { h } from '../../dom';
import type { JsonObject, Row, SavedInsight, TileAnswer } from '../../types';
import { resultChart } from '../../ui/chart';
import { planChart } from '../../ui/chart-data';
import { cellText, formatCount, formatDate, periodTick } from '../../ui/format';
import { notice } from '../../ui/notice';
import { PALETTE, periodChart, type PeriodChartMode } from '../../ui/period-chart';
import { sankeyDiagram } from '../../ui/sankey';
import { eventOf, stepHeading, stepOf } from '../insights/paths';
import { notOver } from '../insights/retention';
import { conversionChart, timeToConvertChart } from '../insights/funnel-views';
import { incompleteIndex, type FunnelTimeResult, type FunnelTrendResult, type Incomplete, type Interval } from '../insights/types';
import { LIFECYCLE_COLOURS } from '../insights/stickiness';

/**
 * What a dashboard tile draws from its answer in `GET /dashboards/{id}/results`: trends-like
 * answers as the console's uPlot charts (lifecycle as stacked bars, as its builder draws it),
 * funnels as step bars, retention as a heat table, paths as a Sankey diagram, SQL as a number, a
 * chart or a table, and a failed tile its problem.
 * The answers' shapes are those of docs/api/insights.md; only what is drawn is read.
 */

interface Seriesish {
  label: string;
  breakdownValue?: string;
  compare?: 'current' | 'previous';
  labels: string[];
  data: number[];
  total?: number;
}
interface FunnelStep {
  event: string;
  count: number;
  conversionRate: number;
  stepConversionRate: number;
  medianSeconds: number | null;
}
interface RetentionRow {
  breakdownValue?: string;
  cohort: string;
  size: number;
  values: number[];
}
interface Edge {
  source: string;
  target: string;
  value: number;
}

/** Rows of a table drawn in a tile at most; the rest are counted. */
const MAX_TABLE_ROWS = 100;
/** Values of one SQL row shown as big numbers at most (more make a table). */
const MAX_NUMBERS = 4;

const resultsOf = <T>(result: unknown): T[] => {
  const list = (result as { results?: unknown } | undefined)?.results;
  return Array.isArray(list) ? (list as T[]) : [];
};

const seriesName = (s: Seriesish) => `${s.label}${s.breakdownValue !== undefined ? ` · ${s.breakdownValue || '(none)'}` : ''}${s.compare === 'previous' ? ' (previous)' : ''}`;

function numbers(items: Array<{ label: string; value: number }>): HTMLElement {
  return h(
    'div',
    { class: 'tile-numbers' },
    ...items.map(({ label, value }) => h('div', { class: 'tile-number' }, h('strong', { class: 'tile-number-value', 'data-value': value }, formatCount(value)), h('span', { class: 'muted' }, label))),
  );
}

function smallTable(columns: readonly string[], rows: readonly Row[], format: (column: string, value: unknown) => string = (_c, v) => cellText(v)): HTMLElement {
  const shown = rows.slice(0, MAX_TABLE_ROWS);
  return h(
    'div',
    { class: 'tile-table' },
    h(
      'table',
      { class: 'data-table compact' },
      h('thead', {}, h('tr', {}, ...columns.map((c) => h('th', { scope: 'col' }, c)))),
      h('tbody', {}, ...shown.map((r) => h('tr', {}, ...columns.map((c) => h('td', {}, format(c, r[c])))))),
    ),
    rows.length > shown.length ? h('p', { class: 'muted' }, `${formatCount(rows.length - shown.length)} more rows`) : null,
  );
}

/** Series over the same periods as rows of a chart: one column of periods, one per series. */
function seriesRows(series: readonly Seriesish[], periodColumn: string, periodText: (label: string) => string = (l) => l): { columns: string[]; rows: Row[] } {
  const names = series.map(seriesName);
  const periods = series[0]?.labels ?? [];
  const rows = periods.map((label, i) => {
    const row: Row = { [periodColumn]: periodText(label) };
    series.forEach((s, j) => (row[names[j]!] = s.data[i] ?? null));
    return row;
  });
  return { columns: [periodColumn, ...names], rows };
}

/** Chart height in a tile: the builders' charts are taller. */
const TILE_CHART_HEIGHT = 220;
/** A period chart's plot in a tile: its legend (the hovered period's values) fits under it. */
const TILE_PERIOD_HEIGHT = 185;

/** The query's interval (periods' labels read as the builders write them), a day when it names none. */
function intervalOf(query: JsonObject): Interval {
  const interval = query.interval ?? query.period;
  return interval === 'hour' || interval === 'week' || interval === 'month' ? interval : 'day';
}

/** The index in `labels` of the answer's first period not over when asked (docs/api/insights.md#incomplete-periods). */
const incompleteIn = (labels: readonly string[], result: unknown) => incompleteIndex(labels, (result as Incomplete | undefined)?.incompleteFrom);

const TREND_MODES: readonly PeriodChartMode[] = ['line', 'area', 'bar', 'stacked'];

function trends(result: unknown, display: JsonObject | undefined, query: JsonObject): HTMLElement {
  const series = resultsOf<Seriesish>(result);
  if (series.length === 0) return notice('empty', 'No data in this range');
  const chart = display?.chart ?? display?.type;
  const totals = () => series.map((s) => ({ label: seriesName(s), value: s.total ?? s.data.reduce((a, b) => a + b, 0) }));
  if (chart === 'number' || (series.length <= MAX_NUMBERS && (series[0]?.labels.length ?? 0) <= 1)) return numbers(totals());
  if (chart === 'table') return smallTable(['series', 'total'], totals().map((t) => ({ series: t.label, total: t.value })));
  // As the builder draws it: a comparison's previous period dashed over the current one (its
  // periods are over), the current period not over (today's) drawn apart.
  const mode = TREND_MODES.find((m) => m === chart) ?? 'line';
  const shown = series.filter((s) => mode !== 'stacked' || s.compare !== 'previous');
  const labels = shown.find((s) => s.compare !== 'previous')?.labels ?? shown[0]!.labels;
  return periodChart({
    labels,
    series: shown.map((s, i) => ({
      label: seriesName(s),
      values: s.data,
      colour: PALETTE[i % PALETTE.length]!,
      dashed: s.compare === 'previous',
      incompleteFrom: s.compare === 'previous' ? undefined : incompleteIn(s.labels, result),
    })),
    mode,
    title: `Trends: ${shown.map(seriesName).join(', ')}`,
    tick: (l) => periodTick(l, intervalOf(query)),
    height: TILE_PERIOD_HEIGHT,
  });
}

function stickiness(result: unknown, query: JsonObject): HTMLElement {
  const series = resultsOf<Seriesish>(result);
  if (series.length === 0) return notice('empty', 'No data in this range');
  const unit = typeof query.interval === 'string' ? query.interval : 'day';
  const { columns, rows } = seriesRows(series, `${unit}s active`, (n) => `${n} ${unit}${n === '1' ? '' : 's'}`);
  return resultChart(columns, rows, { fill: true });
}

function lifecycle(result: unknown, query: JsonObject): HTMLElement {
  const series = resultsOf<Seriesish>(result);
  if (series.length === 0) return notice('empty', 'No data in this range');
  return periodChart({
    labels: series[0]!.labels,
    series: series.map((s) => ({ label: s.label, values: s.data, colour: LIFECYCLE_COLOURS[s.label as keyof typeof LIFECYCLE_COLOURS], incompleteFrom: incompleteIn(s.labels, result) })),
    mode: 'stacked',
    title: 'Lifecycle: new, returning and resurrecting above the axis, dormant below, per period',
    tick: (l) => periodTick(l, intervalOf(query)),
    height: TILE_PERIOD_HEIGHT,
  });
}

const percent = (fraction: number) => `${(fraction * 100).toFixed(1)}%`;

function duration(seconds: number): string {
  if (seconds < 60) return `${Math.round(seconds)} s`;
  if (seconds < 3600) return `${Math.round(seconds / 60)} min`;
  if (seconds < 86_400) return `${(seconds / 3600).toFixed(1)} h`;
  return `${(seconds / 86_400).toFixed(1)} days`;
}

function funnels(result: unknown): HTMLElement {
  const groups = resultsOf<{ breakdownValue?: string; steps: FunnelStep[] }>(result);
  if (groups.length === 0) return notice('empty', 'No data in this range');
  return h(
    'div',
    { class: 'funnel-bars' },
    ...groups.map((g) =>
      h(
        'section',
        { class: 'funnel-group' },
        g.breakdownValue !== undefined ? h('h3', {}, g.breakdownValue || '(none)') : null,
        ...g.steps.map((step, i) => {
          const bar = h('span', { class: 'funnel-fill' });
          bar.style.width = `${Math.max(0, Math.min(1, step.conversionRate)) * 100}%`;
          return h(
            'div',
            { class: 'funnel-step', 'data-step': i + 1, 'data-count': step.count },
            h('div', { class: 'funnel-label' }, h('span', {}, `${i + 1}. ${step.event}`), h('strong', {}, `${formatCount(step.count)} · ${percent(step.conversionRate)}`)),
            h('div', { class: 'funnel-track', role: 'img', 'aria-label': `${percent(step.conversionRate)} of the first step` }, bar),
            i > 0
              ? h('div', { class: 'funnel-note muted' }, `${percent(1 - step.stepConversionRate)} dropped off${step.medianSeconds !== null ? ` · median ${duration(step.medianSeconds)}` : ''}`)
              : null,
          );
        }),
      ),
    ),
  );
}

function retention(result: unknown, query: JsonObject): HTMLElement {
  const rows = resultsOf<RetentionRow>(result);
  if (rows.length === 0) return notice('empty', 'No data in this range');
  const periods = Math.max(...rows.map((r) => r.values.length));
  const broken = rows.some((r) => r.breakdownValue !== undefined);
  // A cohort's period k is the period k after its own: not over from the answer's incompleteFrom.
  const cohorts = [...new Set(rows.map((r) => r.cohort))];
  const cut = incompleteIn(cohorts, result);
  return h(
    'div',
    { class: 'tile-table' },
    h(
      'table',
      { class: 'data-table compact retention' },
      h(
        'thead',
        {},
        h('tr', {}, broken ? h('th', { scope: 'col' }, 'breakdown') : null, h('th', { scope: 'col' }, 'cohort'), h('th', { scope: 'col' }, 'size'), ...Array.from({ length: periods }, (_, i) => h('th', { scope: 'col' }, String(i)))),
      ),
      h(
        'tbody',
        {},
        ...rows.map((r) =>
          h(
            'tr',
            {},
            broken ? h('td', {}, r.breakdownValue || '(none)') : null,
            h('td', { title: formatDate(r.cohort) }, periodTick(r.cohort, intervalOf(query))),
            h('td', { 'data-value': r.size }, formatCount(r.size)),
            ...r.values.map((v, k) => {
              const share = r.size > 0 ? v / r.size : 0;
              const open = notOver(cohorts.indexOf(r.cohort), k, cut);
              const title = `${formatCount(v)} of ${formatCount(r.size)}${open ? ': not over, counted so far' : ''}`;
              const cell = h('td', { class: `heat${open ? ' incomplete' : ''}`, title, 'data-value': v }, r.size > 0 ? `${Math.round(share * 100)}%` : '');
              cell.style.backgroundColor = `color-mix(in srgb, var(--accent) ${Math.round(share * 70)}%, transparent)`;
              return cell;
            }),
          ),
        ),
      ),
    ),
  );
}

/** Edges of a paths tile drawn at most, the largest: more make its nodes too thin to label at a tile's height. */
const TILE_PATH_EDGES = 8;

function paths(result: unknown): HTMLElement {
  const edges = resultsOf<Edge>(result);
  if (edges.length === 0) return notice('empty', 'No paths in this range');
  const largest = edges.toSorted((a, b) => b.value - a.value).slice(0, TILE_PATH_EDGES);
  const title = largest.length < edges.length ? `Paths: the ${largest.length} largest of ${edges.length} edges` : `Paths: ${edges.length} edges`;
  return sankeyDiagram(largest, { title, label: eventOf, column: (n) => stepOf(n) - 1, columnLabel: stepHeading, format: formatCount, height: TILE_CHART_HEIGHT, compact: true });
}

/** A funnel as its saved view draws it: its steps, its conversion over time or its time to convert. */
function funnelTile(result: unknown, query: JsonObject): HTMLElement {
  if (query.funnelVizType === 'trends') return conversionChart(resultsOf<FunnelTrendResult>(result)[0], query.interval as Interval | undefined, (result as Incomplete | undefined)?.incompleteFrom, TILE_PERIOD_HEIGHT);
  if (query.funnelVizType === 'time_to_convert') return timeToConvertChart(resultsOf<FunnelTimeResult>(result)[0], TILE_PERIOD_HEIGHT - 24);
  return funnels(result);
}

function sql(result: unknown): HTMLElement {
  const rows = resultsOf<Row>(result);
  if (rows.length === 0) return notice('empty', 'The statement returned no rows');
  const columns = Object.keys(rows[0]!);
  const values = columns.map((c) => ({ label: c, value: Number(rows[0]![c]) }));
  if (rows.length === 1 && columns.length <= MAX_NUMBERS && values.every((v) => Number.isFinite(v.value) && typeof rows[0]![v.label] !== 'boolean')) return numbers(values);
  if (planChart(columns, rows).kind === 'line') return resultChart(columns, rows, { fill: true });
  return smallTable(columns, rows);
}

/** A tile's body for its answer; `insight` is its saved insight (undefined once deleted). */
export function tileBody(answer: TileAnswer | undefined, insight: SavedInsight | undefined): HTMLElement {
  if (!answer) return h('p', { class: 'muted tile-loading' }, 'Loading…');
  if (answer.error) {
    const deleted = answer.error.status === 404 && !answer.kind;
    return notice('error', deleted ? 'Its saved insight was deleted' : answer.error.title, deleted ? 'Remove this tile.' : answer.error.detail);
  }
  const query = (insight?.query ?? {}) as JsonObject;
  switch (answer.kind) {
    case 'trends':
      return trends(answer.result, insight?.display, query);
    case 'stickiness':
      return stickiness(answer.result, query);
    case 'lifecycle':
      return lifecycle(answer.result, query);
    case 'funnels':
      return funnelTile(answer.result, query);
    case 'retention':
      return retention(answer.result, query);
    case 'paths':
      return paths(answer.result);
    case 'sql':
      return sql(answer.result);
    default:
      return notice('error', 'Unknown kind', `This console does not draw ${answer.kind ?? 'this tile'}.`);
  }
}
