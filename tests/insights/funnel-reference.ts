import { DAY, HOUR, matches, type LogEvent, type Sent } from './event-log';

/**
 * The funnel definition (docs/api/insights.md#post-insightsfunnels) computed plainly, for the
 * funnels' differential tests (funnels.test.ts, funnel-views.test.ts).
 */

export interface Step {
  event: string;
  filters?: Array<{ property: string; operator: 'eq' | 'neq'; value: string }>;
}
export interface Exclusion {
  event: string;
  fromStep: number;
  toStep: number;
}
export interface Funnel {
  steps: Step[];
  order?: 'ordered' | 'strict' | 'unordered';
  window?: { value: number; unit: 'second' | 'minute' | 'hour' | 'day' | 'week' | 'month' };
  exclusions?: Exclusion[];
  aggregateBy?: 'person' | 'group';
  breakdown?: { property: string; limit?: number };
  filters?: Step['filters'];
}

const UNIT_MS = { second: 1000, minute: 60_000, hour: HOUR, day: DAY, week: 7 * DAY };

/** The last instant a conversion started at `start` may reach: a calendar month in UTC, else a fixed length. */
function windowEnd(start: number, window: NonNullable<Funnel['window']>): number {
  if (window.unit !== 'month') return start + window.value * UNIT_MS[window.unit];
  const d = new Date(start);
  const month = d.getUTCMonth() + window.value;
  const lastDay = new Date(Date.UTC(d.getUTCFullYear(), month + 1, 0)).getUTCDate();
  return Date.UTC(d.getUTCFullYear(), month, Math.min(d.getUTCDate(), lastDay), d.getUTCHours(), d.getUTCMinutes(), d.getUTCSeconds(), d.getUTCMilliseconds());
}

/** A property's text as filters and breakdowns read it: a string's value, else its JSON, '' when missing. */
export const text = (e: LogEvent, property: string) => {
  const v = e.properties?.[property];
  return v === undefined ? '' : typeof v === 'string' ? v : JSON.stringify(v);
};
export const holds = (e: LogEvent, filters: Step['filters'] = []) => filters.every((f) => (f.operator === 'eq' ? text(e, f.property) === f.value : text(e, f.property) !== f.value));

/** quantileExactInclusive(0.5): the middle value, or the mean of the two middle ones. */
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const h = (sorted.length - 1) / 2;
  const low = Math.floor(h);
  return sorted[low]! + (h - low) * ((sorted[low + 1] ?? sorted[low]!) - sorted[low]!);
}

export interface Conversion {
  depth: number;
  /** ms between each step and the next. */
  times: number[];
  value: string;
  /** The time of its first step, ms. */
  start: number;
}

/**
 * One actor's conversions by the definition, one per start: events in order (time, then sending
 * order); starts are first-step events in [from, to] (unordered: any step's); ordered takes the
 * first event of each next step after the previous one, strict the very next event, unordered the
 * first event of any unfilled step, which fills the first unfilled step it matches; steps count
 * within the window; an exclusion cuts after fromStep at the first excluded event after fromStep's
 * event.
 */
export function conversions(events: Sent[], funnel: Funnel, from: number, to: number): Conversion[] {
  const order = funnel.order ?? 'ordered';
  const window = funnel.window ?? { value: 14, unit: 'day' };
  const n = funnel.steps.length;
  const stepsOf = (e: Sent) => funnel.steps.flatMap((s, k) => (matches(e, s.event) && holds(e, s.filters) ? [k] : []));
  const list = events.map((e) => ({ e, steps: stepsOf(e), excluded: (funnel.exclusions ?? []).map((x) => matches(e, x.event)) }));
  const found: Conversion[] = [];
  list.forEach((start, s) => {
    if (start.e.at < from || start.e.at > to || start.steps.length === 0 || (order !== 'unordered' && !start.steps.includes(0))) return;
    const path = [s];
    if (order === 'unordered') {
      const filled = new Set([start.steps[0]!]);
      for (let i = s + 1; i < list.length && path.length < n; i++) {
        const open = list[i]!.steps.find((k) => !filled.has(k));
        if (open !== undefined) (filled.add(open), path.push(i));
      }
    } else {
      for (let k = 1; k < n; k++) {
        const last = path[k - 1]!;
        const next = order === 'strict' ? (list[last + 1]?.steps.includes(k) ? last + 1 : -1) : list.findIndex((x, i) => i > last && x.steps.includes(k));
        if (next < 0) break;
        path.push(next);
      }
    }
    const end = windowEnd(start.e.at, window);
    let depth = path.filter((i) => list[i]!.e.at <= end).length;
    (funnel.exclusions ?? []).forEach((x, j) => {
      if (depth <= x.fromStep) return;
      const excluded = list.findIndex((y, i) => i > path[x.fromStep]! && y.excluded[j]);
      if (excluded < 0) return;
      let before = 0;
      for (let k = x.fromStep + 1; k <= x.toStep && k < depth && path[k]! < excluded; k++) before++;
      if (before < x.toStep - x.fromStep) depth = Math.min(depth, x.fromStep + 1 + before);
    });
    const times = path.slice(1, depth).map((i, k) => list[i]!.e.at - list[path[k]!]!.e.at);
    found.push({ depth, times, value: funnel.breakdown ? text(start.e, funnel.breakdown.property) : '', start: start.e.at });
  });
  return found;
}

/** One actor's best conversion: the deepest, the earliest start of equal ones. */
export function bestConversion(events: Sent[], funnel: Funnel, from: number, to: number): Conversion | undefined {
  let best: Conversion | undefined;
  for (const c of conversions(events, funnel, from, to)) if (!best || c.depth > best.depth) best = c;
  return best;
}
