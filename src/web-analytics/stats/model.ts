import { t } from 'elysia';

/**
 * Plausible's Stats API v2 query (`POST /api/v2/query`) and answer, as documented at
 * https://plausible.io/docs/stats-api. The route checks a body itself (compile.ts), so that a bad
 * one is answered with Plausible's messages; these schemas describe it for the OpenAPI document.
 */

export const STATS_METRICS = ['visitors', 'visits', 'pageviews', 'views_per_visit', 'bounce_rate', 'visit_duration', 'events', 'percentage', 'conversion_rate'] as const;
export type StatsMetric = (typeof STATS_METRICS)[number];

/** Metrics Plausible knows that this service does not compute (answered 400, named as unsupported). */
export const UNSUPPORTED_METRICS = ['scroll_depth', 'group_conversion_rate', 'average_revenue', 'total_revenue', 'time_on_page', 'exit_rate'] as const;

export const TIME_DIMENSIONS = ['time', 'time:hour', 'time:day', 'time:week', 'time:month'] as const;
export const EVENT_DIMENSIONS = ['event:page', 'event:goal', 'event:name'] as const;
export const VISIT_DIMENSIONS = [
  'visit:entry_page',
  'visit:exit_page',
  'visit:source',
  'visit:referrer',
  'visit:utm_medium',
  'visit:utm_source',
  'visit:utm_campaign',
  'visit:utm_content',
  'visit:utm_term',
  'visit:device',
  'visit:browser',
  'visit:os',
  'visit:country',
  'visit:country_name',
  'visit:region',
  'visit:city_name',
] as const;

export const FILTER_OPERATORS = ['is', 'is_not', 'contains', 'contains_not', 'matches', 'matches_not'] as const;
export type FilterOperator = (typeof FILTER_OPERATORS)[number];

/** At most this many rows a page (Plausible's default and bound). */
export const MAX_LIMIT = 10_000;

const Filter = t.Array(t.Unknown(), {
  description:
    'A filter in Plausible\'s array form: `[operator, dimension, [values], { "case_sensitive": false }?]` with operators `is`, `is_not`, `contains`, `contains_not`, `matches`, `matches_not` (re2), or `["and" | "or", [filters]]`, `["not", filter]`.',
  examples: [['is', 'visit:country', ['DE', 'FR']]],
});

export const StatsQuery = t.Object(
  {
    site_id: t.String({ description: "The workspace's id, or one of its `siteDomains` (any, when it lists none)." }),
    metrics: t.Array(t.String(), { minItems: 1, description: `Any of ${STATS_METRICS.join(', ')}.` }),
    date_range: t.Union([t.String(), t.Array(t.String(), { minItems: 2, maxItems: 2 })], {
      description: '`day`, `24h`, `7d`, `28d`, `30d`, `91d`, `month`, `6mo`, `12mo`, `year`, `all`, or a pair of ISO 8601 dates, or date-times with offsets.',
    }),
    dimensions: t.Optional(t.Array(t.String(), { description: 'Event, visit and time dimensions to group by (docs/api/stats.md lists them).' })),
    filters: t.Optional(t.Array(Filter)),
    order_by: t.Optional(t.Array(t.Array(t.String(), { minItems: 2, maxItems: 2 }), { description: 'Pairs of a queried metric or dimension and `asc` or `desc`.' })),
    include: t.Optional(t.Object({ imports: t.Optional(t.Boolean()), time_labels: t.Optional(t.Boolean()), partial_time_labels: t.Optional(t.Boolean()), present_index: t.Optional(t.Boolean()), total_rows: t.Optional(t.Boolean()) })),
    pagination: t.Optional(t.Object({ limit: t.Optional(t.Integer({ minimum: 1, maximum: MAX_LIMIT })), offset: t.Optional(t.Integer({ minimum: 0 })) })),
  },
  {
    examples: [{ site_id: 'example.com', metrics: ['visitors', 'visits', 'bounce_rate', 'visit_duration'], date_range: '7d', dimensions: ['visit:source'], order_by: [['visitors', 'desc']] }],
  },
);
export type StatsQuery = typeof StatsQuery.static;

export const StatsAnswer = t.Object({
  results: t.Array(t.Object({ metrics: t.Array(t.Number()), dimensions: t.Array(t.String()) })),
  meta: t.Object({
    time_labels: t.Optional(t.Array(t.String())),
    partial_time_labels: t.Optional(t.Array(t.String(), { description: 'Of the time labels, those whose bucket the range or now cuts: the first when the range starts within it, the last when it is not over (today).' })),
    present_index: t.Optional(t.Union([t.Integer(), t.Null()], { description: 'The index of the time label of the bucket holding now, or null.' })),
    total_rows: t.Optional(t.Integer()),
    imports_included: t.Optional(t.Boolean()),
    imports_skip_reason: t.Optional(t.String()),
    imports_warning: t.Optional(t.String()),
  }),
  query: t.Record(t.String(), t.Unknown(), { description: 'The query as run: the date range resolved, the default order written out.' }),
});
export type StatsAnswer = typeof StatsAnswer.static;

/** Plausible's error shape. */
export const StatsError = t.Object({ error: t.String() }, { description: "Plausible's error shape: `{ \"error\": message }`." });
