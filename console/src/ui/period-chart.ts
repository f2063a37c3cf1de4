import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { h } from '../dom';

/**
 * A chart of values per period (the insights' trends, stickiness, lifecycle and the retention
 * curve) with uPlot: lines, areas, grouped bars, or stacked bars (negative values stacked below
 * the axis). The x axis is the periods in order (their labels as given), so a comparison period
 * with labels of its own is drawn over the same places. Value axes start at zero. Periods not over
 * yet (`incompleteFrom`) are drawn apart: a line's segment into them dashed, their bars faint.
 */
export const PALETTE = ['#4f7df3', '#f59e0b', '#10b981', '#ef4444', '#8b5cf6', '#06b6d4', '#ec4899', '#84cc16'];

export interface PeriodSeries {
  label: string;
  values: Array<number | null>;
  colour: string;
  /** Drawn dashed (a comparison period). */
  dashed?: boolean;
  /** The index of its first period not over (today's): counted so far, drawn apart. */
  incompleteFrom?: number;
}

export type PeriodChartMode = 'line' | 'area' | 'bar' | 'stacked';

export interface PeriodChartOptions {
  labels: readonly string[];
  series: readonly PeriodSeries[];
  mode: PeriodChartMode;
  /** What the chart shows, for screen readers. */
  title: string;
  height?: number;
  /** How a label reads under the axis (the legend shows it whole). */
  tick?: (label: string) => string;
  format?: (value: number) => string;
  /** How the value axis reads (compact numbers by default). */
  axis?: (value: number) => string;
  /** What the x axis is, in the legend. */
  xName?: string;
  /**
   * Called with the series and period a click (or Enter, the plot focused) lands on; the plot is
   * then focusable, arrows moving between periods (left, right) and series (up, down).
   */
  onPick?: (series: number, index: number) => void;
}

const compact = new Intl.NumberFormat(undefined, { notation: 'compact', maximumFractionDigits: 1 });
const exact = new Intl.NumberFormat(undefined, { maximumFractionDigits: 2 });

function cssVar(name: string, fallback: string): string {
  return getComputedStyle(document.documentElement).getPropertyValue(name).trim() || fallback;
}

/** Bottom and top of each series' bar when stacked: positive values pile up, negative ones down. */
function stacks(series: readonly PeriodSeries[], n: number): Array<{ y0: number[]; y1: number[] }> {
  const up = new Array<number>(n).fill(0);
  const down = new Array<number>(n).fill(0);
  return series.map((s) => {
    const y0: number[] = [];
    const y1: number[] = [];
    for (let i = 0; i < n; i++) {
      const v = s.values[i] ?? 0;
      const base = v < 0 ? down : up;
      y0.push(base[i]!);
      base[i]! += v;
      y1.push(base[i]!);
    }
    return { y0, y1 };
  });
}

export function periodChart(options: PeriodChartOptions): HTMLElement {
  const { labels, series, mode } = options;
  const height = options.height ?? 320;
  const format = options.format ?? ((v: number) => exact.format(v));
  const tick = options.tick ?? ((l: string) => l);
  const n = labels.length;
  const xs = labels.map((_, i) => i);
  const box = h('div', { class: 'period-chart', 'data-mode': mode, role: 'img', 'aria-label': options.title });

  const stacked = mode === 'stacked' ? stacks(series, n) : [];
  const all = mode === 'stacked' ? stacked.flatMap((s) => [...s.y0, ...s.y1]) : series.flatMap((s) => s.values.filter((v): v is number => v !== null));
  let lo = Math.min(0, ...all);
  let hi = Math.max(0, ...all);
  if (lo === hi) hi = 1;
  hi = hi > 0 ? hi * 1.08 : 0;
  lo = lo < 0 ? lo * 1.08 : 0;

  const integers = all.every((v) => Number.isInteger(v));
  const bars = mode === 'bar' || mode === 'stacked';
  const group = 0.8;
  const width = mode === 'bar' ? group / Math.max(1, series.length) : 0.7;
  const facet = (values: (u: uPlot, s: number) => number[]) => ({ unit: 1 as uPlot.Series.BarsPathBuilderFacetUnit, values: (u: uPlot, s: number) => values(u, s) });
  const text = cssVar('--muted', '#888');
  const grid = { stroke: 'rgba(128,128,128,0.16)', width: 1 };

  // A line's periods not over are a dashed tail of their own, from its last whole point, after the
  // series (without legend rows): the series' own line stops at that point.
  const cut = (s: PeriodSeries) => (!bars && s.incompleteFrom !== undefined && s.incompleteFrom < s.values.length ? s.incompleteFrom : undefined);
  const tails = series.filter((s) => cut(s) !== undefined);
  const shown = (value: number | null | undefined) => (value === null || value === undefined ? '—' : format(value));
  const uSeries: uPlot.Series[] = [
    { label: options.xName ?? 'Period', value: (_u, v) => (v === null || v === undefined ? '—' : (labels[v] ?? '')) },
    ...series.map((s, si): uPlot.Series => {
      const common = { label: s.label, stroke: s.colour, value: (_u: uPlot, _v: number | null, _s: number, i: number | null) => shown(i === null ? null : s.values[i]), dash: s.dashed ? [6, 4] : undefined };
      if (!bars) {
        return { ...common, width: 2, fill: mode === 'area' ? `${s.colour}33` : undefined, points: { show: n <= 40, size: 5 } };
      }
      const fill = s.dashed ? `${s.colour}40` : `${s.colour}d9`;
      const disp: uPlot.Series.BarsPathBuilderDisplay = {
        ...(mode === 'stacked'
          ? { y0: facet(() => stacked[si]!.y0), y1: facet(() => stacked[si]!.y1), x0: facet(() => xs.map((x) => x - width / 2)), size: facet(() => xs.map(() => width)) }
          : { x0: facet(() => xs.map((x) => x - group / 2 + si * width)), size: facet(() => xs.map(() => width * 0.92)) }),
        // Bars of periods not over are faint.
        ...(s.incompleteFrom === undefined ? {} : { fill: { unit: 3, values: () => xs.map((x) => (x >= s.incompleteFrom! ? `${s.colour}4d` : fill)) } }),
      };
      return { ...common, width: s.dashed ? 1.5 : 0, fill, paths: uPlot.paths.bars!({ disp }), points: { show: false } };
    }),
    ...tails.map((s): uPlot.Series => ({ label: `${s.label} (not over)`, stroke: s.colour, width: 2, dash: [4, 4], fill: mode === 'area' ? `${s.colour}1a` : undefined, points: { show: n <= 40, size: 5, fill: 'transparent' } })),
  ];
  const data = [
    xs,
    ...series.map((s) => s.values.map((v, i) => (cut(s) !== undefined && i >= cut(s)! ? null : (v ?? null)))),
    ...tails.map((s) => s.values.map((v, i) => (i >= cut(s)! - 1 ? (v ?? null) : null))),
  ] as uPlot.AlignedData;
  const uOptions: uPlot.Options = {
    width: 600,
    height,
    series: uSeries,
    scales: {
      x: { time: false, range: () => (bars || n === 1 ? [-0.5, n - 0.5] : [0, Math.max(1, n - 1)]) },
      y: { range: () => [lo, hi] },
    },
    axes: [
      {
        stroke: text,
        grid: { show: false },
        ticks: { stroke: 'rgba(128,128,128,0.3)' },
        incrs: [1, 2, 3, 5, 7, 10, 14, 20, 30, 50, 100, 200, 500],
        space: 56,
        values: (_u, ticks) => ticks.map((t) => (Number.isInteger(t) && labels[t] !== undefined ? tick(labels[t]!) : '')),
      },
      {
        stroke: text,
        grid,
        ticks: { show: false },
        values: (_u, ticks) => ticks.map(options.axis ?? ((t) => compact.format(t))),
        size: 52,
        // Counts are whole: no tick between two of them.
        ...(integers ? { incrs: [1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1e3, 2e3, 2.5e3, 5e3, 1e4, 2e4, 5e4, 1e5, 2e5, 5e5, 1e6, 2e6, 5e6, 1e7, 1e8, 1e9, 1e10, 1e12] } : {}),
      },
    ],
    legend: { live: true },
    cursor: { points: { show: !bars }, drag: { x: false, y: false } },
  };

  let chart: uPlot | undefined;
  const ready: Array<(u: uPlot) => void> = [];
  // The tails' legend rows go: the series' own rows read every period's value, today's too.
  if (tails.length > 0) ready.push((u) => u.root.querySelectorAll('.u-legend .u-series').forEach((row, i) => i > series.length && row.remove()));
  if (options.onPick) ready.push((u) => pickable(u, mode, series, group, width, stacked, options.onPick!));
  if (ready.length > 0) uOptions.hooks = { ready };
  if (series.some((s) => s.incompleteFrom !== undefined && s.incompleteFrom < n)) box.dataset.incompleteFrom = String(Math.min(...series.map((s) => s.incompleteFrom ?? n)));
  const observer = new ResizeObserver(([entry]) => {
    if (!box.isConnected && chart) {
      observer.disconnect();
      chart.destroy();
      return;
    }
    const w = Math.floor(entry!.contentRect.width);
    if (w === 0) return;
    if (!chart) chart = new uPlot({ ...uOptions, width: w }, data, box);
    else chart.setSize({ width: w, height });
  });
  observer.observe(box);
  return box;
}

/** The series at the cursor: the bar under it, else the nearest line to it. */
function seriesAt(u: uPlot, mode: PeriodChartMode, series: readonly PeriodSeries[], group: number, width: number, stacked: ReadonlyArray<{ y0: number[]; y1: number[] }>, index: number): number {
  const count = series.length;
  if (mode === 'bar') return Math.min(count - 1, Math.max(0, Math.floor((u.posToVal(u.cursor.left!, 'x') - index + group / 2) / width)));
  const y = u.posToVal(u.cursor.top!, 'y');
  if (mode === 'stacked') {
    const hit = stacked.findIndex((s) => Math.min(s.y0[index]!, s.y1[index]!) <= y && y <= Math.max(s.y0[index]!, s.y1[index]!) && s.y0[index] !== s.y1[index]);
    if (hit >= 0) return hit;
  }
  let best = 0;
  for (let s = 1; s < count; s++) {
    const v = series[s]!.values[index] ?? 0;
    const b = series[best]!.values[index] ?? 0;
    if (Math.abs(v - y) < Math.abs(b - y)) best = s;
  }
  return best;
}

/** Clicks and keys on the plot pick a point; the focused series is the keyboard's. */
function pickable(u: uPlot, mode: PeriodChartMode, all: readonly PeriodSeries[], group: number, width: number, stacked: ReadonlyArray<{ y0: number[]; y1: number[] }>, pick: (series: number, index: number) => void): void {
  const count = all.length;
  const over = u.over;
  over.tabIndex = 0;
  over.setAttribute('role', 'button');
  over.setAttribute('aria-label', 'List the persons behind a point: arrows choose the period and series, Enter lists them');
  over.classList.add('pickable');
  let index = 0;
  let series = 0;
  over.addEventListener('click', () => {
    const at = u.cursor.idx;
    if (at === null || at === undefined) return;
    pick(seriesAt(u, mode, all, group, width, stacked, at), at);
  });
  over.addEventListener('keydown', (e) => {
    const n = u.data[0].length;
    if (e.key === 'Enter' || e.key === ' ') return void (e.preventDefault(), pick(series, index));
    if (e.key === 'ArrowLeft' || e.key === 'ArrowRight') index = Math.min(n - 1, Math.max(0, index + (e.key === 'ArrowLeft' ? -1 : 1)));
    else if (e.key === 'ArrowUp' || e.key === 'ArrowDown') series = Math.min(count - 1, Math.max(0, series + (e.key === 'ArrowUp' ? -1 : 1)));
    else return;
    e.preventDefault();
    const value = all[series]!.values[index] ?? 0;
    u.setCursor({ left: u.valToPos(index, 'x'), top: u.valToPos(value, 'y') });
  });
}
