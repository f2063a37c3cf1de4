import { localDate, wallTime, zonedInstant } from '../../insights/time-range';
import type { TimeBucket } from './compile';
import type { ResolvedRange } from './date-range';

/**
 * Plausible's `meta.partial_time_labels` (lib/plausible/stats/time.ex): of a time series' labels,
 * the first when the range starts after its bucket does (a week cut at the range's start, the
 * first hour of `24h`), and the last when its bucket ends after the range does or is not over at
 * `now` (today, this month). Whole seconds, as Plausible counts: a bucket is whole when the range
 * or now reaches its last second.
 */
export function partialTimeLabels(labels: readonly string[], range: ResolvedRange, bucket: TimeBucket, now: number): string[] {
  if (labels.length === 0) return [];
  const first = labels[0]!;
  const last = labels.at(-1)!;
  const cutoff = Math.floor(Math.min(now, range.to) / 1000) * 1000 + 999;
  const partial = new Set<string>();
  if (bucketBounds(first, bucket, range.timezone).start < range.from) partial.add(first);
  if (bucketBounds(last, bucket, range.timezone).end > cutoff) partial.add(last);
  return labels.filter((label) => partial.has(label));
}

/** The first and last instants (ms) of the whole bucket a label names (a week from its Monday). */
function bucketBounds(label: string, bucket: TimeBucket, timezone: string): { start: number; end: number } {
  const [y, m, d, h] = [label.slice(0, 4), label.slice(5, 7), label.slice(8, 10), label.slice(11, 13)].map(Number) as [number, number, number, number];
  switch (bucket) {
    case 'hour': {
      const start = zonedInstant(timezone, y, m, d, h);
      return { start, end: start + 3_600_000 - 1 };
    }
    case 'day':
      return { start: zonedInstant(timezone, y, m, d), end: zonedInstant(timezone, y, m, d + 1) - 1 };
    case 'week': {
      const monday = d - ((new Date(Date.UTC(y, m - 1, d)).getUTCDay() + 6) % 7);
      return { start: zonedInstant(timezone, y, m, monday), end: zonedInstant(timezone, y, m, monday + 7) - 1 };
    }
    case 'month':
      return { start: zonedInstant(timezone, y, m, 1), end: zonedInstant(timezone, y, m + 1, 1) - 1 };
  }
}

/**
 * Plausible's `meta.present_index`: the index of the label of the bucket holding `now` (a week's
 * from its Monday, or today's date when that Monday is before the range), or null.
 */
export function presentIndex(labels: readonly string[], range: ResolvedRange, bucket: TimeBucket, now: number): number | null {
  const { timezone } = range;
  const today = localDate(now, timezone);
  let label: string;
  if (bucket === 'hour') label = `${today} ${String(wallTime(now, timezone).hour).padStart(2, '0')}:00:00`;
  else if (bucket === 'day') label = today;
  else if (bucket === 'month') label = `${today.slice(0, 8)}01`;
  else {
    const monday = localDate(bucketBounds(today, 'week', timezone).start, timezone);
    label = monday >= localDate(range.from, timezone) ? monday : today;
  }
  const index = labels.indexOf(label);
  return index < 0 ? null : index;
}
