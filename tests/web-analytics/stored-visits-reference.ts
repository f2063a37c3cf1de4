import { reference, sessionize, type Ev, type Filter } from './stats-reference';

/**
 * The Stats API's answers by the stored visits' definition (issue 38), through the plain
 * computation of stats-reference.ts: visits are each device's page and track events with gaps
 * under the timeout, whole, taken by every range they are active in (Plausible's rule), the
 * visitor being the person of a visit's first event.
 */

/** Inclusive bounds, ms. */
export interface Range {
  from: number;
  to: number;
}

/** The metrics the Stats API answers from visits alone, asked with `dimensions` (Plausible answers views_per_visit only without dimensions). */
export const visitMetrics = (dimensions: readonly string[]): string[] =>
  ['visitors', 'visits', 'views_per_visit', 'bounce_rate', 'visit_duration'].filter((m) => dimensions.length === 0 || m !== 'views_per_visit');
/** The metrics it answers from events, each counted in the range by its own time, grouped by its visit's values. */
export const EVENT_METRICS = ['pageviews', 'events'] as const;

export type Row = { dimensions: string[]; metrics: number[] };

/** `metrics` of the visits of `events` active in `range`, in one row or broken down by `dimensions`, in the Stats API's default order; `filters` as the Stats API's. */
export function answer(events: readonly Ev[], range: Range, metrics: readonly string[], dimensions: readonly string[], filters: Filter[] = []): Row[] {
  return reference(sessionize(events, range.from, range.to), { metrics: [...metrics], dimensions: [...dimensions], filters }, range.from).rows;
}
