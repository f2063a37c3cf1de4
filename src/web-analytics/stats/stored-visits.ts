import { VISIT_ATTRIBUTE_COLUMNS, VISIT_KEY, VISIT_TABLE_COLUMNS } from '../../storage/migrations/visits';
import type { StatsMetric } from './model';
import { bucketSql, type Dimension, type TimeBucket } from './compile';
import { PAGE_PATH, VISIT_EVENTS } from './sessions';

/**
 * Questions answered from stored visits (`visits_with_persons`, src/storage/migrations/visits.ts)
 * rather than by cutting the range's events into visits: visit metrics and dimensions, filtered by
 * visit attributes and by pages. Every visit row counts with its `sign` (a cancelled visit's rows
 * sum to nothing), so each question first sums per person and dimension values. A visit belongs to
 * every range it is active in (it ends in or after the range's start and starts before its end),
 * under the day (week, month) of its last event and every hour it was active: Plausible's rules
 * (plausible/analytics: lib/plausible/stats/sql/where_builder.ex, expression.ex).
 */

export interface StoredQuestion {
  metrics: readonly StatsMetric[];
  dimensions: readonly Dimension[];
  buckets: ReadonlyMap<string, TimeBucket>;
  /** Conditions of top-level filters on visit dimensions (over the visit's columns). */
  visitConditions: readonly string[];
  /** Conditions of top-level filters on `event:page` (over an event's `path`). */
  pageConditions: readonly string[];
  /** The page filters applied to the visit's entry page: the visits whose bounces count. */
  entryConditions: readonly string[];
  visitsInRange: string;
  eventsInRange: string;
  /** The range's start, bound (DateTime64). */
  from: string;
  tz: string;
  rangeStart: string;
}

/**
 * The starts of the site's hours a visit was active in: its quarter hours (every zone's offset is
 * whole quarter hours, so each lies within one local hour) taken to their local hour, each once.
 */
const activeHours = (tz: string) =>
  `arrayDistinct(arrayMap(s -> toStartOfHour(s, ${tz}), timeSlots(toDateTime(start, 'UTC'), toUInt32(dateDiff('second', start, end)), 900)))`;

/** The rows a question reads, the SQL of each metric over them, and which groups are kept. */
export interface StoredSource {
  source: string;
  metrics: Record<StatsMetric, string>;
  having: string;
}

/** What a top-level filter names: visit dimensions only, `event:page` only, or anything else. */
export function filterKind(filter: unknown): 'visit' | 'page' | 'other' {
  const names: string[] = [];
  const walk = (f: unknown): void => {
    if (!Array.isArray(f)) return;
    if (f[0] === 'and' || f[0] === 'or') (Array.isArray(f[1]) ? f[1] : []).forEach(walk);
    else if (f[0] === 'not') walk(f[1]);
    else names.push(String(f[1]));
  };
  walk(filter);
  if (names.length > 0 && names.every((n) => n.startsWith('visit:'))) return 'visit';
  if (names.length > 0 && names.every((n) => n === 'event:page')) return 'page';
  return 'other';
}

/**
 * A person as the questions count them: a 64-bit hash of the id. `uniqExact` keeps a String as its
 * 128-bit hash, and halving that halved the time of top pages (2 million events: 761 -> 423 ms);
 * grouping visits per person by the hash rather than the String took the aggregate from 77 to
 * 72 ms and sources from 85 to 71. Two of a site's persons share a hash with odds of about n^2 / 2^65 (4e-9 for 400,000
 * persons); they would count as one visitor.
 */
const PERSON_HASH = 'cityHash64(personId)';

/** Of rows summed per person (`visits`: the sum of their signs), the visitors: persons whose rows leave a visit. */
const VISITORS = 'countIf(visits > 0)';

/** Each person's visits in the range, summed over the rows' signs (a cancelled visit's rows sum to nothing). */
const visitsPerPerson = (visitsInRange: string) => `SELECT ${PERSON_HASH} AS person, sum(sign) AS visits FROM visits_with_persons WHERE ${visitsInRange} GROUP BY person`;

const VISIT_METRICS = new Set<StatsMetric>(['visitors', 'visits', 'bounce_rate', 'visit_duration', 'views_per_visit', 'percentage']);
const and = (parts: readonly string[]) => (parts.length === 0 ? '1' : parts.map((p) => `(${p})`).join(' AND '));
const list = (names: readonly string[]) => names.map((n) => `, ${n}`).join('');

/**
 * A question of visits: dimensions of visits and times, and visit metrics (page views and events
 * too when no page is filtered). With page filters, the visits counted are those with an event in
 * the range on a page they select (found by the visit's key and span); their bounce rate is of
 * those that entered on such a page, as Plausible's is.
 */
export function storedVisitsSource(q: StoredQuestion): StoredSource | undefined {
  const paged = q.pageConditions.length > 0;
  const allowed = (m: StatsMetric) => VISIT_METRICS.has(m) || (!paged && (m === 'pageviews' || m === 'events'));
  if (!q.metrics.every(allowed) || !q.dimensions.every((d) => d.kind !== 'event')) return undefined;
  const hourly = q.dimensions.some((d) => q.buckets.get(d.name) === 'hour');
  const columns = q.dimensions.map((d, i) => {
    const bucket = q.buckets.get(d.name);
    return bucket ? `${bucketSql(bucket === 'hour' ? 'slot' : 'end', bucket, q.tz, q.rangeStart)} AS d_${i}` : `${d.sql} AS d_${i}`;
  });
  const names = q.dimensions.map((_, i) => `d_${i}`);
  // Page views and events are the range's own (Plausible reads them from events), by the events'
  // time buckets when the dimensions are times, else of each visit's events in the range.
  const byTime = q.dimensions.every((d) => d.kind === 'time');
  const counts = q.metrics.some((m) => m === 'pageviews' || m === 'events');
  // A time series of page views of filtered visits would count events by their own bucket but
  // their visit's attributes: the range's events with their visits answer it (storedVisitEvents).
  if (byTime && counts && q.visitConditions.length > 0) return undefined;
  const counted = !byTime && counts;
  // The range's events of each visit key, for visits selected by their pages or counting them.
  // With visit filters, only the keys of the visits they select (a visit the join keeps is one of
  // them): the events of other devices are not grouped nor joined.
  const span = (t: string) => `${t} >= toUnixTimestamp64Micro(start) AND ${t} <= toUnixTimestamp64Micro(end)`;
  const selectedKeys = q.visitConditions.length > 0 ? ` AND ${VISIT_KEY} IN (SELECT visitKey FROM visits WHERE ${and([q.visitsInRange, ...q.visitConditions])})` : '';
  const keyEvents = paged || counted
    ? `\n      ${paged ? 'INNER' : 'LEFT'} JOIN (SELECT ${VISIT_KEY} AS visitKey, groupArray(toUnixTimestamp64Micro(timestamp)) AS times${counted ? ", groupArray(toUInt8(type = 'page')) AS pages" : ''}
        FROM (SELECT *, ${PAGE_PATH} AS path FROM events WHERE ${VISIT_EVENTS} AND ${q.eventsInRange}${selectedKeys}) WHERE ${and(q.pageConditions)} GROUP BY visitKey) AS k USING (visitKey)`
    : '';
  const inRangeCounts = counted ? `arrayCount((t, p) -> p AND ${span('t')}, times, pages)` : 'pageviews';
  const inRangeEvents = counted ? `arrayCount(t -> ${span('t')}, times)` : 'events';
  const where = [
    q.visitsInRange,
    ...q.visitConditions,
    ...(paged ? [`arrayExists(t -> ${span('t')}, times)`] : []),
    ...(hourly ? [`slot >= toStartOfHour(${q.from}, ${q.tz})`] : []),
  ];
  const eventColumns = q.dimensions.map((d, i) => `${bucketSql('timestamp', q.buckets.get(d.name)!, q.tz, q.rangeStart)} AS d_${i}`);
  const events = `SELECT ${eventColumns.map((c) => `${c}, `).join('')}countIf(type = 'page') AS epv, count() AS eev FROM events WHERE ${VISIT_EVENTS} AND ${q.eventsInRange}${names.length > 0 ? ` GROUP BY ${names.join(', ')}` : ''}`;
  // The visits' rows of the range: a visit built again and not yet merged away has rows that
  // cancel (sign -1) beside its new ones. `mixed`: the row's person has such a row in the range.
  const rows = (dimensionColumns: readonly string[], withMixed = false) => `
      SELECT personId, sign, ${inRangeCounts} AS pageviews, ${inRangeEvents} AS events, bounce, ${and(q.entryConditions)} AS entered,
        intDiv(toUnixTimestamp64Micro(end) - toUnixTimestamp64Micro(start), 1000000) AS duration${dimensionColumns.map((c) => `, ${c}`).join('')}${
          withMixed ? `,\n        personId IN (SELECT personId FROM visits_with_persons WHERE sign < 0 AND ${q.visitsInRange}) AS mixed` : ''
        }
      FROM visits_with_persons${keyEvents}${hourly && dimensionColumns.length > 0 ? `\n      ARRAY JOIN ${activeHours(q.tz)} AS slot` : ''}
      WHERE ${and(dimensionColumns.length > 0 ? where : where.filter((w) => !w.startsWith('slot')))}`;
  // Visitors are the persons whose rows leave a visit (net sign above 0). Without a time bucket a
  // person falls in few groups, and summing each person's rows first is cheapest (the aggregate
  // on 10 million events: 1.58x of the anchor before, 1.37x after). By time buckets alone a
  // person has a group per day, and counting distinct persons is cheaper, summing per person only
  // those with a cancelled row (the time series: 684 ms against 957 ms summing every person's rows).
  const perPerson = (dimensionColumns: readonly string[], dimensionNames: readonly string[]) => `
    SELECT ${dimensionNames.map((n) => `${n}, `).join('')}${PERSON_HASH} AS person, sum(sign) AS visits, sum(sign * pageviews) AS pageviews, sum(sign * events) AS events,
      sum(sign * bounce * entered) AS bounces, sum(sign * entered) AS entries, sum(sign * duration) AS duration
    FROM (${rows(dimensionColumns)})
    GROUP BY ${dimensionNames.map((n) => `${n}, `).join('')}person`;
  const grouped = byTime && names.length > 0
    ? `SELECT ${names.map((n) => `${n}, `).join('')}uniqExactIf(personId, NOT mixed) + arrayCount(n -> n > 0, sumMapIf([personId], [toInt64(sign)], mixed).2) AS visitorCount,
      sum(sign) AS vis, sum(sign * pageviews) AS pvs, sum(sign * events) AS evs, sum(sign * bounce * entered) AS bs, sum(sign * entered) AS bv, sum(sign * duration) AS durs
    FROM (${rows(columns, true)})
    GROUP BY ${names.join(', ')}`
    : `SELECT ${names.map((n) => `${n}, `).join('')}${VISITORS} AS visitorCount, sum(visits) AS vis, sum(pageviews) AS pvs, sum(events) AS evs,
      sum(bounces) AS bs, sum(entries) AS bv, sum(duration) AS durs
    FROM (${perPerson(columns, names)})${names.length > 0 ? `\n    GROUP BY ${names.join(', ')}` : ''}`;
  // The visitors of the whole question, for `percentage` only.
  const total = q.metrics.includes('percentage') ? `(SELECT ${VISITORS} FROM (${perPerson([], [])}))` : '0';
  const joinEvents = byTime && !paged;
  const source = `FROM (SELECT *, ${total} AS totalVisitors FROM (${grouped})) AS s${
    joinEvents ? (names.length > 0 ? ` LEFT JOIN (${events}) AS e USING (${names.join(', ')})` : ` CROSS JOIN (${events}) AS e`) : ''
  }`;
  return {
    source,
    // One row per dimension values already: the outer grouping takes each as it is.
    metrics: {
      visitors: 'any(visitorCount)',
      visits: 'any(vis)',
      // Joined from events by time bucket; else the visits' own within the range.
      pageviews: joinEvents ? 'any(epv)' : 'any(pvs)',
      events: joinEvents ? 'any(eev)' : 'any(evs)',
      bounce_rate: 'toUInt32(ifNotFinite(round(any(bs) / any(bv) * 100), 0))',
      visit_duration: 'toUInt32(ifNotFinite(round(any(durs) / any(vis)), 0))',
      views_per_visit: 'ifNotFinite(round(any(pvs) / any(vis), 2), 0)',
      percentage: 'ifNotFinite(round(any(visitorCount) / any(totalVisitors) * 100, 2), 0)',
      conversion_rate: '0',
    },
    having: 'any(vis) > 0',
  };
}

/** The distinct persons of a page's or a goal's events (PERSON_HASH). */
const DISTINCT_PERSONS = `uniqExact(${PERSON_HASH})`;

const PAGE_METRICS = new Set<StatsMetric>(['visitors', 'pageviews', 'events', 'bounce_rate']);

/**
 * Top pages: visitors, page views and events of each page from the range's events (filtered by
 * page), and the bounce rate of the visits that entered on it from stored visits.
 */
export function pagesSource(q: StoredQuestion): StoredSource | undefined {
  if (q.dimensions.length !== 1 || q.dimensions[0]!.name !== 'event:page' || q.visitConditions.length > 0 || !q.metrics.every((m) => PAGE_METRICS.has(m))) return undefined;
  const pages = `SELECT path AS d_0, ${DISTINCT_PERSONS} AS pageVisitors, countIf(type = 'page') AS pageViews, count() AS pageEvents
    FROM (SELECT personId, type, ${PAGE_PATH} AS path FROM events_with_persons WHERE ${VISIT_EVENTS} AND personId != '' AND ${q.eventsInRange})
    WHERE ${and(q.pageConditions)} GROUP BY d_0`;
  const bounces = `SELECT entryPage AS d_0, sum(sign * bounce) AS bs, sum(sign) AS bv FROM visits WHERE ${q.visitsInRange} GROUP BY d_0`;
  return {
    source: `FROM (${pages}) AS p LEFT JOIN (${bounces}) AS b USING (d_0)`,
    metrics: {
      visitors: 'any(pageVisitors)',
      visits: '0',
      pageviews: 'any(pageViews)',
      events: 'any(pageEvents)',
      bounce_rate: 'toUInt32(ifNotFinite(round(any(bs) / any(bv) * 100), 0))',
      visit_duration: '0',
      views_per_visit: '0',
      percentage: '0',
      conversion_rate: '0',
    },
    having: '1',
  };
}

const GOAL_METRICS = new Set<StatsMetric>(['visitors', 'events', 'conversion_rate']);

/**
 * Goal conversions, unfiltered: each goal's converting visitors and events from the range's custom
 * events, and its conversion rate over the visitors of the range's stored visits (Plausible's
 * total visitors), without finding each event's visit.
 */
export function goalsSource(q: StoredQuestion): StoredSource | undefined {
  const filtered = q.visitConditions.length + q.pageConditions.length > 0;
  if (q.dimensions.length !== 1 || q.dimensions[0]!.name !== 'event:goal' || filtered || !q.metrics.every((m) => GOAL_METRICS.has(m))) return undefined;
  const goals = `SELECT event AS d_0, ${DISTINCT_PERSONS} AS goalVisitors, count() AS goalEvents
    FROM events_with_persons WHERE ${VISIT_EVENTS} AND type = 'track' AND event != '' AND personId != '' AND ${q.eventsInRange} GROUP BY d_0`;
  const total = q.metrics.includes('conversion_rate') ? `(SELECT ${VISITORS} FROM (${visitsPerPerson(q.visitsInRange)}))` : '0';
  return {
    source: `FROM (SELECT *, ${total} AS totalVisitors FROM (${goals}))`,
    metrics: {
      visitors: 'any(goalVisitors)',
      visits: '0',
      pageviews: '0',
      events: 'any(goalEvents)',
      bounce_rate: '0',
      visit_duration: '0',
      views_per_visit: '0',
      percentage: '0',
      conversion_rate: 'ifNotFinite(round(any(goalVisitors) / any(totalVisitors) * 100, 2), 0)',
    },
    having: '1',
  };
}

/**
 * The range's events, one row each, with the columns of their stored visit, as sessions.ts's
 * sessionEvents gives them (`personId` the event's person, `sessionNo` the visit's identity): for
 * questions of events that need a visit's attributes (goals, properties, pages by visit filters).
 * Each event finds its visit by its key and the latest start at or before it (ASOF JOIN) among the
 * visits still counted in the range, which a grouping by every column with `sum(sign) > 0` gives.
 */
export function storedVisitEvents(eventsInRange: string, visitsInRange: string): string {
  const visitColumns = VISIT_TABLE_COLUMNS.filter(([name]) => name !== 'sign').map(([name]) => `\`${name}\``).join(', ');
  return `(
  SELECT e.personId AS personId, cityHash64(v.visitKey, v.start) AS sessionNo, e.ts AS ts, e.isPage AS isPage, e.name AS name, e.props AS props,
    e.path AS path, e.interactive AS interactive, toUnixTimestamp64Micro(v.start) AS sessionStart, toUnixTimestamp64Micro(v.end) AS sessionEnd,
    v.pageviews AS sessionPageviews, v.bounce AS bounce, v.entryPage AS entryPage, v.exitPage AS exitPage${VISIT_ATTRIBUTE_COLUMNS.map((c) => `, v.${c} AS ${c}`).join('')}
  FROM (
    SELECT personId, ${VISIT_KEY} AS visitKey, timestamp AS ts, type = 'page' AS isPage, event AS name, properties AS props, ${PAGE_PATH} AS path,
      JSONExtractRaw(context, 'interactive') != 'false' AS interactive
    FROM events_with_persons WHERE ${VISIT_EVENTS} AND personId != '' AND ${eventsInRange}
  ) AS e
  ASOF INNER JOIN (
    SELECT ${visitColumns} FROM visits WHERE ${visitsInRange} GROUP BY ${visitColumns} HAVING sum(sign) > 0
  ) AS v ON e.visitKey = v.visitKey AND e.ts >= v.start
)`;
}
