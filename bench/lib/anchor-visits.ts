/**
 * The web analytics benchmark's anchor: Plausible's two tables built from the workspace's events,
 * untimed, before the questions are asked.
 * - `anchor_events`, as Plausible's `events_v2`: one row per event with the columns its questions
 *   read (path, whether a page view, the person) and the id of its visit (`session_id`).
 * - `anchor_visits`, as Plausible's `sessions_v2`: one row per visit with a `sign`, in a
 *   VersionedCollapsingMergeTree whose version is the visit's event count, ordered by the visit's
 *   start day (issue 38's design: `(toDate(start), visitKey, start)`).
 * A visit is issue 38's: one visit key's (`anonymousId`, else `userId`) page and track events (not
 * `engagement`) with gaps under the session timeout, in the order (timestamp, parsedAt, uuid); its
 * visitor is the person of its first event, stored in the row as Plausible stores `user_id` (the
 * benchmark's data makes no identity link later). Only the attributes the overview's questions
 * read are kept: the tables are read by column, so the others would not change the timings.
 */
import { PAGE_PATH, VISIT_EVENTS } from '../../src/web-analytics/stats/sessions';

export const ANCHOR_EVENTS = 'anchor_events';
export const ANCHOR_VISITS = 'anchor_visits';

/** An event's columns besides its visit and time: name, type and the event's expression. */
const EVENT_COLUMNS: ReadonlyArray<[string, string, string]> = [
  ['personId', 'String', 'personId'],
  ['isPage', 'UInt8', "type = 'page'"],
  ['interactive', 'UInt8', "JSONExtractRaw(context, 'interactive') != 'false'"],
  ['pathname', 'String', PAGE_PATH],
  ['source', 'String', `JSONExtractString(context, 'source')`],
  ['country', 'String', `JSONExtractString(context, 'location', 'country')`],
  ['browser', 'String', `JSONExtractString(context, 'browser', 'name')`],
  ['os', 'String', `JSONExtractString(context, 'os', 'name')`],
  ['device', 'String', `JSONExtractString(context, 'device', 'type')`],
];
/** The attributes a visit takes from its first event. */
const FIRST_EVENT_ATTRIBUTES = ['personId', 'source', 'country', 'browser', 'os', 'device'];

export function createAnchorTablesSql(database: string): string[] {
  const columns = EVENT_COLUMNS.map(([name, type]) => `${name} ${type}`).join(', ');
  return [
    `CREATE TABLE ${database}.${ANCHOR_EVENTS} (
      visitId UInt64, visitKey String, timestamp DateTime64(6, 'UTC'), parsedAt DateTime64(6, 'UTC'), uuid UUID, ${columns}
    ) ENGINE = MergeTree PARTITION BY toYYYYMM(timestamp) ORDER BY (toDate(timestamp), personId, timestamp)`,
    `CREATE TABLE ${database}.${ANCHOR_VISITS} (
      visitId UInt64, visitKey String, ${FIRST_EVENT_ATTRIBUTES.map((name) => `${name} String`).join(', ')},
      start DateTime64(6, 'UTC'), end DateTime64(6, 'UTC'), duration UInt32,
      pageviews UInt32, events UInt32, bounce UInt8, entryPage String, exitPage String, sign Int8
    ) ENGINE = VersionedCollapsingMergeTree(sign, events)
    PARTITION BY toYYYYMM(start) ORDER BY (toDate(start), visitKey, start)`,
  ];
}

/** Only the visit keys whose hash falls in `part` of `parts`: each statement holds a part of the events in memory. */
const inPart = (part: number, parts: number) => `cityHash64(visitKey) % ${parts} = ${part}`;

/**
 * Fills `anchor_events` for a part of the visit keys: each key's events gathered into one sorted
 * array, and each event given the start of its visit (the last event before it, itself included,
 * that follows a gap of the timeout or more); the visit's id hashes the key and that start.
 */
export function fillAnchorEventsSql(database: string, timeoutMinutes: number, part: number, parts: number): string {
  const fields = [['t', 'toUnixTimestamp64Micro(timestamp)'], ['p', 'parsedAt'], ['u', 'uuid'], ...EVENT_COLUMNS.map(([name, , expression]) => [name, expression])];
  const element = (name: string) => `e.${fields.findIndex(([n]) => n === name) + 1}`;
  return `INSERT INTO ${database}.${ANCHOR_EVENTS}
  SELECT cityHash64(visitKey, visitStart) AS visitId, visitKey, fromUnixTimestamp64Micro(e.1, 'UTC') AS timestamp, e.2 AS parsedAt, e.3 AS uuid,
    ${EVENT_COLUMNS.map(([name]) => `${element(name)} AS ${name}`).join(', ')}
  FROM (
    SELECT visitKey, evs, arrayMap(x -> x.1, evs) AS ts,
      arrayFill((t, isNew) -> isNew, ts, arrayMap((gap, i) -> i = 1 OR gap >= ${timeoutMinutes * 60_000_000}, arrayDifference(ts), arrayEnumerate(ts))) AS visitStarts
    FROM (
      SELECT visitKey, arraySort(groupArray((${fields.map(([name]) => name).join(', ')}))) AS evs
      FROM (
        SELECT if(anonymousId != '', anonymousId, userId) AS visitKey, ${fields.map(([name, expression]) => `${expression} AS ${name}`).join(', ')}
        FROM ${database}.events_with_persons
        WHERE ${VISIT_EVENTS} AND visitKey != '' AND ${inPart(part, parts)}
      )
      GROUP BY visitKey
    )
  )
  ARRAY JOIN evs AS e, visitStarts AS visitStart`;
}

/** Fills `anchor_visits` from `anchor_events` for a part of the visit keys: one row per visit, sign 1. */
export function fillAnchorVisitsSql(database: string, part: number, parts: number): string {
  const order = '(timestamp, parsedAt, uuid)';
  return `INSERT INTO ${database}.${ANCHOR_VISITS}
  SELECT visitId, any(visitKey), ${FIRST_EVENT_ATTRIBUTES.map((name) => `argMin(${name}, ${order})`).join(', ')},
    min(timestamp) AS start, max(timestamp) AS end, intDiv(toUnixTimestamp64Micro(end) - toUnixTimestamp64Micro(start), 1000000) AS duration,
    countIf(isPage) AS pageviews, count() AS events, pageviews = 1 AND countIf(interactive AND NOT isPage) = 0 AS bounce,
    argMinIf(pathname, ${order}, isPage) AS entryPage, argMaxIf(pathname, ${order}, isPage) AS exitPage, 1 AS sign
  FROM ${database}.${ANCHOR_EVENTS}
  WHERE ${inPart(part, parts)}
  GROUP BY visitId`;
}
