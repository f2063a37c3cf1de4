import type { AnyQuery, Display, Filter, Kind, PropertyFilter, QueryOf, Series, TrendChart } from './types';
import { KINDS, PROPERTY_MATHS, TREND_CHARTS } from './types';
import { SPECIAL_EVENTS } from './suggestions';

/**
 * An insight as the builder holds it: its kind, its query (the request body, possibly with
 * fields still being filled in), how it is drawn, and the saved insight it came from.
 *
 * URLs: `#/insights/<kind>` (a new insight), `#/insights/<kind>?q=<query as JSON>&chart=<chart>`
 * (an insight being built), `#/insights/<kind>?saved=<id>` (a saved insight, as saved), and
 * `?saved=<id>&q=…` (a saved insight changed since). The key is never part of it.
 */
export interface InsightState {
  kind: Kind;
  query: AnyQuery;
  display: Display;
  saved?: { id: string; name: string };
}

/**
 * A new insight of each kind, over the workspace's most frequent events where it needs one, in
 * the workspace's time zone (`timezone`), as the service counts one that names none.
 */
export function defaultQuery<K extends Kind>(kind: K, events: readonly string[], timezone = 'UTC'): QueryOf[K] {
  const named = events.filter((e) => e && !e.startsWith('$') && !e.startsWith('/'));
  const first = named[0] ?? '$pageview';
  const queries: QueryOf = {
    trends: { series: [{ event: first, math: 'total' }], dateFrom: '-7d', interval: 'day', timezone },
    funnels: { steps: [{ event: '$pageview' }, { event: named[0] ?? '$any' }], dateFrom: '-30d', timezone, order: 'ordered', window: { value: 14, unit: 'day' } },
    retention: { startEvent: { event: '$any' }, returnEvent: { event: '$any' }, period: 'day', periods: 7, type: 'recurring', timezone },
    paths: { steps: 5, limit: 50, dateFrom: '-7d', timezone },
    stickiness: { series: [{ event: first }], dateFrom: '-7d', interval: 'day', timezone },
    lifecycle: { series: [{ event: '$any' }], dateFrom: '-30d', interval: 'day', timezone },
  };
  return queries[kind];
}

export function isKind(value: string | undefined): value is Kind {
  return (KINDS as readonly string[]).includes(value ?? '');
}

/** The kind and parameters of an insights URL (`#/insights/<kind>?…`). */
export function parseHash(hash: string): { kind: Kind | undefined; params: URLSearchParams } {
  const [path = '', search = ''] = hash.replace(/^#\/?/, '').split('?', 2);
  const kind = path.split('/')[1];
  return { kind: isKind(kind) ? kind : undefined, params: new URLSearchParams(search) };
}

/** The URL of an insight; `changed` says whether its query differs from the saved one it came from. */
export function hashOf(state: InsightState, changed: boolean): string {
  const params = new URLSearchParams();
  if (state.saved) params.set('saved', state.saved.id);
  if (!state.saved || changed) {
    params.set('q', JSON.stringify(cleanQuery(state.kind, state.query)));
    if (state.kind === 'trends' && state.display.chart) params.set('chart', state.display.chart);
  }
  const search = params.toString();
  return `#/insights/${state.kind}${search ? `?${search}` : ''}`;
}

export function chartOf(value: unknown): TrendChart | undefined {
  return (TREND_CHARTS as readonly unknown[]).includes(value) ? (value as TrendChart) : undefined;
}

/** A query read from a URL or a saved insight: an object, or undefined. */
export function queryFromText(text: string | null): AnyQuery | undefined {
  if (!text) return undefined;
  try {
    const value: unknown = JSON.parse(text);
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as AnyQuery) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A query from a URL or a saved insight with what the form needs filled in: the lists of series
 * or steps and the start and return events (their events as text), so that a hand-made or old
 * URL opens as a form rather than failing; what the service refuses is its answer's to say.
 */
export function completeQuery(kind: Kind, query: AnyQuery): AnyQuery {
  const q = { ...query } as Record<string, unknown>;
  const base = defaultQuery(kind, []) as unknown as Record<string, unknown>;
  const match = (value: unknown): Series => {
    const m = value && typeof value === 'object' ? (value as Series) : ({} as Series);
    return { ...m, event: typeof m.event === 'string' ? m.event : '', ...(Array.isArray(m.filters) ? { filters: m.filters } : {}) };
  };
  for (const key of ['series', 'steps'] as const) {
    if (!(key in base) || (kind === 'paths' && key === 'steps')) continue;
    q[key] = Array.isArray(q[key]) && (q[key] as unknown[]).length > 0 ? (q[key] as unknown[]).map(match) : base[key];
  }
  for (const key of ['startEvent', 'returnEvent'] as const) if (key in base) q[key] = q[key] ? match(q[key]) : base[key];
  if (q.filters !== undefined && !Array.isArray(q.filters)) delete q.filters;
  return q as unknown as AnyQuery;
}

const NO_VALUE = new Set(['is_set', 'is_not_set']);

/** A filter as the API takes it, or undefined while it is incomplete. */
function cleanFilter(filter: Filter): Filter | undefined {
  if ('cohort' in filter) return filter.cohort.trim() ? { cohort: filter.cohort.trim() } : undefined;
  const f = filter as PropertyFilter;
  const property = f.property?.trim();
  if (!property) return undefined;
  const out: PropertyFilter = { property, operator: f.operator };
  if (f.source && f.source !== 'event') out.source = f.source;
  if (NO_VALUE.has(f.operator)) return out;
  if (f.operator === 'in' || f.operator === 'not_in') {
    const list = (Array.isArray(f.value) ? f.value : [f.value]).filter((v): v is string | number | boolean => v !== undefined && String(v).trim() !== '');
    if (list.length === 0) return undefined;
    out.value = list;
    return out;
  }
  if (f.value === undefined || Array.isArray(f.value) || String(f.value).trim() === '') return undefined;
  out.value = f.value;
  return out;
}

function cleanFilters(filters: Filter[] | undefined): Filter[] | undefined {
  const kept = (filters ?? []).map(cleanFilter).filter((f): f is Filter => f !== undefined);
  return kept.length > 0 ? kept : undefined;
}

function cleanSeries(series: Series, kind: Kind): Series {
  const out: Series = { event: series.event.trim() };
  if (kind === 'trends') {
    if (series.math && series.math !== 'total') out.math = series.math;
    if (series.math && PROPERTY_MATHS.includes(series.math) && series.property?.trim()) out.property = series.property.trim();
  }
  const filters = cleanFilters(series.filters);
  if (filters) out.filters = filters;
  return out;
}

/** Removes what is empty or half-filled, so what is sent (and put in the URL) is a valid request body. */
export function cleanQuery(kind: Kind, query: AnyQuery): AnyQuery {
  const q = JSON.parse(JSON.stringify(query)) as Record<string, unknown> & AnyQuery;
  const filters = cleanFilters(q.filters);
  if (filters) q.filters = filters;
  else delete q.filters;
  if (q.breakdown && !q.breakdown.property?.trim()) delete q.breakdown;
  for (const key of ['dateFrom', 'dateTo', 'timezone', 'formula', 'start', 'end'] as const) {
    const value = q[key];
    if (typeof value === 'string' && value.trim() === '') delete q[key];
  }
  const any = q as Partial<QueryOf['trends'] & QueryOf['funnels'] & QueryOf['retention']>;
  if (kind !== 'funnels' && Array.isArray(any.series)) any.series = any.series.map((s) => cleanSeries(s, kind));
  if (kind === 'funnels' && Array.isArray(any.steps)) any.steps = any.steps.map((s) => cleanSeries(s, kind));
  if (any.startEvent) any.startEvent = cleanSeries(any.startEvent, kind);
  if (any.returnEvent) any.returnEvent = cleanSeries(any.returnEvent, kind);
  if (kind === 'funnels' && 'exclusions' in any) {
    const kept = (any.exclusions ?? []).filter((e) => e.event.trim() && e.toStep > e.fromStep);
    if (kept.length > 0) any.exclusions = kept;
    else delete any.exclusions;
  }
  if (kind === 'funnels' && Array.isArray(any.steps)) {
    // Steps removed since the view's steps were chosen: back to the defaults (first and last).
    const last = any.steps.length - 1;
    if ((any.funnelToStep ?? last) > last) delete any.funnelToStep;
    if ((any.funnelFromStep ?? 0) >= (any.funnelToStep ?? last)) delete any.funnelFromStep;
  }
  for (const key of ['include', 'exclude'] as const) {
    if (!(key in q)) continue;
    const list = ((q as Record<string, unknown>)[key] as string[] | undefined)?.map((e) => e.trim()).filter(Boolean) ?? [];
    if (list.length > 0) (q as Record<string, unknown>)[key] = list;
    else delete (q as Record<string, unknown>)[key];
  }
  if ('compare' in q && !q.compare) delete q.compare;
  return q;
}

/** Why a (cleaned) query cannot be asked yet, or undefined when it can. */
export function missing(kind: Kind, query: AnyQuery, known?: ReadonlySet<string>): string | undefined {
  const q = query as Partial<QueryOf[Kind]> & Record<string, unknown>;
  const events: Series[] =
    kind === 'funnels' ? ((q.steps as Series[]) ?? []) : kind === 'retention' ? [q.startEvent as Series, q.returnEvent as Series].filter(Boolean) : kind === 'paths' ? [] : ((q.series as Series[]) ?? []);
  if (kind === 'funnels' && events.length < 2) return 'A funnel needs at least two steps.';
  if (kind !== 'paths' && events.length === 0) return 'Add a series.';
  if (events.some((s) => !s?.event)) return 'Pick an event for every series and step.';
  // A name the workspace never received (often one typed halfway) would answer zeros, silently.
  const unknown = known && events.find((s) => !SPECIAL_EVENTS.includes(s.event) && !known.has(s.event));
  if (unknown) return `No event named “${unknown.event}” in this workspace: pick one of its events from the list.`;
  if (kind === 'trends' && (q.series as Series[]).some((s) => s.math && PROPERTY_MATHS.includes(s.math) && !s.property))
    return 'Name the numeric property of each sum, average, minimum, maximum, median or percentile.';
  return undefined;
}
