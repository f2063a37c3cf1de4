import { h } from '../../dom';
import { periodChart } from '../../ui/period-chart';
import { METRIC_LABELS, metricValue } from './format';
import type { Metric, StatsAnswer } from './query';
import { bucketKey, bucketLabel, bucketsOf, type Range } from './period';

/** The API's time dimension for a range's buckets. */
export const timeDimension = (range: Range) => `time:${range.interval}`;

/** A series' values over the range's buckets, from a time-dimension answer (empty buckets are 0). */
export function seriesOf(answer: StatsAnswer, range: Range): number[] {
  const byKey = new Map<string, number>();
  for (const row of answer.results) byKey.set(bucketKey(String(row.dimensions[0] ?? ''), range.interval), Number(row.metrics[0] ?? 0));
  return bucketsOf(range).map((k) => byKey.get(k) ?? 0);
}

/**
 * The chosen metric over time, with the previous period dashed behind it (its buckets laid over
 * the same places: the first day over the first day).
 */
export function overviewChart(metric: Metric, range: Range, current: number[], previous: number[] | undefined): HTMLElement {
  const keys = bucketsOf(range);
  const labels = keys.map((k) => bucketLabel(k, range.interval));
  const series = [{ label: METRIC_LABELS[metric], values: current, colour: '#4f7df3' }];
  if (previous) series.push({ label: 'Previous period', values: keys.map((_, i) => previous[i] ?? null) as number[], colour: '#9aa3b2', dashed: true } as (typeof series)[number]);
  const chart = periodChart({
    labels,
    series,
    mode: 'line',
    title: `${METRIC_LABELS[metric]} over time`,
    height: 280,
    xName: range.interval === 'hour' ? 'Hour (UTC)' : range.interval === 'day' ? 'Day' : 'Month',
    format: (v) => metricValue(metric, v),
    axis: (v) => (metric === 'visit_duration' ? metricValue(metric, v) : metric === 'bounce_rate' ? `${v}%` : metricValue('visitors', v)),
  });
  return h('div', { class: 'ov-chart', 'data-metric': metric, 'data-points': current.join(',') }, chart);
}
