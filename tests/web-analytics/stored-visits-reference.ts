import { MINUTE, reference, visitValue, type Ev, type Visit } from './stats-reference';

/**
 * The Stats API's answers by the stored visits' definition (issue 38), computed the plain way:
 * a visit is one device's page and track events (not Plausible's `engagement` reports) with gaps
 * under the timeout, in the order (timestamp, parsedAt, uuid); the device is the event's
 * anonymousId, else its userId; the visitor is the person of the visit's first event. Visits are
 * whole: a range takes or leaves each visit as one (visitInRange), never a part of it.
 */

/** Inclusive bounds, ms. */
export interface Range {
  from: number;
  to: number;
}

/** The visit key: the device an event was sent from. */
export const visitKey = (e: Ev) => e.anonymousId || e.userId || '';

/** Whether an event makes visits: page views and custom events, but not Plausible's engagement reports. */
const makesVisits = (e: Ev) => e.type === 'page' || (e.type === 'track' && e.event !== 'engagement');

/**
 * The visits of `events` (every stored event, in sending order: `index` is the order of their
 * parsedAt), each with its person as of its first event.
 */
export function deviceVisits(events: readonly Ev[], timeoutMinutes = 30): Visit[] {
  const byKey = new Map<string, Ev[]>();
  for (const e of events) {
    if (!makesVisits(e)) continue;
    const key = visitKey(e);
    const list = byKey.get(key);
    if (list) list.push(e);
    else byKey.set(key, [e]);
  }
  const visits: Visit[] = [];
  for (const list of byKey.values()) {
    list.sort((a, b) => a.at - b.at || a.index - b.index);
    let current: Visit | undefined;
    for (const e of list) {
      if (!current || e.at - current.end >= timeoutMinutes * MINUTE) {
        current = { personId: e.personId, events: [], start: e.at, end: e.at };
        visits.push(current);
      }
      current.events.push(e);
      current.end = e.at;
    }
  }
  return visits;
}

/**
 * THE RANGE RULE, Plausible's (lib/plausible/stats/sql/where_builder.ex, filter_site_time_range
 * for sessions): a whole visit counts in every range it overlaps, from its first event to its last.
 */
export const visitInRange = (visit: Visit, range: Range) => visit.end >= range.from && visit.start <= range.to;

/** The day a visit counts under in `time:day`: Plausible's sessions take the day of their last event (`timestamp`). */
export const visitDay = (visit: Visit) => utcDay(visit.end);

const utcDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** The metrics the Stats API answers from visits alone, asked with `dimensions` (Plausible answers views_per_visit only without dimensions). */
export const visitMetrics = (dimensions: readonly string[]): string[] =>
  ['visitors', 'visits', 'views_per_visit', 'bounce_rate', 'visit_duration'].filter((m) => dimensions.length === 0 || m !== 'views_per_visit');
/** The metrics it answers from events, each counted in the range by its own time, grouped by its visit's values. */
export const EVENT_METRICS = ['pageviews', 'events'] as const;

export type Row = { dimensions: string[]; metrics: number[] };

/**
 * visitMetrics over the visits in `range`, in one row or broken down by `dimensions` (visit
 * dimensions, or `time:day` alone), in the Stats API's default order.
 */
export function visitMetricsAnswer(visits: readonly Visit[], range: Range, dimensions: readonly string[]): Row[] {
  const taken = visits.filter((v) => visitInRange(v, range));
  const metrics = visitMetrics(dimensions);
  if (dimensions[0] !== 'time:day') return reference(taken, { metrics, dimensions: [...dimensions] }).rows;
  const byDay = Map.groupBy(taken, visitDay);
  return [...byDay.keys()].sort().map((day) => ({ dimensions: [day], metrics: reference(byDay.get(day)!, { metrics }).rows[0]!.metrics }));
}

/** EVENT_METRICS of the events in `range` (page and track events of `visits`), grouped as visitMetricsAnswer groups. */
export function eventMetricsAnswer(visits: readonly Visit[], range: Range, dimensions: readonly string[]): Row[] {
  const groups = new Map<string, Row>();
  for (const visit of visits) {
    for (const e of visit.events) {
      if (e.at < range.from || e.at > range.to) continue;
      const values = dimensions.map((d) => (d === 'time:day' ? utcDay(e.at) : visitValue(visit, d)));
      const key = JSON.stringify(values);
      const row = groups.get(key) ?? { dimensions: values, metrics: [0, 0] };
      groups.set(key, row);
      row.metrics[0]! += e.type === 'page' ? 1 : 0;
      row.metrics[1]!++;
    }
  }
  if (dimensions.length === 0) return [groups.get('[]') ?? { dimensions: [], metrics: [0, 0] }];
  const byValues = (a: Row, b: Row) => {
    for (let i = 0; i < dimensions.length; i++) if (a.dimensions[i] !== b.dimensions[i]) return a.dimensions[i]! < b.dimensions[i]! ? -1 : 1;
    return 0;
  };
  return [...groups.values()].sort(dimensions[0] === 'time:day' ? byValues : (a, b) => b.metrics[0]! - a.metrics[0]! || byValues(a, b));
}
