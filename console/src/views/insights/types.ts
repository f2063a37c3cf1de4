/**
 * The insights API's requests and answers as the console sends and reads them (the service's
 * schemas in src/insights/model.ts are the source of truth; docs/api/insights.md says what each
 * field means).
 */

export const KINDS = ['trends', 'funnels', 'retention', 'paths', 'stickiness', 'lifecycle'] as const;
export type Kind = (typeof KINDS)[number];

export const OPERATORS = ['eq', 'neq', 'in', 'not_in', 'contains', 'not_contains', 'regex', 'gt', 'gte', 'lt', 'lte', 'is_set', 'is_not_set'] as const;
export type Operator = (typeof OPERATORS)[number];
export type Source = 'event' | 'person' | 'group';
export type Scalar = string | number | boolean;

export interface PropertyFilter {
  property: string;
  source?: Source;
  operator: Operator;
  value?: Scalar | Scalar[];
}
export interface CohortFilter {
  cohort: string;
}
export type Filter = PropertyFilter | CohortFilter;

export const INTERVALS = ['hour', 'day', 'week', 'month'] as const;
export type Interval = (typeof INTERVALS)[number];

export const TREND_MATHS = ['total', 'persons', 'groups', 'dau', 'wau', 'mau', 'sum', 'avg', 'min', 'max', 'median', 'p90', 'p95', 'p99'] as const;
export type TrendMath = (typeof TREND_MATHS)[number];
/** Maths over a numeric property, which a series of them must name. */
export const PROPERTY_MATHS: readonly TrendMath[] = ['sum', 'avg', 'min', 'max', 'median', 'p90', 'p95', 'p99'];

export interface Series {
  event: string;
  math?: TrendMath;
  property?: string;
  filters?: Filter[];
}
export interface EventMatch {
  event: string;
  filters?: Filter[];
}
export interface Breakdown {
  property: string;
  source?: Source;
  limit?: number;
}
export type AggregateBy = 'person' | 'group';

/** Fields every kind may carry (each kind takes only some of them; see KIND_FIELDS). */
export interface CommonFields {
  dateFrom?: string;
  dateTo?: string;
  timezone?: string;
  interval?: Interval;
  filters?: Filter[];
  breakdown?: Breakdown;
  aggregateBy?: AggregateBy;
}

export interface TrendsQuery extends CommonFields {
  series: Series[];
  compare?: boolean;
  formula?: string;
}
export const WINDOW_UNITS = ['second', 'minute', 'hour', 'day', 'week', 'month'] as const;
export type WindowUnit = (typeof WINDOW_UNITS)[number];
export interface FunnelsQuery extends CommonFields {
  steps: EventMatch[];
  window?: { value: number; unit: WindowUnit };
  order?: 'ordered' | 'strict' | 'unordered';
  exclusions?: Array<{ event: string; fromStep: number; toStep: number }>;
  funnelVizType?: FunnelView;
  funnelFromStep?: number;
  funnelToStep?: number;
  binCount?: number;
}
/** A funnel's views, as PostHog names them (docs/api/insights.md#other-views-of-a-funnel). */
export const FUNNEL_VIEWS = ['steps', 'trends', 'time_to_convert'] as const;
export type FunnelView = (typeof FUNNEL_VIEWS)[number];
export interface RetentionQuery extends CommonFields {
  startEvent: EventMatch;
  returnEvent: EventMatch;
  period?: 'day' | 'week' | 'month';
  periods?: number;
  type?: 'recurring' | 'first_time';
}
export interface PathsQuery extends CommonFields {
  start?: string;
  end?: string;
  steps?: number;
  include?: string[];
  exclude?: string[];
  limit?: number;
}
export interface StickinessQuery extends CommonFields {
  series: Series[];
}
export interface LifecycleQuery extends CommonFields {
  series: Series[];
}

export interface QueryOf {
  trends: TrendsQuery;
  funnels: FunnelsQuery;
  retention: RetentionQuery;
  paths: PathsQuery;
  stickiness: StickinessQuery;
  lifecycle: LifecycleQuery;
}
export type AnyQuery = QueryOf[Kind];

export interface TrendResult {
  label: string;
  series?: number;
  breakdownValue?: string;
  compare?: 'current' | 'previous';
  labels: string[];
  data: number[];
  total: number;
}
export interface FunnelStep {
  event: string;
  count: number;
  conversionRate: number;
  stepConversionRate: number;
  medianSeconds: number | null;
  averageSeconds: number | null;
}
export interface FunnelResult {
  breakdownValue?: string;
  steps: FunnelStep[];
}
export interface FunnelTrendResult {
  labels: string[];
  entered: number[];
  completed: number[];
  conversionRate: number[];
}
export interface FunnelTimeResult {
  conversions: number;
  averageSeconds: number | null;
  medianSeconds: number | null;
  binWidthSeconds: number | null;
  bins: Array<{ fromSeconds: number; count: number }>;
}
export interface RetentionRow {
  breakdownValue?: string;
  cohort: string;
  size: number;
  values: number[];
}
export interface PathEdge {
  source: string;
  target: string;
  value: number;
}
export interface StickinessResult {
  label: string;
  series: number;
  labels: string[];
  data: number[];
}
export interface LifecycleResult {
  label: 'new' | 'returning' | 'resurrecting' | 'dormant';
  labels: string[];
  data: number[];
}

/** The label of the first period not over when asked (docs/api/insights.md#incomplete-periods). */
export interface Incomplete {
  incompleteFrom?: string;
}

export interface AnswerOf {
  trends: { results: TrendResult[] } & Incomplete;
  /** By the query's `funnelVizType`: steps (the default), trends or time to convert. */
  funnels: { results: FunnelResult[] } | ({ results: FunnelTrendResult[] } & Incomplete) | { results: FunnelTimeResult[] };
  retention: { results: RetentionRow[] } & Incomplete;
  paths: { results: PathEdge[] };
  stickiness: { results: StickinessResult[] } & Incomplete;
  lifecycle: { results: LifecycleResult[] } & Incomplete;
}

/** The index of `incompleteFrom` in `labels`, when it is one of them. */
export function incompleteIndex(labels: readonly string[], incompleteFrom: string | undefined): number | undefined {
  const i = incompleteFrom === undefined ? -1 : labels.indexOf(incompleteFrom);
  return i < 0 ? undefined : i;
}

/** How a trend is drawn (kept in the URL and in a saved insight's `display`). */
export const TREND_CHARTS = ['line', 'bar', 'stacked', 'area', 'number', 'table'] as const;
export type TrendChart = (typeof TREND_CHARTS)[number];

export interface Display {
  chart?: TrendChart;
}

/** A saved insight as `/insights/saved` answers it (docs/api/dashboards.md). */
export interface SavedInsight {
  id: string;
  name: string;
  kind: Kind | 'sql';
  query: unknown;
  display?: Record<string, unknown>;
  createdAt: string;
  updatedAt: string;
}
