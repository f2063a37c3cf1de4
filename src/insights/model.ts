import { Type } from '@sinclair/typebox';
import { t } from 'elysia';
import { literalUnion } from '../events/model';
import { Filters, PropertyFilter } from '../filters/model';

/**
 * The request and answer schemas of the insights (section 12 of the contract fixes their names;
 * docs/api/insights.md says what each field means). Every field a user names reaches the engine
 * only as a bound parameter or a checked column name. Integers are TypeBox's own: Elysia's
 * t.Integer would also take numeric strings such as "7".
 */

export const INTERVALS = ['hour', 'day', 'week', 'month'] as const;
export type Interval = (typeof INTERVALS)[number];

export const TREND_MATHS = ['total', 'persons', 'groups', 'dau', 'wau', 'mau', 'sum', 'avg', 'min', 'max', 'median', 'p90', 'p95', 'p99'] as const;
export type TrendMath = (typeof TREND_MATHS)[number];
/** Maths over a numeric property of the events, which a series of them must name. */
export const PROPERTY_MATHS: readonly TrendMath[] = ['sum', 'avg', 'min', 'max', 'median', 'p90', 'p95', 'p99'];

const EventName = t.String({ minLength: 1, maxLength: 200, description: 'An event name (`event` of the events), `$pageview` for every page view, or `$any` for any event.' });
const Time = t.String({
  minLength: 1,
  maxLength: 40,
  description: 'ISO 8601 (a date, or a date-time; without an offset, in `timezone`), or relative to now: `-7d`, `-24h`, `-2w`, `-3m` (months), `-1y`.',
});

/** The time fields every insight over a range of periods takes. */
export const TimeFields = {
  dateFrom: t.Optional({ ...Time, description: `${Time.description} Default -7d.` }),
  dateTo: t.Optional({ ...Time, description: `${Time.description} Default now.` }),
  timezone: t.Optional(t.String({ minLength: 1, maxLength: 64, description: 'An IANA time zone: where days, weeks (from Monday) and months start. Default UTC.' })),
};

export const IntervalField = literalUnion(INTERVALS, 'Default day.');

export const IncludeBots = t.Boolean({
  description: 'Whether events of automated clients (`context.bot`: crawlers, headless browsers) are counted. Default false: they are left out, as Plausible and PostHog leave them out.',
})
export const AggregateBy = literalUnion(['person', 'group'], 'Who is counted: persons (stitched across their ids) or groups (groupId). Default person.');
export type AggregateBy = 'person' | 'group';

/** Breakdown values at most (the rest are `$other`). */
export const MAX_BREAKDOWN_LIMIT = 50;

export const Breakdown = t.Object(
  {
    property: PropertyFilter.properties.property,
    source: PropertyFilter.properties.source,
    limit: t.Optional(Type.Integer({ minimum: 1, maximum: MAX_BREAKDOWN_LIMIT, description: 'Top values kept (default 10); the others are summed as `$other`.' })),
  },
  { additionalProperties: false },
);
export type Breakdown = typeof Breakdown.static;

/** An event matched by name and filters: a funnel's step, a retention's start or return. */
export const EventMatch = t.Object({ event: EventName, filters: t.Optional(Filters) }, { additionalProperties: false });
export type EventMatch = typeof EventMatch.static;

export const TrendSeries = t.Object(
  {
    event: EventName,
    math: t.Optional(literalUnion(TREND_MATHS, 'Default total.')),
    property: t.Optional({ ...PropertyFilter.properties.property, description: 'The numeric event property of sum, avg, min, max, median and the percentiles.' }),
    filters: t.Optional(Filters),
  },
  { additionalProperties: false },
);
export type TrendSeries = typeof TrendSeries.static;

const SeriesList = t.Array(TrendSeries, { minItems: 1, maxItems: 10, error: 'must be a list of 1 to 10 series' });

export const TrendsQuery = t.Object(
  {
    series: SeriesList,
    ...TimeFields,
    interval: t.Optional(IntervalField),
    filters: t.Optional(Filters),
    includeBots: t.Optional(IncludeBots),
    breakdown: t.Optional(Breakdown),
    compare: t.Optional(t.Boolean({ description: 'Also answer the period of the same length just before.' })),
    formula: t.Optional(t.String({ minLength: 1, maxLength: 200, description: 'Arithmetic over the series by letter (A the first): `A / B * 100`. Answered instead of the series.' })),
  },
  { additionalProperties: false, examples: [{ series: [{ event: 'signup', math: 'persons' }], dateFrom: '-7d', interval: 'day' }] },
);
export type TrendsQuery = typeof TrendsQuery.static;

export const TrendResult = t.Object({
  label: t.String(),
  series: t.Optional(Type.Integer({ description: 'Index of the series in the request; absent for a formula.' })),
  breakdownValue: t.Optional(t.String()),
  compare: t.Optional(literalUnion(['current', 'previous'])),
  labels: t.Array(t.String(), { description: 'The start of each period: a date, or for hours a date-time with its offset.' }),
  data: t.Array(t.Number()),
  total: t.Number({ description: 'Over the whole range: the count of distinct actors for persons and groups maths, else the sum of data.' }),
});
/** `incompleteFrom` of the answers over periods (trends, retention, stickiness, lifecycle). */
const IncompleteFrom = t.Optional(
  t.String({ description: "The label of the range's first period not over at the time of the request (the one holding now): it and those after it are counted so far, not finished. Absent when every period has ended." }),
);
export const TrendsAnswer = t.Object({ results: t.Array(TrendResult), incompleteFrom: IncompleteFrom });

export const FUNNEL_VIZ_TYPES = ['steps', 'trends', 'time_to_convert'] as const;

export const WINDOW_UNITS = ['second', 'minute', 'hour', 'day', 'week', 'month'] as const;
export type WindowUnit = (typeof WINDOW_UNITS)[number];

export const FunnelsQuery = t.Object(
  {
    steps: t.Array(EventMatch, { minItems: 2, maxItems: 10, error: 'must be a list of 2 to 10 steps' }),
    window: t.Optional(
      t.Object(
        { value: Type.Integer({ minimum: 1, maximum: 100_000 }), unit: literalUnion(WINDOW_UNITS) },
        { additionalProperties: false, description: 'Time from the first step within which the others must happen. Default 14 days.' },
      ),
    ),
    order: t.Optional(literalUnion(['ordered', 'strict', 'unordered'], 'Default ordered.')),
    exclusions: t.Optional(
      t.Array(t.Object({ event: EventName, fromStep: Type.Integer({ minimum: 0, maximum: 9 }), toStep: Type.Integer({ minimum: 1, maximum: 9 }) }, { additionalProperties: false }), { maxItems: 10 }),
    ),
    aggregateBy: t.Optional(AggregateBy),
    breakdown: t.Optional(Breakdown),
    filters: t.Optional(Filters),
    includeBots: t.Optional(IncludeBots),
    funnelVizType: t.Optional(
      literalUnion(FUNNEL_VIZ_TYPES, 'What is answered (PostHog\'s names): `steps` (default) the counts and times of each step; `trends` the conversion of each period; `time_to_convert` a histogram of the times from one step to another.'),
    ),
    funnelFromStep: t.Optional(Type.Integer({ minimum: 0, maximum: 8, description: 'trends and time_to_convert: the step (from 0) conversions are counted from. Default 0.' })),
    funnelToStep: t.Optional(Type.Integer({ minimum: 1, maximum: 9, description: 'trends and time_to_convert: the step (from 0) conversions are counted to. Default the last.' })),
    interval: t.Optional(literalUnion(INTERVALS, 'trends: the periods, of the first step\'s time. Default day.')),
    binCount: t.Optional(Type.Integer({ minimum: 1, maximum: 90, description: 'time_to_convert: the number of bins. Default the cube root of the conversions, from 1 to 60.' })),
    ...TimeFields,
  },
  { additionalProperties: false, examples: [{ steps: [{ event: 'pricing_viewed' }, { event: 'signup' }, { event: 'purchase' }], dateFrom: '-30d' }] },
);
export type FunnelsQuery = typeof FunnelsQuery.static;

export const FunnelStep = t.Object({
  event: t.String(),
  count: t.Number(),
  conversionRate: t.Number({ description: 'Of those who did the first step, as a fraction.' }),
  stepConversionRate: t.Number({ description: 'Of those who did the step before, as a fraction.' }),
  medianSeconds: t.Union([t.Number(), t.Null()], { description: 'From the step before; null for the first.' }),
  averageSeconds: t.Union([t.Number(), t.Null()]),
});
export const FunnelsAnswer = t.Object({ results: t.Array(t.Object({ breakdownValue: t.Optional(t.String()), steps: t.Array(FunnelStep) })) });
export const FunnelTrendsAnswer = t.Object({
  results: t.Array(
    t.Object({
      labels: t.Array(t.String(), { description: 'The start of each period of the first step, as trends label them.' }),
      entered: t.Array(t.Number(), { description: 'Actors who reached `funnelFromStep` in a conversion started in the period.' }),
      completed: t.Array(t.Number(), { description: 'Of those, the actors who reached `funnelToStep`.' }),
      conversionRate: t.Array(t.Number(), { description: 'completed over entered, as a fraction (0 when none entered).' }),
    }),
  ),
  incompleteFrom: IncompleteFrom,
});
export const FunnelTimeToConvertAnswer = t.Object({
  results: t.Array(
    t.Object({
      conversions: t.Number({ description: 'Actors who converted from `funnelFromStep` to `funnelToStep`.' }),
      averageSeconds: t.Union([t.Number(), t.Null()]),
      medianSeconds: t.Union([t.Number(), t.Null()]),
      binWidthSeconds: t.Union([t.Number(), t.Null()]),
      bins: t.Array(t.Object({ fromSeconds: t.Number(), count: t.Number() }), { description: 'From the shortest time (whole seconds, down), each `binWidthSeconds` wide; the last takes the longest time.' }),
    }),
  ),
});

export const RETENTION_PERIODS = ['day', 'week', 'month'] as const;

export const RetentionQuery = t.Object(
  {
    startEvent: EventMatch,
    returnEvent: EventMatch,
    period: t.Optional(literalUnion(RETENTION_PERIODS, 'Default day.')),
    periods: t.Optional(Type.Integer({ minimum: 1, maximum: 36, description: 'Cohorts and periods after each (default 7).' })),
    type: t.Optional(literalUnion(['recurring', 'first_time'], 'Default recurring.')),
    aggregateBy: t.Optional(AggregateBy),
    filters: t.Optional(Filters),
    includeBots: t.Optional(IncludeBots),
    breakdown: t.Optional(Breakdown),
    dateTo: TimeFields.dateTo,
    timezone: TimeFields.timezone,
  },
  { additionalProperties: false, examples: [{ startEvent: { event: 'signup' }, returnEvent: { event: '$any' }, period: 'week', periods: 8 }] },
);
export type RetentionQuery = typeof RetentionQuery.static;

export const RetentionAnswer = t.Object({
  results: t.Array(
    t.Object({
      breakdownValue: t.Optional(t.String()),
      cohort: t.String({ description: 'The start of the cohort period (a date).' }),
      size: t.Number(),
      values: t.Array(t.Number(), { description: 'Of the cohort, how many returned in period 0, 1, ...' }),
    }),
  ),
  incompleteFrom: IncompleteFrom,
});

export const PathsQuery = t.Object(
  {
    start: t.Optional({ ...EventName, description: 'Paths from this event (or page path, for page events).' }),
    end: t.Optional({ ...EventName, description: 'Paths to this event (or page path).' }),
    steps: t.Optional(Type.Integer({ minimum: 2, maximum: 10, description: 'Steps of each path (default 5).' })),
    include: t.Optional(t.Array(EventName, { maxItems: 50, description: 'Only these events (or page paths).' })),
    exclude: t.Optional(t.Array(EventName, { maxItems: 50 })),
    limit: t.Optional(Type.Integer({ minimum: 1, maximum: 1000, description: 'Edges at most (default 50), the largest.' })),
    aggregateBy: t.Optional(AggregateBy),
    filters: t.Optional(Filters),
    includeBots: t.Optional(IncludeBots),
    ...TimeFields,
  },
  { additionalProperties: false, examples: [{ start: '/pricing', steps: 4, dateFrom: '-14d' }] },
);
export type PathsQuery = typeof PathsQuery.static;

export const PathsAnswer = t.Object({
  results: t.Array(t.Object({ source: t.String({ description: '`<step>_<event>`, step from 1.' }), target: t.String(), value: t.Number() })),
});

export const StickinessQuery = t.Object(
  {
    series: SeriesList,
    ...TimeFields,
    interval: t.Optional(IntervalField),
    aggregateBy: t.Optional(AggregateBy),
    filters: t.Optional(Filters),
    includeBots: t.Optional(IncludeBots),
  },
  { additionalProperties: false, examples: [{ series: [{ event: 'dashboard_viewed' }], dateFrom: '-30d', interval: 'day' }] },
);
export type StickinessQuery = typeof StickinessQuery.static;

export const StickinessAnswer = t.Object({
  results: t.Array(
    t.Object({
      label: t.String(),
      series: Type.Integer(),
      labels: t.Array(t.String(), { description: '1, 2, ...: periods active.' }),
      data: t.Array(t.Number(), { description: 'Actors active in exactly that many periods of the range.' }),
    }),
  ),
  incompleteFrom: IncompleteFrom,
});

export const LifecycleQuery = t.Object(
  {
    series: t.Array(TrendSeries, { minItems: 1, maxItems: 1, error: 'must be a list of one series' }),
    ...TimeFields,
    interval: t.Optional(IntervalField),
    aggregateBy: t.Optional(AggregateBy),
    filters: t.Optional(Filters),
    includeBots: t.Optional(IncludeBots),
  },
  { additionalProperties: false, examples: [{ series: [{ event: '$any' }], dateFrom: '-30d', interval: 'week' }] },
);
export type LifecycleQuery = typeof LifecycleQuery.static;

export const LIFECYCLE_STATUSES = ['new', 'returning', 'resurrecting', 'dormant'] as const;

export const LifecycleAnswer = t.Object({
  results: t.Array(t.Object({ label: literalUnion(LIFECYCLE_STATUSES), labels: t.Array(t.String()), data: t.Array(t.Number({ description: 'dormant as negative numbers' })) })),
  incompleteFrom: IncompleteFrom,
});

/** `?explain=1`: the statement a request compiles to, with its parameters, instead of its answer. */
export const ExplainQuery = t.Object({ explain: t.Optional(literalUnion(['0', '1'] as const)) }, { additionalProperties: false });
export const Explained = t.Object({
  sql: t.String({ description: 'The statement with its parameters written in as literals: runnable through POST /queries.' }),
  statement: t.String({ description: 'The statement as the service runs it, its values bound as `{pN:Type}` parameters.' }),
  params: t.Record(t.String(), t.Unknown()),
});

/** Actors listed at most per page of `POST /insights/<kind>/persons`. */
export const MAX_ACTORS_PAGE = 1000;

/** What every persons request takes beside its query and selector: a page of the actors. */
const ActorsPage = {
  limit: t.Optional(Type.Integer({ minimum: 1, maximum: MAX_ACTORS_PAGE, description: 'Actors at most (default 100).' })),
  offset: t.Optional(Type.Integer({ minimum: 0, description: 'Actors skipped, in the order listed (default 0).' })),
};
const BreakdownValue = t.Optional(t.String({ maxLength: 1000, description: 'The breakdown value of the point, as answered (`$other` included); required with a breakdown.' }));
const PeriodLabel = t.String({ minLength: 1, maxLength: 40, description: 'The start of the period, as in the answer\'s `labels`.' });

export const TrendsActorsQuery = t.Object(
  { query: TrendsQuery, series: Type.Integer({ minimum: 0, maximum: 9, description: 'Index of the series in the query.' }), label: PeriodLabel, breakdownValue: BreakdownValue, ...ActorsPage },
  { additionalProperties: false },
);
export type TrendsActorsQuery = typeof TrendsActorsQuery.static;

export const FunnelsActorsQuery = t.Object(
  {
    query: FunnelsQuery,
    step: Type.Integer({ minimum: 0, maximum: 9, description: 'Index of the step.' }),
    dropped: t.Optional(t.Boolean({ description: 'Those who reached the step before and not this one, instead of those who converted to it.' })),
    breakdownValue: BreakdownValue,
    ...ActorsPage,
  },
  { additionalProperties: false },
);
export type FunnelsActorsQuery = typeof FunnelsActorsQuery.static;

export const RetentionActorsQuery = t.Object(
  {
    query: RetentionQuery,
    cohort: t.String({ minLength: 1, maxLength: 40, description: 'The cohort, as answered (its period start).' }),
    period: Type.Integer({ minimum: 0, maximum: 35, description: 'Periods after the cohort\'s: 0 for its members.' }),
    breakdownValue: BreakdownValue,
    ...ActorsPage,
  },
  { additionalProperties: false },
);
export type RetentionActorsQuery = typeof RetentionActorsQuery.static;

export const StickinessActorsQuery = t.Object(
  {
    query: StickinessQuery,
    series: Type.Integer({ minimum: 0, maximum: 9, description: 'Index of the series in the query.' }),
    count: Type.Integer({ minimum: 1, maximum: 1000, description: 'Those active in exactly this many periods of the range.' }),
    ...ActorsPage,
  },
  { additionalProperties: false },
);
export type StickinessActorsQuery = typeof StickinessActorsQuery.static;

export const LifecycleActorsQuery = t.Object(
  { query: LifecycleQuery, label: PeriodLabel, status: literalUnion(LIFECYCLE_STATUSES), ...ActorsPage },
  { additionalProperties: false },
);
export type LifecycleActorsQuery = typeof LifecycleActorsQuery.static;

export const ActorsAnswer = t.Object({
  results: t.Array(
    t.Object({
      personId: t.Optional(t.String({ description: 'When persons are counted.' })),
      groupId: t.Optional(t.String({ description: 'When groups are counted (`aggregateBy: group`, or trends\' math `groups`).' })),
      name: t.Optional(t.String({ description: "The actor's latest `name` trait, when it has one." })),
      email: t.Optional(t.String({ description: "A person's latest `email` trait, when they have one." })),
      eventCount: t.Optional(t.Number({ description: 'Trends: the events of the actor counted for the point.' })),
    }),
  ),
  total: t.Number({ description: 'Every actor behind the point: the point\'s count.' }),
  next: t.Optional(t.Number({ description: 'The offset of the next page, when there is one.' })),
});
