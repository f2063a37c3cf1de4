import { h } from '../../dom';
import { periodChart, type PeriodSeries } from '../../ui/period-chart';
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
 * The index of the range's first bucket not over, as the API marks it (Plausible's
 * `present_index`, else a last bucket in `partial_time_labels`): drawn apart, not as a drop.
 */
export function notOverFrom(answer: StatsAnswer, range: Range): number | undefined {
  const labels = answer.meta?.time_labels ?? [];
  const present = answer.meta?.present_index;
  const last = labels.at(-1);
  const label = typeof present === 'number' ? labels[present] : last !== undefined && answer.meta?.partial_time_labels?.includes(last) ? last : undefined;
  const index = label === undefined ? -1 : bucketsOf(range).indexOf(bucketKey(label, range.interval));
  return index < 0 ? undefined : index;
}

/**
 * The chosen metric over time, with the previous period dashed behind it (its buckets laid over
 * the same places: the first day over the first day), and the bucket not over (the current hour or
 * day) drawn apart: a dashed last segment into it.
 */
export function overviewChart(metric: Metric, range: Range, current: number[], previous: number[] | undefined, incompleteFrom?: number): HTMLElement {
  const keys = bucketsOf(range);
  const labels = keys.map((k) => bucketLabel(k, range.interval));
  // Buckets after the one not over are still to come: not drawn, as Plausible's graph stops at now.
  const values = current.map((v, i) => (incompleteFrom !== undefined && i > incompleteFrom ? null : v));
  const series: PeriodSeries[] = [{ label: METRIC_LABELS[metric], values, colour: '#4f7df3', incompleteFrom }];
  if (previous) series.push({ label: 'Previous period', values: keys.map((_, i) => previous[i] ?? null), colour: '#9aa3b2', dashed: true });
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
