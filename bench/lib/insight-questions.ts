/**
 * The questions of the insights benchmark (bench/insights.ts), each as a request to the service
 * and as tuned SQL answering the same on the engine alone: what someone fluent in ClickHouse
 * would write by hand over the `events_with_persons` view (UTC, the persons benchmark's mix).
 */
export interface InsightQuestion {
  name: string;
  kind: string;
  body: unknown;
  sql: string;
  /** An absolute aim for the service's median, ms, where the issue names one. */
  aim?: number;
  /** For reference: the SQL written without a rule of the definition that costs a read, and which rule. */
  looser?: { without: string; sql: string };
}

const FUNNEL_STEPS = ['view_item', 'add_to_cart', 'purchase', 'share'];
/** The funnels' default window, 14 days, in µs. */
const FUNNEL_WINDOW_MICROS = 14 * 86_400 * 1_000_000;

const LAST_30_DAYS = 'timestamp >= toStartOfDay(now64(6) - INTERVAL 30 DAY) AND timestamp <= now64(6)';

export const INSIGHT_QUESTIONS: InsightQuestion[] = [
  {
    name: 'Trends: persons who purchased, per day, 30 days',
    kind: 'trends',
    body: { series: [{ event: 'purchase', math: 'persons' }], dateFrom: '-30d', interval: 'day' },
    sql: `SELECT toDate(timestamp) AS day, uniqExact(personId) AS persons FROM events_with_persons
      WHERE ${LAST_30_DAYS} AND event = 'purchase' GROUP BY GROUPING SETS ((day), ())`,
  },
  {
    name: 'Trends: events per day by event name (top 5 and $other), 30 days',
    kind: 'trends',
    body: { series: [{ event: '$any' }], dateFrom: '-30d', interval: 'day', breakdown: { property: 'event', limit: 5 } },
    sql: `SELECT if(event IN (SELECT event FROM events WHERE ${LAST_30_DAYS} GROUP BY event ORDER BY count() DESC, event LIMIT 5), event, '$other') AS value,
        toDate(timestamp) AS day, count() AS events
      FROM events WHERE ${LAST_30_DAYS} GROUP BY GROUPING SETS ((value, day), (value))`,
  },
  {
    name: 'Trends: weekly active persons, per day, 30 days',
    kind: 'trends',
    body: { series: [{ event: '$any', math: 'wau' }], dateFrom: '-30d', interval: 'day' },
    sql: `SELECT day, uniqExact(personId) AS persons
      FROM (SELECT personId, arrayJoin(arrayMap(k -> toDate(timestamp) + k, range(7))) AS day FROM events_with_persons
        WHERE timestamp >= toStartOfDay(now64(6) - INTERVAL 36 DAY) AND timestamp <= now64(6))
      WHERE day >= toDate(now64(6) - INTERVAL 30 DAY) AND day <= today() GROUP BY day
      UNION ALL SELECT NULL, uniqExact(personId) FROM events_with_persons WHERE ${LAST_30_DAYS}`,
  },
  {
    name: 'Retention: weekly, recurring, any event to any event, 12 weeks',
    kind: 'retention',
    body: { startEvent: { event: '$any' }, returnEvent: { event: '$any' }, period: 'week', periods: 12 },
    sql: `WITH toMonday(now64(6)) - 7 * 11 AS first
      SELECT cohort, k, countIf(has(weeks, cohort + 7 * k)) AS persons
      FROM (SELECT personId, groupUniqArray(toMonday(timestamp)) AS weeks FROM events_with_persons
        WHERE timestamp >= toDateTime64(first, 6) AND timestamp <= now64(6) GROUP BY personId)
      ARRAY JOIN weeks AS cohort
      ARRAY JOIN range(toUInt32(dateDiff('week', cohort, toMonday(now64(6))) + 1)) AS k
      GROUP BY cohort, k`,
  },
  {
    name: 'Paths: 5 steps from signup, by person, 30 days',
    kind: 'paths',
    body: { start: 'signup', steps: 5, dateFrom: '-30d' },
    sql: `SELECT concat(toString(i), '_', path[i]) AS source, concat(toString(i + 1), '_', path[i + 1]) AS target, count() AS persons
      FROM (SELECT arraySlice(nodes, indexOf(nodes, 'signup'), 5) AS path
        FROM (SELECT personId, arrayCompact(arrayMap(e -> e.3, arraySort(groupArray((timestamp, parsedAt, if(type = 'page', JSONExtractString(properties, 'path'), event)))))) AS nodes
          FROM events_with_persons WHERE timestamp >= now64(6) - INTERVAL 30 DAY AND timestamp <= now64(6) AND type IN ('page', 'track')
            AND (type = 'track' OR JSONExtractString(properties, 'path') != '')
          GROUP BY personId)
        WHERE has(nodes, 'signup'))
      ARRAY JOIN arrayEnumerate(arrayPopBack(path)) AS i
      GROUP BY source, target ORDER BY persons DESC, source, target LIMIT 50`,
  },
  {
    name: 'Stickiness: days active of 30, any event, by person',
    kind: 'stickiness',
    body: { series: [{ event: '$any' }], dateFrom: '-30d', interval: 'day' },
    sql: `SELECT days, count() AS persons
      FROM (SELECT personId, uniqExact(toDate(timestamp)) AS days FROM events_with_persons WHERE ${LAST_30_DAYS} GROUP BY personId)
      GROUP BY days ORDER BY days`,
  },
  {
    name: 'Lifecycle: any event, by day, 30 days',
    kind: 'lifecycle',
    body: { series: [{ event: '$any' }], dateFrom: '-30d', interval: 'day' },
    sql: `WITH toDate(now64(6)) - 30 AS first
      SELECT day, status, if(status = 'dormant', -count(), count()) AS persons
      FROM (
        SELECT arrayJoin(arrayFilter(d -> d >= first AND d <= today(), arrayDistinct(arrayConcat(active, arrayMap(d -> d + 1, active))))) AS day,
          if(has(active, day), multiIf(day = firstDay, 'new', has(active, day - 1), 'returning', 'resurrecting'), 'dormant') AS status
        FROM (SELECT personId, groupUniqArrayIf(toDate(timestamp), toDate(timestamp) >= first - 1) AS active, toDate(min(timestamp)) AS firstDay
          FROM events_with_persons WHERE timestamp <= now64(6) GROUP BY personId))
      GROUP BY day, status`,
  },
  {
    name: 'Funnels: 4 steps, ordered, with conversion times, by person, 30 days',
    kind: 'funnels',
    body: { steps: FUNNEL_STEPS.map((event) => ({ event })), dateFrom: '-30d' },
    sql: tunedFunnel(true),
    looser: { without: 'the order of two events of the same time by arrival (no parsedAt read)', sql: tunedFunnel(false) },
    aim: 1000,
  },
];

/**
 * The funnel question's tuned SQL. Per person, each step's events as keys (with `byArrival`, of
 * their time and arrival, `parsedAt`, in µs, which orders two events of the same time as the
 * service does: docs/api/insights.md, "Order of events"; else of their time alone); from each
 * start, the first event of each next step after the one before, within 14 days of the start; the
 * deepest conversion, the first of equal ones. Its answer is the service's (checked on the
 * benchmark's data, 2026-11-27, with and without `byArrival`).
 */
function tunedFunnel(byArrival: boolean): string {
  const key = byArrival ? 'bitShiftLeft(toUInt128(toUnixTimestamp64Micro(timestamp)), 64) + toUnixTimestamp64Micro(parsedAt)' : 'toUnixTimestamp64Micro(timestamp)';
  const time = (k: string) => (byArrival ? `toInt64(bitShiftRight(${k}, 64))` : k);
  const next = (after: string, step: number) => `arrayFirst(y -> y > ${after} AND ${time('y')} <= ${time('x')} + ${FUNNEL_WINDOW_MICROS}, s${step})`;
  return `SELECT ${[1, 2, 3, 4].map((k) => `countIf(depth >= ${k})`).join(', ')},
      ${[1, 2, 3].map((k) => `avgIf(t${k}, depth >= ${k + 1}) / 1e6, quantileExactInclusiveIf(0.5)(t${k}, depth >= ${k + 1}) / 1e6`).join(', ')}
    FROM (
      SELECT arrayMap(x -> ${next('x', 1)}, s0) AS a1,
        arrayMap((x, p) -> if(p = 0, 0, ${next('p', 2)}), s0, a1) AS a2,
        arrayMap((x, p) -> if(p = 0, 0, ${next('p', 3)}), s0, a2) AS a3,
        arrayMax(arrayMap((p1, p2, p3, i) -> (1 + (p1 > 0) + (p2 > 0) + (p3 > 0), -i), a1, a2, a3, arrayEnumerate(s0))) AS best,
        best.1 AS depth, -best.2 AS i, ${[1, 2, 3].map((k) => `${time(`a${k}[i]`)} - ${time(`${k === 1 ? 's0' : `a${k - 1}`}[i]`)} AS t${k}`).join(', ')}
      FROM (
        SELECT ${FUNNEL_STEPS.map((step, k) => `arraySort(groupArrayIf(key, event = '${step}')) AS s${k}`).join(', ')}
        FROM (SELECT personId, event, ${key} AS key FROM events_with_persons
          WHERE timestamp >= now64(6) - INTERVAL 30 DAY AND timestamp <= now64(6) AND event IN (${FUNNEL_STEPS.map((s) => `'${s}'`).join(', ')}))
        GROUP BY personId HAVING length(s0) > 0))`;
}
