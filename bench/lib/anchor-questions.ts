/**
 * The overview's nine questions answered from the anchor's tables (anchor-visits.ts) as
 * Plausible's queries answer them (plausible/analytics: lib/plausible/stats/sql/expression.ex,
 * where_builder.ex and table_decider.ex): visit metrics are sums over `sign`, a visit belongs to every range it
 * overlaps, a day's visits are those whose last event is on that day, and page-level counts
 * read the events. Two departures, so that the answers can be compared with the service's:
 * `uniqExact` where Plausible counts visitors with `uniq` (an estimate), and the aggregate's and
 * the time series' visitors and visits read from the visits (Plausible reads them from its events
 * when page views are asked too; the page views are read from the events here as there). Each statement's columns are its dimensions, then its metrics, in the
 * question's order; `{from}` and `{to}` bound the range (inclusive, DateTime64(6, 'UTC')).
 */
import { ANCHOR_EVENTS, ANCHOR_VISITS } from './anchor-visits';

const FROM = "{from:DateTime64(6, 'UTC')}";
const TO = "{to:DateTime64(6, 'UTC')}";

/**
 * Plausible's rule: a visit is in the range when it ends at or after the range's start and starts
 * at or before its end; the bound on the start a week before the range is Plausible's too (it
 * lets the table's order skip older visits; a visit is assumed to last less than a week).
 */
const VISITS_IN_RANGE = `start >= ${FROM} - INTERVAL 7 DAY AND end >= ${FROM} AND start <= ${TO}`;
const EVENTS_IN_RANGE = `timestamp >= ${FROM} AND timestamp <= ${TO}`;
/** The time bucket of a visit: Plausible's `time:day` of a session is the day of its last event. */
const VISIT_DAY = "toString(toDate(end, 'UTC'))";

/** Plausible's session metrics (expression.ex's session_metric), visitors counted exactly. */
const VISITORS = 'uniqExact(personId)';
const VISITS = 'sum(sign)';
const VIEWS_PER_VISIT = 'ifNotFinite(round(sum(sign * pageviews) / sum(sign), 2), 0)';
const BOUNCE_RATE = 'toUInt32(greatest(ifNotFinite(round(sum(bounce * sign) / sum(sign) * 100), 0), 0))';
const VISIT_DURATION = 'toUInt32(ifNotFinite(round(sum(duration * sign) / sum(sign)), 0))';
/** Visitors as a share of the range's, in %. */
const PERCENTAGE = `ifNotFinite(round(${VISITORS} / (SELECT ${VISITORS} FROM ${ANCHOR_VISITS} WHERE ${VISITS_IN_RANGE}) * 100, 2), 0)`;

/** A breakdown of the visits in the range by `dimension`: the top `limit` by the first metric, ties by the value. */
const visitBreakdown = (dimension: string, metrics: string[], limit?: number) => `SELECT ${dimension} AS value, ${metrics.map((m, i) => `${m} AS m${i}`).join(', ')}
  FROM ${ANCHOR_VISITS} WHERE ${VISITS_IN_RANGE}
  GROUP BY value ORDER BY m0 DESC, value ASC${limit ? ` LIMIT ${limit}` : ''}`;

/** Plausible's display of an empty attribute. */
const orBlank = (column: string, blank: string, value = column) => `if(${column} = '', '${blank}', ${value})`;

/** The anchor's statement for each question of bench/web-analytics.ts, by its name. */
export const ANCHOR_SQL: Record<string, string> = {
  // Page views from the events of the range, the rest from its visits: Plausible's table decider
  // reads page views (an event-only metric) from events when a question mixes them.
  'aggregate metrics': `SELECT visitors, visits, pageviews, views_per_visit, bounce_rate, visit_duration
    FROM (SELECT ${VISITORS} AS visitors, ${VISITS} AS visits, ${VIEWS_PER_VISIT} AS views_per_visit, ${BOUNCE_RATE} AS bounce_rate, ${VISIT_DURATION} AS visit_duration
      FROM ${ANCHOR_VISITS} WHERE ${VISITS_IN_RANGE}) AS v
    CROSS JOIN (SELECT countIf(isPage) AS pageviews FROM ${ANCHOR_EVENTS} WHERE ${EVENTS_IN_RANGE}) AS e`,
  'time series by day': `SELECT day, visitors, visits, pageviews, bounce_rate, visit_duration
    FROM (SELECT ${VISIT_DAY} AS day, ${VISITORS} AS visitors, ${VISITS} AS visits, ${BOUNCE_RATE} AS bounce_rate, ${VISIT_DURATION} AS visit_duration
      FROM ${ANCHOR_VISITS} WHERE ${VISITS_IN_RANGE} GROUP BY day) AS v
    LEFT JOIN (SELECT toString(toDate(timestamp, 'UTC')) AS day, countIf(isPage) AS pageviews FROM ${ANCHOR_EVENTS} WHERE ${EVENTS_IN_RANGE} GROUP BY day) AS e USING (day)
    ORDER BY day`,
  // Page views and visitors of each page from the events; the bounce rate of the visits that
  // entered on it (Plausible's bounce rate by page).
  'top pages': `SELECT page, visitors, pageviews, bounce_rate
    FROM (
      SELECT pathname AS page, ${VISITORS} AS visitors, countIf(isPage) AS pageviews
      FROM ${ANCHOR_EVENTS} WHERE ${EVENTS_IN_RANGE} GROUP BY page
    ) AS p
    LEFT JOIN (SELECT entryPage AS page, ${BOUNCE_RATE} AS bounce_rate FROM ${ANCHOR_VISITS} WHERE ${VISITS_IN_RANGE} GROUP BY page) AS b USING (page)
    ORDER BY visitors DESC, page ASC LIMIT 10`,
  sources: visitBreakdown(orBlank('source', 'Direct / None'), [VISITORS, VISITS, BOUNCE_RATE], 10),
  countries: visitBreakdown('country', [VISITORS, PERCENTAGE], 10),
  devices: visitBreakdown(orBlank('device', '(not set)', 'concat(upper(substring(device, 1, 1)), substring(device, 2))'), [VISITORS, PERCENTAGE]),
  'entry pages': visitBreakdown('entryPage', [VISITORS, VISITS, BOUNCE_RATE], 10),
  'exit pages': visitBreakdown('exitPage', [VISITORS, VISITS], 10),
  // Plausible's visits with an event the event filters select (a semi-join on the visit's id),
  // the bounce rate of those that entered on a page the page filter selects.
  'a filtered screen (country and page)': `SELECT ${VISITORS}, ${VISITS},
      toUInt32(greatest(ifNotFinite(round(sumIf(bounce * sign, position(entryPage, '/p/1') > 0) / sumIf(sign, position(entryPage, '/p/1') > 0) * 100), 0), 0)),
      ${VISIT_DURATION}
    FROM ${ANCHOR_VISITS}
    WHERE ${VISITS_IN_RANGE} AND country = 'DE'
      AND visitId IN (SELECT visitId FROM ${ANCHOR_EVENTS} WHERE ${EVENTS_IN_RANGE} AND position(pathname, '/p/1') > 0)`,
};
