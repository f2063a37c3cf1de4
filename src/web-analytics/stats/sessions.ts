import { PAGE_PATH_COLUMN, VISIT_EVENT_COLUMN } from '../../storage/migrations/visits';
import { sourceNameSql } from '../sources/source-names';

/**
 * Visits (sessions), computed in the engine from any source's events (our tracker, Segment SDKs,
 * Plausible's): one person's `page` and `track` events with less than the session timeout between
 * consecutive ones, in the order of `timestamp`, then `parsedAt`, then `uuid` (the insights'
 * order). The person is `personId` of `events_with_persons`, so an identified user and a cookieless
 * Plausible visitor are both visitors. No window functions and no events brought into TypeScript:
 *
 * 1. each person's events of the range are gathered by a hash aggregation (`GROUP BY personId`)
 *    into one array of tuples of only the columns the query reads, sorted once;
 * 2. array functions mark where the gap to the event before reaches the timeout (the first event
 *    of a person in the range starts a visit), number the visits (a running sum) and compute per
 *    visit: start, end, page views, interactive events other than page views, entry and exit
 *    page (the first and last page view's path) and the attributes of its first event (source,
 *    referrer, UTM fields, country, region, city, browser, OS, device);
 * 3. `ARRAY JOIN` gives one row per visit (sessionVisits) or one per event with its visit's
 *    columns (sessionEvents).
 *
 * (Three window passes sorting every event of the range by person did this before: 14 to 57 s on
 * 10 million events, beyond the default limits.)
 *
 * Each event keeps its own columns beside its visit's, so a statement can count events and visits
 * in the same pass. Only events in the range are read: a visit that began before the range is
 * counted from its first event within it.
 */

/** The path of an event's page (`context.page.path`, else `properties.path`), stored with each event (src/storage/migrations/visits.ts). */
export const PAGE_PATH = PAGE_PATH_COLUMN;
export const PAGE_URL = `if(JSONExtractString(context, 'page', 'url') != '', JSONExtractString(context, 'page', 'url'), JSONExtractString(properties, 'url'))`;
export const RAW_REFERRER = `if(JSONExtractString(context, 'page', 'referrer') != '', JSONExtractString(context, 'page', 'referrer'), JSONExtractString(properties, 'referrer'))`;
/**
 * The referrer as Plausible shows it: its host without `www.` and its path, without scheme, query,
 * fragment and trailing slashes (`news.ycombinator.com/item`); empty when the referrer is the
 * page's own site (navigation within the site).
 */
const REFERRER = `if(domainWithoutWWW(rawReferrer) != '' AND domainWithoutWWW(rawReferrer) = domainWithoutWWW(pageUrl), '',
    replaceRegexpOne(replaceRegexpOne(replaceRegexpOne(rawReferrer, '[?#].*$', ''), '^[A-Za-z][A-Za-z0-9+.-]*://(www[.])?', ''), '/+$', ''))`;

/** Plausible's utm_source: the campaign's source, else the page URL's `source` or `ref` parameter. */
const TAGGED_SOURCE = `multiIf(JSONExtractString(context, 'campaign', 'source') != '', JSONExtractString(context, 'campaign', 'source'),
    extractURLParameter(pageUrl, 'source') != '', decodeURLFormComponent(extractURLParameter(pageUrl, 'source')),
    decodeURLFormComponent(extractURLParameter(pageUrl, 'ref')))`;

/** Attributes a visit takes from its first event: name and the event's expression. */
export const VISIT_ATTRIBUTES: ReadonlyArray<[string, string]> = [
  // Stored before the naming merged spellings, an event's source is merged when read.
  ['source', sourceNameSql(`JSONExtractString(context, 'source')`)],
  ['referrer', REFERRER],
  ['utmSource', TAGGED_SOURCE],
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
 * left out of the arrays, which hold every column they carry.
 */
export interface SessionNeeds {
  attributes: ReadonlySet<string>;
  properties: boolean;
  /** Whether pages are read (`path`, `entryPage`, `exitPage`); otherwise they are ''. */
  paths: boolean;
  /** Whether event names are read (`name`); otherwise ''. */
  names: boolean;
}

/**
 * The events that make visits (docs/web-analytics.md#visits): page views and custom events of
 * people's browsers. Each event stores whether it is one (src/storage/migrations/visits.ts).
 */
export const VISIT_EVENTS = VISIT_EVENT_COLUMN;

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
  return `(
  SELECT personId, ${EVENT_COLUMNS}, ${VISIT_COLUMNS.join(', ')}
  FROM ${personVisits(where, timeoutMicros, needs)}
  ARRAY JOIN events AS e, eventVisits AS v, arrayEnumerate(events) AS rn
)`;
}

/**
 * A subquery of the visits of the events `where` selects, one row per visit: `personId`,
 * `sessionNo`, `sessionStart`/`sessionEnd` (µs), `sessionPageviews`, `eventCount`, `bounce`,
 * `entryPage`, `exitPage` and the visit's attributes (as sessionEvents names them).
 */
export function sessionVisits(where: string, timeoutMicros: string, needs?: SessionNeeds): string {
  return `(
  SELECT personId, v.sessionNo AS sessionNo, v.eventCount AS eventCount, ${VISIT_COLUMNS.join(', ')}
  FROM ${personVisits(where, timeoutMicros, needs, false)}
  ARRAY JOIN visits AS v
)`;
}

/** Columns of an event of `events` (`e`), by name. */
const EVENT_COLUMNS = "e.t AS t, fromUnixTimestamp64Micro(t, 'UTC') AS ts, e.isPage AS isPage, e.name AS name, e.props AS props, e.path AS path, e.interactive AS interactive, e.sessionNo AS sessionNo";

/** Columns of a visit of `visits` (`v`), by name. */
const VISIT_COLUMNS = [
  'v.sessionStart AS sessionStart',
  'v.sessionEnd AS sessionEnd',
  'v.sessionPageviews AS sessionPageviews',
  'v.bounce AS bounce',
  'v.entryPage AS entryPage',
  'v.exitPage AS exitPage',
  ...VISIT_ATTRIBUTES.map(([name]) => `v.${name} AS ${name}`),
];

/**
 * Whose events are cut into visits, from which table, and what a visit takes from its first event
 * besides the attributes: by default each person's (`events_with_persons`); the stored visits
 * (src/web-analytics/visits) cut each device's instead, and keep its first event's ids.
 */
export interface VisitSource {
  /** The expression of the events' grouping key (the result's `personId` column). */
  key: string;
  table: string;
  attributes: ReadonlyArray<[string, string]>;
}

const PERSON_VISITS: VisitSource = { key: 'personId', table: 'events_with_persons', attributes: [] };

/**
 * One row per person of the events `where` selects, with `evs`, its events in order (named tuples:
 * `t`, `isPage`, `name`, `props`, `path`, `interactive`, `sessionNo`), `visits`, its visits in
 * order (named tuples: `sessionNo`, `eventCount`, `sessionStart`, `sessionEnd`, `sessionPageviews`, `bounce`,
 * `entryPage`, `exitPage`, and the attributes), and `eventVisits`, the visit of each event
 * (`events` and `eventVisits` only `withEvents`).
 *
 * The person's events are gathered by a hash aggregation (`GROUP BY personId`), sorted once as
 * arrays and cut where the gap reaches the timeout; what a query does not need is carried as ''.
 */
export function personVisits(where: string, timeoutMicros: string, needs?: SessionNeeds, withEvents = true, source: VisitSource = PERSON_VISITS): string {
  const visitAttributes = [...VISIT_ATTRIBUTES, ...source.attributes];
  const attributes = needs ? visitAttributes.filter(([name]) => needs.attributes.has(name)) : visitAttributes;
  // The page's URL and referrer, read by the referrer and utm_source attributes.
  const pageFacts = !needs || needs.attributes.has('referrer') || needs.attributes.has('utmSource');
  const props = !needs || needs.properties;
  const paths = !needs || needs.paths;
  const names = !needs || needs.names;
  // The sort key (time, parsedAt, uuid) comes first, then what the visits and events read.
  const fields: Array<[string, string]> = [
    ['t', 'toUnixTimestamp64Micro(timestamp)'],
    ['p', 'toUnixTimestamp64Micro(parsedAt)'],
    ['u', 'uuid'],
    ['isPage', "type = 'page'"],
    ['interactive', "JSONExtractRaw(context, 'interactive') != 'false'"],
    ...(paths ? ([['path', PAGE_PATH]] as Array<[string, string]>) : []),
    ...(names ? ([['name', 'event']] as Array<[string, string]>) : []),
    ...(props ? ([['props', 'properties']] as Array<[string, string]>) : []),
    ...attributes.map(([name, expression]) => [name, expression] as [string, string]),
  ];
  const at = (name: string) => fields.findIndex(([n]) => n === name) + 1;
  const field = (name: string, x = 'x') => (at(name) > 0 ? `${x}.${at(name)}` : "''");
  // No lambda below reads an array it is not given (the engine would copy it for each element,
  // squaring the cost for a person's many events): each visit's values come from arrays of the
  // visits' ranges (arrayReduceInRanges) or of their first events (arrayFilter by `news`).
  const firstOf = (name: string) => (at(name) > 0 ? `arrayFilter((a, n) -> n, arrayMap(x -> ${field(name)}, evs), news)` : `arrayWithConstant(length(starts), '')`);
  const pageOf = (fn: string) => (paths ? `arrayReduceInRanges('${fn}', ranges, arrayMap(x -> ${field('path')}, evs), idx, pages)` : `arrayWithConstant(length(starts), '')`);
  const visitArrays: string[] = [
    'arrayEnumerate(starts)',
    'lens',
    'arrayFilter((a, n) -> n, ts, news)',
    "arrayReduceInRanges('max', ranges, ts)",
    "arrayReduceInRanges('sum', ranges, pages)",
    "arrayReduceInRanges('sum', ranges, others)",
    pageOf('argMinIf'),
    pageOf('argMaxIf'),
    ...visitAttributes.map(([name]) => firstOf(name)),
  ];
  const args = visitArrays.map((_, i) => `a${i}`);
  const visitTuple = `(a0, a1, a2, a3, a4, a4 = 1 AND a5 = 0, a6, a7${visitAttributes.map((_, i) => `, a${i + 8}`).join('')})`;
  const eventFields = ['t', 'isPage', 'name', 'props', 'path', 'interactive'].map((name) => (name === 't' ? 'x.1' : field(name)));
  return `(
  SELECT personId, ${withEvents ? `arrayMap((x, n) -> CAST((${eventFields.join(', ')}, n), 'Tuple(${['t Int64', 'isPage UInt8', 'name String', 'props String', 'path String', 'interactive UInt8', 'sessionNo UInt64'].join(', ')})'), evs, nos) AS events,\n    ` : ''}visits${withEvents ? ',\n    arrayFlatten(arrayMap((v, l) -> arrayWithConstant(l, v), visits, lens)) AS eventVisits' : ''}
  FROM (
    SELECT *, arrayMap((${args.join(', ')}) -> CAST(${visitTuple}, 'Tuple(${visitTupleType(visitAttributes)})'), ${visitArrays.join(', ')}) AS visits
    FROM (
      SELECT *, arrayCumSum(news) AS nos, arrayFilter((i, n) -> n, idx, news) AS starts,
        arrayMap((s, e) -> toUInt64(e - s), starts, arrayPushBack(arrayPopFront(starts), length(ts) + 1)) AS lens,
        arrayZip(starts, lens) AS ranges
      FROM (
        SELECT personId, evs, arrayMap(x -> x.1, evs) AS ts, arrayEnumerate(evs) AS idx,
          arrayMap((d, i) -> i = 1 OR d >= ${timeoutMicros}, arrayDifference(ts), idx) AS news,
          arrayMap(x -> x.4, evs) AS pages, arrayMap(x -> x.5 AND NOT x.4, evs) AS others
        FROM (
          SELECT personId, arraySort(groupArray((${fields.map(([name]) => name).join(', ')}))) AS evs
          FROM (
            SELECT ${source.key} AS personId, ${fields.map(([name, expression]) => `${expression} AS ${name}`).join(',\n              ')}${pageFacts ? `,\n              ${PAGE_URL} AS pageUrl,\n              ${RAW_REFERRER} AS rawReferrer` : ''}
            FROM ${source.table}
            WHERE ${VISIT_EVENTS} AND ${source.key} != '' AND ${where}
          )
          GROUP BY personId
        )
      )
    )
  )
)`;
}

const visitTupleType = (attributes: ReadonlyArray<[string, string]>) =>
  ['sessionNo UInt64', 'eventCount UInt64', 'sessionStart Int64', 'sessionEnd Int64', 'sessionPageviews UInt64', 'bounce UInt8', 'entryPage String', 'exitPage String', ...attributes.map(([name]) => `${name} String`)].join(', ');

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
