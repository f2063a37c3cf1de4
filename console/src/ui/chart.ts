import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { h } from '../dom';
import type { Row } from '../types';
import { planChart } from './chart-data';
import { notice } from './notice';

/** Series colours, readable on light and dark backgrounds. */
const COLOURS = ['#3b82f6', '#f59e0b', '#10b981', '#ef4444', '#8b5cf6', '#06b6d4', '#ec4899', '#84cc16'];
const CHART_HEIGHT = 320;

function axisColour(): string {
  return getComputedStyle(document.documentElement).getPropertyValue('--muted').trim() || '#888';
}

/** A chart of a query's result (see planChart), sized to its container and redrawn when that resizes. */
export function resultChart(columns: readonly string[], rows: readonly Row[]): HTMLElement {
  const plan = planChart(columns, rows);
  if (plan.kind === 'none') return notice('empty', plan.reason);
  const box = h('div', { class: 'chart', 'data-kind': plan.kind });
  const stroke = axisColour();
  const grid = { stroke: 'rgba(128,128,128,0.15)' };
  const axes: uPlot.Axis[] = [
    { stroke, grid, ...(plan.kind === 'bars' ? { values: (_u: uPlot, ticks: number[]) => ticks.map((t) => plan.labels[t] ?? '') } : {}) },
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
    scales: { x: plan.kind === 'line' ? { time: true } : { time: false, range: (_u, min, max) => [min - 0.5, max + 0.5] } },
    // Times of ClickHouse results are UTC: shown as UTC, as the table shows them.
    tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
    legend: { live: plan.kind === 'line' },
  };
  let chart: uPlot | undefined;
  new ResizeObserver(([entry]) => {
    const width = Math.floor(entry!.contentRect.width);
    if (width === 0) return;
    if (!chart) chart = new uPlot({ ...options, width }, data, box);
    else chart.setSize({ width, height: CHART_HEIGHT });
  }).observe(box);
  return box;
}
