/**
 * Visits (sessions), computed in the engine from any source's events (our tracker, Segment SDKs,
 * Plausible's): one person's `page` and `track` events with less than the session timeout between
 * consecutive ones, in the order of `timestamp`, then `parsedAt`, then `uuid` (the insights'
 * order). The person is `personId` of `events_with_persons`, so an identified user and a cookieless
 * Plausible visitor are both visitors. Three window passes, no events brought into TypeScript:
 *
 * 1. per person in event order: the row number and whether the gap to the event before is at least
 *    the timeout (the first event of a person in the range starts a visit);
 * 2. the running count of those starts: the visit's number within the person;
 * 3. per visit: start, end, page views, interactive events other than page views, entry and exit
 *    page (the first and last page view's path) and the attributes of its first event (source,
 *    referrer, UTM fields, country, region, city, browser, OS, device).
 *
 * Each event keeps its own columns beside its visit's, so a statement can count events and visits
 * in the same pass. Only events in the range are read: a visit that began before the range is
 * counted from its first event within it.
 */

/** The path of an event's page: `context.page.path` (Segment SDKs, our tracker, Plausible's events), else `properties.path`. */
export const PAGE_PATH = `if(JSONExtractString(context, 'page', 'path') != '', JSONExtractString(context, 'page', 'path'), JSONExtractString(properties, 'path'))`;
const PAGE_URL = `if(JSONExtractString(context, 'page', 'url') != '', JSONExtractString(context, 'page', 'url'), JSONExtractString(properties, 'url'))`;
const RAW_REFERRER = `if(JSONExtractString(context, 'page', 'referrer') != '', JSONExtractString(context, 'page', 'referrer'), JSONExtractString(properties, 'referrer'))`;
/**
 * The referrer as Plausible shows it: without scheme, `www.` and a trailing slash; empty when the
 * referrer is the page's own site (navigation within the site).
 */
const REFERRER = `if(domainWithoutWWW(rawReferrer) != '' AND domainWithoutWWW(rawReferrer) = domainWithoutWWW(pageUrl), '',
    replaceRegexpOne(replaceRegexpOne(rawReferrer, '^[A-Za-z][A-Za-z0-9+.-]*://(www[.])?', ''), '/$', ''))`;

/** Attributes a visit takes from its first event: name and the event's expression. */
const VISIT_ATTRIBUTES: ReadonlyArray<[string, string]> = [
  ['source', `JSONExtractString(context, 'source')`],
  ['referrer', REFERRER],
  ['utmSource', `JSONExtractString(context, 'campaign', 'source')`],
  ['utmMedium', `JSONExtractString(context, 'campaign', 'medium')`],
  ['utmCampaign', `JSONExtractString(context, 'campaign', 'name')`],
  ['utmContent', `JSONExtractString(context, 'campaign', 'content')`],
  ['utmTerm', `JSONExtractString(context, 'campaign', 'term')`],
  ['country', `JSONExtractString(context, 'location', 'country')`],
  ['region', `JSONExtractString(context, 'location', 'region')`],
  ['city', `JSONExtractString(context, 'location', 'city')`],
  ['browser', `JSONExtractString(context, 'browser', 'name')`],
  ['os', `JSONExtractString(context, 'os', 'name')`],
  ['device', `JSONExtractString(context, 'device', 'type')`],
];

/**
 * What a statement reads of the visits: the visit attributes (`source`, `referrer`, `utmSource`,
 * ..., as named in sessionEvents' columns) and whether the events' `properties`; the others are
 * left out of the windows, which sort every column they carry.
 */
export interface SessionNeeds {
  attributes: ReadonlySet<string>;
  properties: boolean;
  /** Whether pages are read (`path`, `entryPage`, `exitPage`); otherwise they are ''. */
  paths: boolean;
  /** Whether event names are read (`name`); otherwise ''. */
  names: boolean;
}

/** The event types that make visits: page views and custom events (Plausible's two kinds). */
export const VISIT_EVENT_TYPES = `type IN ('page', 'track')`;

/**
 * A subquery of the events `where` selects (a condition on `events_with_persons`, such as the
 * range), one row per event, with its visit's columns: `personId`, `sessionNo`, `ts` (the event's
 * timestamp), `t` (µs), `rn` (its place in the person's order), `isPage`, `name`, `props`, `path`,
 * `interactive`, `sessionStart`/`sessionEnd` (µs), `sessionPageviews`, `bounce`, `entryPage`,
 * `exitPage`, and the visit's attributes (`source`, `referrer`, `utmSource`, `utmMedium`,
 * `utmCampaign`, `utmContent`, `utmTerm`, `country`, `region`, `city`, `browser`, `os`,
 * `device`). `timeoutMicros` is the bound timeout in µs (Int64).
 */
export function sessionEvents(where: string, timeoutMicros: string, needs?: SessionNeeds): string {
  const attributes = needs ? VISIT_ATTRIBUTES.filter(([name]) => needs.attributes.has(name)) : VISIT_ATTRIBUTES;
  const eventAttributes = attributes.map(([name, expression]) => `,\n        ${expression} AS e_${name}`).join('');
  const visitAttributes = attributes.map(([name]) => `,\n    argMin(e_${name}, rn) OVER s AS ${name}`).join('');
  const referrer = !needs || needs.attributes.has('referrer');
  const props = !needs || needs.properties;
  const paths = !needs || needs.paths;
  const names = !needs || needs.names;
  return `(
  SELECT *,
    min(t) OVER s AS sessionStart,
    max(t) OVER s AS sessionEnd,
    countIf(isPage) OVER s AS sessionPageviews,
    sessionPageviews = 1 AND countIf(interactive AND NOT isPage) OVER s = 0 AS bounce,
    ${paths ? 'argMinIf(path, rn, isPage) OVER s' : "''"} AS entryPage,
    ${paths ? 'argMaxIf(path, rn, isPage) OVER s' : "''"} AS exitPage${visitAttributes}
  FROM (
    SELECT *, sum(isNew) OVER (PARTITION BY personId ORDER BY rn ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS sessionNo
    FROM (
      SELECT personId, timestamp AS ts, toUnixTimestamp64Micro(timestamp) AS t, type = 'page' AS isPage, ${names ? 'event' : "''"} AS name, ${props ? 'properties' : "''"} AS props,
        ${paths ? PAGE_PATH : "''"} AS path,
        JSONExtractRaw(context, 'interactive') != 'false' AS interactive${referrer ? `,\n        ${PAGE_URL} AS pageUrl,\n        ${RAW_REFERRER} AS rawReferrer` : ''}${eventAttributes},
        row_number() OVER w AS rn,
        t - lagInFrame(t, 1, toInt64(0)) OVER w >= ${timeoutMicros} AS isNew
      FROM events_with_persons
      WHERE ${VISIT_EVENT_TYPES} AND personId != '' AND ${where}
      WINDOW w AS (PARTITION BY personId ORDER BY timestamp, parsedAt, uuid ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
    )
  )
  WINDOW s AS (PARTITION BY personId, sessionNo)
)`;
}

/**
 * One row per visit of the events `where` selects: `personId`, `sessionNo`, `start` and `end`
 * (DateTime64), `duration` (whole seconds), `pageviews`, `events`, `bounce`, `entryPage`,
 * `exitPage` and the visit's attributes. What docs/sql.md shows for POST /queries.
 */
export function sessions(where: string, timeoutMicros: string): string {
  const attributes = VISIT_ATTRIBUTES.map(([name]) => `any(${name}) AS ${name}`).join(', ');
  return `(
  SELECT personId, sessionNo, fromUnixTimestamp64Micro(any(sessionStart), 'UTC') AS start, fromUnixTimestamp64Micro(any(sessionEnd), 'UTC') AS end,
    intDiv(any(sessionEnd) - any(sessionStart), 1000000) AS duration, any(sessionPageviews) AS pageviews, count() AS events, any(bounce) AS bounce,
    any(entryPage) AS entryPage, any(exitPage) AS exitPage, ${attributes}
  FROM ${sessionEvents(where, timeoutMicros)}
  GROUP BY personId, sessionNo
)`;
}
