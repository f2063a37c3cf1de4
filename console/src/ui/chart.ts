import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { h } from '../dom';
import type { Row } from '../types';
import { planChart } from './chart-data';
import { periodTick } from './format';
import { notice } from './notice';

/** Series colours, readable on light and dark backgrounds. */
const COLOURS = ['#3b82f6', '#f59e0b', '#10b981', '#ef4444', '#8b5cf6', '#06b6d4', '#ec4899', '#84cc16'];
const CHART_HEIGHT = 320;
/** A filling chart's canvas is never lower than this (a tile one row high scrolls). */
const MIN_FILL_HEIGHT = 60;

function axisColour(): string {
  return getComputedStyle(document.documentElement).getPropertyValue('--muted').trim() || '#888';
}

export interface ChartOptions {
  /** Take the height of the box (a dashboard tile sizes it) instead of a fixed one. */
  fill?: boolean;
  /** Start the value axis of a line chart at zero too (counts); bars always start there. */
  zero?: boolean;
}

/**
 * The value axis's range: bars (and counts, with `zero`) start at zero, or end there when every
 * value is negative, so that bar lengths compare; otherwise uPlot's own rounded range.
 */
function valueRange(fromZero: boolean): uPlot.Range.Function {
  return (_u, min, max) => {
    if (!fromZero || min === null || max === null) return uPlot.rangeNum(min ?? 0, max ?? 1, 0.1, true);
    // All zeros: a unit range, not an empty one (which draws no axis).
    if (min === 0 && max === 0) return [0, 1];
    const [low, high] = uPlot.rangeNum(Math.min(0, min), Math.max(0, max), 0.1, true);
    return [min >= 0 ? 0 : low, max <= 0 ? 0 : high];
  };
}

/** A chart of a query's result (see planChart), sized to its container and redrawn when that resizes. */
export function resultChart(columns: readonly string[], rows: readonly Row[], chartOptions: ChartOptions = {}): HTMLElement {
  const plan = planChart(columns, rows);
  if (plan.kind === 'none') return notice('empty', plan.reason);
  const box = h('div', { class: `chart${chartOptions.fill ? ' chart-fill' : ''}`, 'data-kind': plan.kind });
  const stroke = axisColour();
  const grid = { stroke: 'rgba(128,128,128,0.15)' };
  // Times as the rest of the console writes dates (periodTick), in UTC as the table shows them.
  const timeTicks = (_u: uPlot, ticks: number[], _axis: number, _space: number, step: number) =>
    ticks.map((t) => {
      const iso = new Date(t * 1000).toISOString();
      return step < 86_400 ? periodTick(iso.slice(0, 16), 'hour') : periodTick(iso.slice(0, 10));
    });
  const axes: uPlot.Axis[] = [
    { stroke, grid, values: plan.kind === 'bars' ? (_u: uPlot, ticks: number[]) => ticks.map((t) => plan.labels[t] ?? '') : timeTicks },
    { stroke, grid },
  ];
  const bars = uPlot.paths.bars!({ size: [0.8, 60] });
  const series: uPlot.Series[] = [
    { label: plan.x },
    ...plan.series.map((s, i) => {
      const colour = COLOURS[i % COLOURS.length]!;
      return plan.kind === 'bars'
        ? { label: s.name, stroke: colour, fill: `${colour}cc`, paths: bars, points: { show: false } }
        : { label: s.name, stroke: colour, width: 2, points: { show: plan.xs.length < 60 } };
    }),
  ];
  const xs = plan.kind === 'line' ? plan.xs : plan.labels.map((_, i) => i);
  const data = [xs, ...plan.series.map((s) => s.values)] as uPlot.AlignedData;
  const options: uPlot.Options = {
    width: 600,
    height: CHART_HEIGHT,
    series,
    axes,
    scales: {
      x: plan.kind === 'line' ? { time: true } : { time: false, range: (_u, min, max) => [min - 0.5, max + 0.5] },
      y: { range: valueRange(plan.kind === 'bars' || chartOptions.zero === true) },
    },
    // The value axis's lower end, for the browser test (bars must start at zero).
    hooks: { setScale: [(u, key) => void (key === 'y' && (box.dataset.yMin = String(u.scales.y!.min)))] },
    // Times of ClickHouse results are UTC: shown as UTC, as the table shows them.
    tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
    legend: { live: plan.kind === 'line' },
  };
  let chart: uPlot | undefined;
  // Filling a box: the canvas takes its height less the legend's (drawn below the canvas).
  const heightIn = (boxHeight: number) => {
    if (!chartOptions.fill) return CHART_HEIGHT;
    const legend = box.querySelector<HTMLElement>('.u-legend')?.offsetHeight ?? 0;
    return Math.max(MIN_FILL_HEIGHT, Math.floor(boxHeight - legend));
  };
  new ResizeObserver(([entry]) => {
    const width = Math.floor(entry!.contentRect.width);
    const boxHeight = entry!.contentRect.height;
    if (width === 0) return;
    if (chart) return chart.setSize({ width, height: heightIn(boxHeight) });
    chart = new uPlot({ ...options, width, height: heightIn(boxHeight) }, data, box);
    // The legend has its height once uPlot has laid it out: the canvas then takes the rest.
    if (chartOptions.fill) requestAnimationFrame(() => chart!.setSize({ width, height: heightIn(boxHeight) }));
  }).observe(box);
  return box;
}
