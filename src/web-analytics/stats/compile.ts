import type { Params, Row } from '../../storage/storage';
import { SqlParams } from '../../sql-params';
import { toEngineDateTime } from '../../timestamps';
import { localDate, wallTime, zonedInstant } from '../../insights/time-range';
import { isoWithOffset, resolveDateRange, type ResolvedRange } from './date-range';
import { partialTimeLabels, presentIndex } from './partial-labels';
import { inspect, StatsQueryError } from './errors';
import {
  EVENT_DIMENSIONS,
  FILTER_OPERATORS,
  MAX_LIMIT,
  STATS_METRICS,
  TIME_DIMENSIONS,
  UNSUPPORTED_METRICS,
  VISIT_DIMENSIONS,
  type FilterOperator,
  type StatsAnswer,
  type StatsMetric,
} from './model';
import { sessionEvents, sessionVisits, type SessionNeeds } from './sessions';
import { LONGEST_VISIT_DAYS } from '../../storage/migrations/visits';
import { filterKind, goalsSource, pagesSource, storedVisitEvents, storedVisitsSource, type StoredQuestion } from './stored-visits';

/**
 * The Stats API v2 compiler: a pure function from a Plausible query (checked here, with
 * Plausible's messages) and a context to one ClickHouse statement over `events_with_persons`, its
 * bound parameters, and the function that shapes its rows into Plausible's answer.
 *
 * The statement sessionizes the range's events (sessions.ts), marks each event with whether the
 * filters hold for it (its own dimensions and its visit's), then groups twice: by visit and the
 * requested dimensions, then by the dimensions. Event metrics (`visitors`, `visits`, `pageviews`,
 * `events`) count the events the filters select; visit metrics (`bounce_rate`, `visit_duration`,
 * `views_per_visit`) count the visits with at least one such event, each once: under the time
 * bucket of its start, and with an `event:page` dimension under its entry page.
 */

export interface StatsContext {
  /** The time the query is answered at, ms. */
  now: number;
  /** The site's time zone (IANA). */
  timezone: string;
  /** Minutes of inactivity that end a visit. */
  sessionTimeoutMinutes: number;
  /** The workspace's first event, ms, for `date_range: "all"` (undefined: none). */
  firstEvent?: number;
  /** Whether the workspace's visits are stored and built (src/web-analytics/visits): questions of visits alone read them. */
  storedVisits?: boolean;
}

export interface CompiledStatsQuery {
  sql: string;
  params: Params;
  answer(rows: Row[]): StatsAnswer;
}

export type TimeBucket = 'hour' | 'day' | 'week' | 'month';

export interface Dimension {
  name: string;
  kind: 'time' | 'event' | 'visit';
  /** The value of an event's row. */
  sql: string;
  /** For session metrics: whether this row is where its visit is counted (`1`: everywhere). */
  visitRow: string;
}

const TOP_LEVEL_KEYS = new Set(['site_id', 'metrics', 'date_range', 'dimensions', 'filters', 'order_by', 'include', 'pagination']);
const SESSION_METRICS = new Set<StatsMetric>(['bounce_rate', 'visit_duration', 'views_per_visit']);
const NOT_SET = '(not set)';
const NO_REFERRER = 'Direct / None';

/** Display value of a visit attribute column, as Plausible shows an empty one. */
const orBlank = (column: string, blank: string, value = column) => `if(${column} = '', '${blank}', ${value})`;

/** Each visit dimension's value (on the rows of sessionEvents). */
function visitDimensionSql(name: string, params: SqlParams): string {
  switch (name) {
    case 'visit:entry_page':
      return 'entryPage';
    case 'visit:exit_page':
      return 'exitPage';
    case 'visit:source':
      return orBlank('source', NO_REFERRER);
    case 'visit:referrer':
      return orBlank('referrer', NO_REFERRER);
    case 'visit:utm_medium':
      return orBlank('utmMedium', NOT_SET);
    case 'visit:utm_source':
      return orBlank('utmSource', NOT_SET);
    case 'visit:utm_campaign':
      return orBlank('utmCampaign', NOT_SET);
    case 'visit:utm_content':
      return orBlank('utmContent', NOT_SET);
    case 'visit:utm_term':
      return orBlank('utmTerm', NOT_SET);
    case 'visit:device':
      return orBlank('device', NOT_SET, 'concat(upper(substring(device, 1, 1)), substring(device, 2))');
    case 'visit:browser':
      return orBlank('browser', NOT_SET);
    case 'visit:os':
      return orBlank('os', NOT_SET);
    case 'visit:country':
      return 'country';
    case 'visit:region':
      return 'region';
    case 'visit:city_name':
      return 'city';
    case 'visit:country_name': {
      const [codes, names] = countryNames();
      return `transform(country, ${params.bind(codes, 'Array(String)')}, ${params.bind(names, 'Array(String)')}, '')`;
    }
  }
  throw new Error(`no visit dimension ${name}`);
}

let countryNameList: [string[], string[]] | undefined;
/** ISO 3166-1 alpha-2 codes and their English names, from the runtime's Intl data. */
function countryNames(): [string[], string[]] {
  if (countryNameList) return countryNameList;
  const display = new Intl.DisplayNames(['en'], { type: 'region' });
  const codes: string[] = [];
  const names: string[] = [];
  for (let a = 65; a <= 90; a++) {
    for (let b = 65; b <= 90; b++) {
      const code = String.fromCharCode(a, b);
      const name = display.of(code);
      if (name && name !== code && code !== 'ZZ' && !/^(AA|Q[M-Z]|X[A-Z])$/.test(code)) {
        codes.push(code);
        names.push(name);
      }
    }
  }
  return (countryNameList = [codes, names]);
}

/** The visit attribute each visit dimension reads (sessionEvents' column). */
const ATTRIBUTE_OF: Record<string, string> = {
  'visit:source': 'source',
  'visit:referrer': 'referrer',
  'visit:utm_medium': 'utmMedium',
  'visit:utm_source': 'utmSource',
  'visit:utm_campaign': 'utmCampaign',
  'visit:utm_content': 'utmContent',
  'visit:utm_term': 'utmTerm',
  'visit:device': 'device',
  'visit:browser': 'browser',
  'visit:os': 'os',
  'visit:country': 'country',
  'visit:country_name': 'country',
  'visit:region': 'region',
  'visit:city_name': 'city',
};

/** What the per-person arrays must carry for a query naming `dimensions` (asked for or filtered). */
function needs(dimensions: readonly string[]): SessionNeeds {
  return {
    attributes: new Set(dimensions.map((d) => ATTRIBUTE_OF[d]).filter((a): a is string => a !== undefined)),
    properties: dimensions.some((d) => d.startsWith('event:props:')),
    paths: dimensions.some((d) => d === 'event:page' || d === 'visit:entry_page' || d === 'visit:exit_page'),
    names: dimensions.some((d) => d === 'event:goal' || d === 'event:name'),
  };
}

/** The bucket of a time column as Plausible labels it. */
export function bucketSql(column: string, bucket: TimeBucket, tz: string, rangeStart: string): string {
  switch (bucket) {
    case 'hour':
      return `formatDateTime(${column}, '%Y-%m-%d %H:00:00', ${tz})`;
    case 'day':
      return `toString(toDate(${column}, ${tz}))`;
    case 'week':
      // Weeks start on Monday, but not before the range (Plausible's weekstart_not_before).
      return `toString(greatest(toMonday(${column}, ${tz}), ${rangeStart}))`;
    case 'month':
      return `toString(toStartOfMonth(${column}, ${tz}))`;
  }
}

/** The bucket `time` stands for: hours within a day, days within about a month, else months. */
function autoBucket(range: ResolvedRange): TimeBucket {
  const days = ((range.labelsTo ?? range.to) - range.from) / 86_400_000;
  if (days <= 1) return 'hour';
  if (days <= 40) return 'day';
  return 'month';
}

const MAX_TIME_LABELS = 10_000;

/** Every bucket label of the range, in order (`include.time_labels`). */
export function timeLabels(range: ResolvedRange, bucket: TimeBucket): string[] {
  const { timezone } = range;
  const labels: string[] = [];
  const pad = (n: number) => String(n).padStart(2, '0');
  const push = (label: string) => {
    if (labels.length >= MAX_TIME_LABELS) throw new StatsQueryError(`Invalid include.time_labels: the date range has more than ${MAX_TIME_LABELS} time buckets.`);
    labels.push(label);
  };
  if (bucket === 'hour') {
    // By quarter hours: a zone's hours start on one (India's at :30 of UTC's), not always on UTC's hours.
    for (let h = Math.floor(range.from / 900_000) * 900_000; h <= (range.labelsTo ?? range.to); h += 900_000) {
      const w = wallTime(h, timezone);
      const label = `${localDate(h, timezone)} ${pad(w.hour)}:00:00`;
      if (labels[labels.length - 1] !== label) push(label);
    }
    return labels;
  }
  const first = wallTime(range.from, timezone);
  const last = localDate(range.labelsTo ?? range.to, timezone);
  let day = { year: first.year, month: first.month, day: first.day };
  const next = (d: typeof day, days: number, months = 0) => {
    const w = wallTime(zonedInstant(timezone, d.year, d.month + months, d.day + days, 12), timezone);
    return { year: w.year, month: w.month, day: w.day };
  };
  const text = (d: typeof day) => `${String(d.year).padStart(4, '0')}-${pad(d.month)}-${pad(d.day)}`;
  if (bucket === 'month') day = { ...day, day: 1 };
  if (bucket === 'week') {
    push(text(day));
    const weekday = new Date(Date.UTC(day.year, day.month - 1, day.day)).getUTCDay();
    day = next(day, 7 - ((weekday + 6) % 7));
  }
  while (text(day) <= last) {
    push(text(day));
    day = bucket === 'day' ? next(day, 1) : bucket === 'week' ? next(day, 7) : next(day, 0, 1);
  }
  return labels;
}

interface FilterScope {
  params: SqlParams;
  /** The SQL of a dimension's value for filters, or undefined when it is not one. */
  valueOf(dimension: string): string | undefined;
}

interface FilterFacts {
  /** Dimensions filtered anywhere, with the depth they are at (0: top level). */
  dimensions: Array<{ name: string; depth: number }>;
}

function filterError(filter: unknown, pointer: string): StatsQueryError {
  return new StatsQueryError(`${pointer}: Invalid filter ${inspect(filter)}`);
}

/** One filter of Plausible's array form, checked and compiled to a condition. */
function compileFilter(filter: unknown, pointer: string, scope: FilterScope, facts: FilterFacts, depth: number): string {
  if (!Array.isArray(filter) || filter.length < 2 || typeof filter[0] !== 'string') throw filterError(filter, pointer);
  const [operator] = filter;
  if (operator === 'and' || operator === 'or') {
    const list = filter[1];
    if (filter.length !== 2 || !Array.isArray(list) || list.length === 0) throw filterError(filter, pointer);
    const parts = list.map((f, i) => compileFilter(f, `${pointer}/1/${i}`, scope, facts, depth + 1));
    return `(${parts.join(operator === 'and' ? ' AND ' : ' OR ')})`;
  }
  if (operator === 'not') {
    if (filter.length !== 2) throw filterError(filter, pointer);
    return `NOT (${compileFilter(filter[1], `${pointer}/1`, scope, facts, depth + 1)})`;
  }
  if (!(FILTER_OPERATORS as readonly string[]).includes(operator)) {
    if (operator === 'has_done' || operator === 'has_not_done') throw new StatsQueryError(`${pointer}: Behavioral filters (${operator}) are not supported by this service`);
    throw filterError(filter, pointer);
  }
  const [, dimension, clauses, modifiers] = filter as [FilterOperator, unknown, unknown, unknown];
  if (filter.length > 4 || typeof dimension !== 'string' || !Array.isArray(clauses) || clauses.length === 0 || !clauses.every((c) => typeof c === 'string')) throw filterError(filter, pointer);
  if (modifiers !== undefined && (modifiers === null || typeof modifiers !== 'object' || Array.isArray(modifiers) || Object.keys(modifiers).some((k) => k !== 'case_sensitive') || typeof (modifiers as { case_sensitive?: unknown }).case_sensitive !== 'boolean')) {
    throw filterError(filter, pointer);
  }
  const value = scope.valueOf(dimension);
  if (value === undefined) throw filterError(filter, pointer);
  if (dimension === 'event:goal' && operator !== 'is' && operator !== 'contains') throw filterError(filter, pointer);
  if (dimension === 'visit:country' && (operator === 'is' || operator === 'is_not') && !(clauses as string[]).every((c) => [...c].length === 2)) {
    throw new StatsQueryError('Invalid visit:country filter, visit:country needs to be a valid 2-letter country code.');
  }
  facts.dimensions.push({ name: dimension, depth });
  const caseSensitive = (modifiers as { case_sensitive?: boolean } | undefined)?.case_sensitive !== false;
  const values = scope.params.bind(caseSensitive ? (clauses as string[]) : (clauses as string[]).map((c) => c.toLowerCase()), 'Array(String)');
  const subject = caseSensitive ? value : `lowerUTF8(${value})`;
  switch (operator) {
    case 'is':
      return `has(${values}, ${subject})`;
    case 'is_not':
      return `NOT has(${values}, ${subject})`;
    case 'contains':
      return `arrayExists(c -> position(${subject}, c) > 0, ${values})`;
    case 'contains_not':
      return `NOT arrayExists(c -> position(${subject}, c) > 0, ${values})`;
    case 'matches':
      return `arrayExists(r -> match(${value}, r), ${caseInsensitiveRegex(values, caseSensitive)})`;
    case 'matches_not':
      return `NOT arrayExists(r -> match(${value}, r), ${caseInsensitiveRegex(values, caseSensitive)})`;
  }
  throw filterError(filter, pointer);
}

const caseInsensitiveRegex = (values: string, caseSensitive: boolean) => (caseSensitive ? values : `arrayMap(r -> concat('(?i)', r), ${values})`);

/** The filters with `event:goal` ones taken out (the divisor of `conversion_rate`), '1' for none left. */
function withoutGoalFilters(filters: unknown[]): unknown[] {
  return filters.filter((f) => !(Array.isArray(f) && f[1] === 'event:goal'));
}

function isTimeDimension(name: string): boolean {
  return (TIME_DIMENSIONS as readonly string[]).includes(name);
}

function isKnownDimension(name: string): boolean {
  return isTimeDimension(name) || (EVENT_DIMENSIONS as readonly string[]).includes(name) || (VISIT_DIMENSIONS as readonly string[]).includes(name) || /^event:props:.+/.test(name);
}

/** The query as Plausible would echo it, once checked. */
interface Checked {
  siteId: string;
  metrics: StatsMetric[];
  dimensions: string[];
  filters: unknown[];
  orderBy: Array<[string, 'asc' | 'desc']> | undefined;
  include: { imports?: boolean; time_labels?: boolean; partial_time_labels?: boolean; present_index?: boolean; total_rows?: boolean };
  pagination: { limit: number; offset: number } | undefined;
  dateRange: unknown;
}

/** Checks a body's shape as Plausible's JSON schema does, with its messages. */
function checkShape(body: unknown): Checked {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new StatsQueryError('#: Type mismatch. Expected Object but got ' + (Array.isArray(body) ? 'Array' : body === null ? 'Null' : typeof body === 'string' ? 'String' : 'Number') + '.');
  const q = body as Record<string, unknown>;
  for (const key of Object.keys(q)) if (!TOP_LEVEL_KEYS.has(key)) throw new StatsQueryError(`#/${key}: Schema does not allow additional properties.`);
  for (const key of ['metrics', 'date_range']) if (!(key in q)) throw new StatsQueryError(`#: Required property ${key} was not present.`);
  if (typeof q.site_id !== 'string') throw new StatsQueryError('#/site_id: Type mismatch. Expected String but got ' + typeName(q.site_id) + '.');
  if (!Array.isArray(q.metrics) || q.metrics.length === 0) throw new StatsQueryError(Array.isArray(q.metrics) ? '#/metrics: Expected a minimum of 1 items but got 0.' : `#/metrics: Type mismatch. Expected Array but got ${typeName(q.metrics)}.`);
  const metrics: StatsMetric[] = [];
  q.metrics.forEach((m, i) => {
    if (typeof m === 'string' && (UNSUPPORTED_METRICS as readonly string[]).includes(m)) throw new StatsQueryError(`#/metrics/${i}: Metric ${inspect(m)} is not supported by this service`);
    if (typeof m !== 'string' || !(STATS_METRICS as readonly string[]).includes(m)) throw new StatsQueryError(`#/metrics/${i}: Invalid metric ${inspect(m)}`);
    metrics.push(m as StatsMetric);
  });
  const dimensions = q.dimensions ?? [];
  if (!Array.isArray(dimensions)) throw new StatsQueryError(`#/dimensions: Type mismatch. Expected Array but got ${typeName(dimensions)}.`);
  dimensions.forEach((d, i) => {
    if (typeof d !== 'string' || !isKnownDimension(d)) throw new StatsQueryError(`#/dimensions/${i}: Invalid dimension ${inspect(d)}`);
  });
  if (new Set(dimensions).size !== dimensions.length) throw new StatsQueryError(`#/dimensions: Expected items to be unique but they were not.`);
  const filters = q.filters ?? [];
  if (!Array.isArray(filters)) throw new StatsQueryError(`#/filters: Type mismatch. Expected Array but got ${typeName(filters)}.`);
  let orderBy: Checked['orderBy'];
  if (q.order_by !== undefined) {
    if (!Array.isArray(q.order_by)) throw new StatsQueryError(`#/order_by: Type mismatch. Expected Array but got ${typeName(q.order_by)}.`);
    orderBy = q.order_by.map((entry, i) => {
      if (!Array.isArray(entry) || entry.length !== 2 || typeof entry[0] !== 'string' || (entry[1] !== 'asc' && entry[1] !== 'desc')) throw new StatsQueryError(`#/order_by/${i}: Invalid value in order_by ${inspect(entry)}`);
      return [entry[0], entry[1]] as [string, 'asc' | 'desc'];
    });
  }
  const include = q.include ?? {};
  if (include === null || typeof include !== 'object' || Array.isArray(include)) throw new StatsQueryError(`#/include: Type mismatch. Expected Object but got ${typeName(include)}.`);
  for (const [key, value] of Object.entries(include)) {
    if (!['imports', 'time_labels', 'partial_time_labels', 'present_index', 'total_rows'].includes(key)) throw new StatsQueryError(`#/include/${key}: Schema does not allow additional properties.`);
    if (typeof value !== 'boolean') throw new StatsQueryError(`#/include/${key}: Type mismatch. Expected Boolean but got ${typeName(value)}.`);
  }
  let pagination: Checked['pagination'];
  if (q.pagination !== undefined) {
    const p = q.pagination as Record<string, unknown>;
    if (p === null || typeof p !== 'object' || Array.isArray(p)) throw new StatsQueryError(`#/pagination: Type mismatch. Expected Object but got ${typeName(p)}.`);
    for (const key of Object.keys(p)) if (key !== 'limit' && key !== 'offset') throw new StatsQueryError(`#/pagination/${key}: Schema does not allow additional properties.`);
    const limit = p.limit ?? MAX_LIMIT;
    const offset = p.offset ?? 0;
    if (!Number.isInteger(limit) || (limit as number) < 1 || (limit as number) > MAX_LIMIT) throw new StatsQueryError(`#/pagination/limit: Expected an integer from 1 to ${MAX_LIMIT} but got ${inspect(limit)}.`);
    if (!Number.isInteger(offset) || (offset as number) < 0) throw new StatsQueryError(`#/pagination/offset: Expected a non-negative integer but got ${inspect(offset)}.`);
    pagination = { limit: limit as number, offset: offset as number };
  }
  return { siteId: q.site_id, metrics, dimensions: dimensions as string[], filters, orderBy, include: include as Checked['include'], pagination, dateRange: q.date_range };
}

function typeName(value: unknown): string {
  if (value === null) return 'Null';
  if (Array.isArray(value)) return 'Array';
  return { string: 'String', number: Number.isInteger(value) ? 'Integer' : 'Number', boolean: 'Boolean', object: 'Object' }[typeof value as 'string'] ?? 'Null';
}

/** Whether `date_range` needs the workspace's first event (`all`). */
export function needsFirstEvent(body: unknown): boolean {
  return typeof body === 'object' && body !== null && (body as { date_range?: unknown }).date_range === 'all';
}

/** Compiles a Stats API v2 query; 400 (StatsQueryError) with Plausible's message for a bad one. */
export function compileStatsQuery(body: unknown, context: StatsContext): CompiledStatsQuery {
  const q = checkShape(body);
  const range = resolveDateRange(q.dateRange, context.timezone, context.now, context.firstEvent);
  const params = new SqlParams();
  const tz = params.bind(context.timezone, 'String');
  const rangeStart = params.bind(localDate(range.from, range.timezone), 'Date');
  const timeBuckets = new Map<string, TimeBucket>();
  for (const d of q.dimensions) if (isTimeDimension(d)) timeBuckets.set(d, d === 'time' ? autoBucket(range) : (d.slice(5) as TimeBucket));

  const propertyValue = (name: string) => `JSONExtractString(props, ${params.bind(name, 'String')})`;
  /** A dimension's value for filters: the same as answered. */
  const valueOf = (dimension: string): string | undefined => {
    if ((VISIT_DIMENSIONS as readonly string[]).includes(dimension)) return visitDimensionSql(dimension, params);
    if (dimension === 'event:page') return 'path';
    if (dimension === 'event:goal') return `if(isPage, '', name)`;
    if (dimension === 'event:name') return `if(isPage, 'pageview', name)`;
    if (dimension.startsWith('event:props:') && dimension.length > 'event:props:'.length) return propertyValue(dimension.slice('event:props:'.length));
    return undefined;
  };

  // Filters: every event's condition, and without the goal filters (conversion_rate's divisor).
  const facts: FilterFacts = { dimensions: [] };
  const scope: FilterScope = { params, valueOf };
  const conditions = q.filters.map((f, i) => compileFilter(f, `#/filters/${i}`, scope, facts, 0));
  const notTopLevel = facts.dimensions.find((d) => d.depth > 0 && d.name === 'event:goal');
  if (notTopLevel) throw new StatsQueryError('Invalid filters. Dimension `event:goal` can only be filtered at the top level.');
  const goalFree = withoutGoalFilters(q.filters).map((f, i) => compileFilter(f, `#/filters/${i}`, scope, { dimensions: [] }, 0));
  // The bounce rate of visits filtered by page counts those that entered on it (as Plausible does).
  const pageFilters = q.filters.filter((f) => Array.isArray(f) && f[1] === 'event:page');
  const entryScope: FilterScope = { params, valueOf: (d) => (d === 'event:page' ? 'entryPage' : valueOf(d)) };
  const bounceConditions = pageFilters.map((f, i) => compileFilter(f, `#/filters/${i}`, entryScope, { dimensions: [] }, 0));
  const eventFiltered = facts.dimensions.some((d) => d.name.startsWith('event:'));

  const dimensions: Dimension[] = q.dimensions.map((name) => {
    const bucket = timeBuckets.get(name);
    if (bucket) {
      // A visit counts under its start's bucket, or a stored one under its last event's (Plausible's).
      const visitTime = context.storedVisits ? 'sessionEnd' : 'sessionStart';
      return { name, kind: 'time', sql: bucketSql('ts', bucket, tz, rangeStart), visitRow: `${bucketSql(`fromUnixTimestamp64Micro(${visitTime}, 'UTC')`, bucket, tz, rangeStart)} = d_0` };
    }
    const sql = name.startsWith('event:props:') ? `if(${valueOf(name)!} = '', '(none)', ${valueOf(name)!})` : valueOf(name)!;
    if (name === 'event:page') return { name, kind: 'event', sql, visitRow: 'entryPage = path' };
    return { name, kind: name.startsWith('event:') ? 'event' : 'visit', sql, visitRow: '1' };
  });
  // The time bucket's row condition compares with its own column.
  dimensions.forEach((d, i) => {
    if (d.kind === 'time') d.visitRow = d.visitRow.replace(/d_0$/, `d_${i}`);
  });

  // Plausible's checks of the parsed query, in its order.
  const queried = new Set<string>([...q.metrics, ...q.dimensions]);
  const badOrder = q.orderBy?.find(([value]) => !queried.has(value));
  if (badOrder) {
    if (!STATS_METRICS.includes(badOrder[0] as StatsMetric) && !isKnownDimension(badOrder[0])) throw new StatsQueryError(`Invalid order_by entry '${inspect(badOrder)}'.`);
    throw new StatsQueryError(`Invalid order_by entry '{${JSON.stringify(badOrder[0])}, :${badOrder[1]}}'. Entry is not a queried metric or dimension.`);
  }
  const goalQueried = q.dimensions.includes('event:goal') || facts.dimensions.some((d) => d.name === 'event:goal');
  for (const metric of q.metrics) {
    if (metric === 'conversion_rate' && !goalQueried) throw new StatsQueryError('Metric `conversion_rate` can only be queried with event:goal filters or dimensions.');
    if (metric === 'views_per_visit') {
      if (facts.dimensions.some((d) => d.name === 'event:page')) throw new StatsQueryError('Metric `views_per_visit` cannot be queried with a filter on `event:page`.');
      if (q.dimensions.length > 0) throw new StatsQueryError('Metric `views_per_visit` cannot be queried with `dimensions`.');
    }
  }
  const sessionMetrics = q.metrics.filter((m) => SESSION_METRICS.has(m));
  if (sessionMetrics.length > 0 && q.dimensions.some((d) => d.startsWith('event:') && d !== 'event:page')) {
    throw new StatsQueryError(`Session metric(s) \`${sessionMetrics.join(', ')}\` cannot be queried along with event dimensions.`);
  }
  if (q.include.time_labels && timeBuckets.size === 0) throw new StatsQueryError('Invalid include.time_labels: requires a time dimension.');
  for (const key of ['partial_time_labels', 'present_index'] as const) if (q.include[key] && timeBuckets.size === 0) throw new StatsQueryError(`Invalid include.${key}: requires a time dimension.`);
  const bucket = [...timeBuckets.values()][0];
  const allLabels = bucket && (q.include.time_labels || q.include.partial_time_labels || q.include.present_index) ? timeLabels(range, bucket) : undefined;

  // The statement.
  const timeout = params.bind(context.sessionTimeoutMinutes * 60_000_000, 'Int64');
  const from = params.bind(toEngineDateTime(BigInt(range.from) * 1000n), "DateTime64(6, 'UTC')");
  const to = params.bind(toEngineDateTime(BigInt(range.to) * 1000n + 999n), "DateTime64(6, 'UTC')");
  const inRange = `timestamp >= ${from} AND timestamp <= ${to}`;
  const visitsInRange = `start >= ${from} - INTERVAL ${LONGEST_VISIT_DAYS} DAY AND end >= ${from} AND start <= ${to}`;
  const sessionNeeds = needs([...q.dimensions, ...facts.dimensions.map((d) => d.name)]);
  const and = (parts: string[]) => (parts.length === 0 ? '1' : parts.join(' AND '));
  const goalDimension = q.dimensions.includes('event:goal') ? ["NOT isPage AND name != ''"] : [];
  const dimensionColumns = dimensions.map((d, i) => `${d.sql} AS d_${i}`);
  const dimensionNames = dimensions.map((_, i) => `d_${i}`);
  const needsTotals = q.metrics.includes('percentage') || q.metrics.includes('conversion_rate');
  // A query whose dimensions and filters are all of visits reads one row per visit; the others
  // one per event, grouped by visit and dimension values.
  const visitLevel = !eventFiltered && dimensions.every((d) => d.kind === 'visit');
  let perVisit: string;
  if (visitLevel) {
    perVisit = `SELECT personId, ${dimensionColumns.map((c) => `${c}, `).join('')}
      ${and(conditions)} AS anyM, ${and(goalFree)} AS anyM0, if(anyM, eventCount, 0) AS ev, if(anyM, sessionPageviews, 0) AS pv,
      ${sessionMetrics.length === 0 ? '0' : 'anyM'} AS sc, sc AS scb,
      bounce AS b, intDiv(sessionEnd - sessionStart, 1000000) AS dur, sessionPageviews AS spv
    FROM ${sessionVisits(inRange, timeout, sessionNeeds)}`;
  } else {
    const rows = `SELECT personId, sessionNo, isPage, sessionStart, sessionEnd, sessionPageviews, bounce,
      ${and([...conditions, ...goalDimension])} AS m, ${and(goalFree)} AS m0, ${and(bounceConditions)} AS bm
      ${dimensionColumns.map((c) => `, ${c}`).join('')}
      ${dimensions.map((d, i) => `, ${d.visitRow} AS v_${i}`).join('')}
    FROM ${context.storedVisits ? storedVisitEvents(inRange, visitsInRange) : sessionEvents(inRange, timeout, sessionNeeds)}`;
    const visitRow = and(dimensions.map((_, i) => `v_${i}`));
    // Per visit and dimension values; `vr`: whether the visit is counted under these values (its
    // own start bucket and entry page), `vrb`: and its entry page passes the page filters.
    const parts = `SELECT personId, sessionNo, ${dimensionNames.map((d) => `${d}, `).join('')}
      max(m) AS anyM, max(m0) AS anyM0, countIf(m) AS ev, countIf(m AND isPage) AS pv,
      max(${visitRow}) AS vr, max(${visitRow} AND bm) AS vrb,
      any(bounce) AS b, any(intDiv(sessionEnd - sessionStart, 1000000)) AS dur, any(sessionPageviews) AS spv
    FROM (${rows})
    GROUP BY personId, sessionNo${dimensionNames.map((d) => `, ${d}`).join('')}`;
    // Visits counted for session metrics: those with an event the filters select. Unless the
    // filters name events and the dimensions split visits (time buckets, pages), each group is a
    // whole visit (or the filters hold for all its events or none), so its own anyM says it.
    const splits = dimensions.some((d) => d.visitRow !== '1');
    const selected = sessionMetrics.length === 0 ? '0' : eventFiltered && splits ? 'max(anyM) OVER (PARTITION BY personId, sessionNo)' : 'anyM';
    perVisit = `SELECT *, ${selected} AND vr AS sc, ${selected} AND vrb AS scb FROM (${parts})`;
  }
  if (context.storedVisits) {
    // Each top-level filter is of visits or of pages alone, or the question reads events.
    const kinds = q.filters.map((f) => filterKind(f));
    const stored: StoredQuestion = {
      metrics: q.metrics,
      dimensions,
      buckets: timeBuckets,
      visitConditions: conditions.filter((_, i) => kinds[i] === 'visit'),
      pageConditions: conditions.filter((_, i) => kinds[i] === 'page'),
      entryConditions: bounceConditions,
      visitsInRange,
      eventsInRange: inRange,
      from,
      tz,
      rangeStart,
    };
    const answered = kinds.every((k) => k !== 'other') ? storedVisitsSource(stored) ?? pagesSource(stored) ?? goalsSource(stored) : undefined;
    if (answered) return finish(answered.source, answered.metrics, answered.having);
  }
  const withTotals = needsTotals ? `SELECT *, uniqExactIf(personId, anyM) OVER () AS totalVisitors, uniqExactIf(personId, anyM0) OVER () AS totalVisitors0 FROM (${perVisit})` : `SELECT *, 0 AS totalVisitors, 0 AS totalVisitors0 FROM (${perVisit})`;
  return finish(`FROM (${withTotals})`);

  /** The statement and its shaping, given what it reads (`FROM` ... with the metric columns' inputs). */
  function finish(source: string, storedMetrics?: Record<StatsMetric, string>, storedHaving?: string): CompiledStatsQuery {
  const metricSql: Record<StatsMetric, string> = storedMetrics ?? {
    visitors: 'uniqExactIf(personId, anyM)',
    visits: 'countIf(anyM)',
    pageviews: 'sum(pv)',
    events: 'sum(ev)',
    bounce_rate: 'toUInt32(ifNotFinite(round(countIf(scb AND b) / countIf(scb) * 100), 0))',
    visit_duration: 'toUInt32(ifNotFinite(round(sumIf(dur, sc) / countIf(sc)), 0))',
    views_per_visit: 'ifNotFinite(round(sumIf(spv, sc) / countIf(sc), 2), 0)',
    percentage: 'ifNotFinite(round(uniqExactIf(personId, anyM) / any(totalVisitors) * 100, 2), 0)',
    conversion_rate: 'ifNotFinite(round(uniqExactIf(personId, anyM) / any(totalVisitors0) * 100, 2), 0)',
  };
  const metricColumns = q.metrics.map((m, i) => `${metricSql[m]} AS m_${i}`);

  // Order: as asked, else the time dimension ascending and the first metric descending; then the
  // dimensions ascending, so that ties always come in the same order.
  const orderBy = q.orderBy ?? [...q.dimensions.filter(isTimeDimension).map((d) => [d, 'asc'] as [string, 'asc' | 'desc']), [q.metrics[0]!, 'desc'] as [string, 'asc' | 'desc']];
  const columnOf = (value: string) => (q.dimensions.includes(value) ? `d_${q.dimensions.indexOf(value)}` : `m_${q.metrics.indexOf(value as StatsMetric)}`);
  const orderTerms = [...orderBy.map(([value, direction]) => `${columnOf(value)} ${direction.toUpperCase()}`), ...dimensionNames.map((d) => `${d} ASC`)];
  const limit = params.bind(q.pagination?.limit ?? MAX_LIMIT, 'UInt32');
  const offset = params.bind(q.pagination?.offset ?? 0, 'UInt64');
  const grouped = dimensions.length > 0;
  const sql = `SELECT ${dimensionNames.map((d) => `${d}, `).join('')}${metricColumns.join(', ')}, count() OVER () AS total_rows
${source}
${grouped ? `GROUP BY ${dimensionNames.join(', ')}\nHAVING ${storedHaving ?? 'countIf(anyM) > 0 OR countIf(sc) > 0'}` : ''}
ORDER BY ${orderTerms.join(', ')}
LIMIT ${limit} OFFSET ${offset}`;

  const echo: Record<string, unknown> = {
    site_id: q.siteId,
    metrics: q.metrics,
    date_range: [isoWithOffset(range.from, range.timezone), isoWithOffset(range.to, range.timezone)],
    filters: q.filters,
    dimensions: q.dimensions,
    order_by: orderBy,
    include: q.include,
    ...(q.pagination ? { pagination: { offset: q.pagination.offset, limit: q.pagination.limit } } : {}),
  };

  return {
    sql,
    params: params.values,
    answer(rowsOut: Row[]): StatsAnswer {
      const meta: StatsAnswer['meta'] = {};
      if (q.include.imports) {
        meta.imports_included = false;
        meta.imports_skip_reason = 'no_imported_data';
        meta.imports_warning = 'Imported stats are not included: this service holds no imported data.';
      }
      if (q.include.time_labels) meta.time_labels = allLabels;
      if (q.include.partial_time_labels) meta.partial_time_labels = partialTimeLabels(allLabels!, range, bucket!, context.now);
      if (q.include.present_index) meta.present_index = presentIndex(allLabels!, range, bucket!, context.now);
      if (q.include.total_rows) meta.total_rows = rowsOut.length > 0 ? Number(rowsOut[0]!.total_rows) : 0;
      return {
        results: rowsOut.map((row) => ({
          metrics: q.metrics.map((_, i) => Number(row[`m_${i}`])),
          dimensions: dimensionNames.map((d) => String(row[d])),
        })),
        meta,
        query: echo,
      };
    },
  };
}
}
