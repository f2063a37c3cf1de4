import { LONGEST_VISIT_DAYS, VISIT_KEY, VISIT_TABLE_COLUMNS } from '../../storage/migrations/visits';
import { PAGE_PATH, personVisits, VISIT_EVENTS } from '../stats/sessions';
import { SqlParams } from '../../sql-params';
import { VISIT_DEFINITION } from './visit-definition';
import type { Params } from '../../storage/storage';

/**
 * The statements of the visit builder (visit-builder.ts), pure functions of the database (quoted),
 * the visit keys and their windows. Times are whole µs since the epoch, as decimal strings.
 */


/** A visit key and the span of time (µs) whose visits are to be made again. */
export interface VisitWindow {
  key: string;
  from: string;
  to: string;
}

export interface Statement {
  sql: string;
  params: Params;
}

const COLUMNS = VISIT_TABLE_COLUMNS.map(([name]) => `\`${name}\``);
const VALUE_COLUMNS = COLUMNS.filter((c) => c !== '`sign`');

/** The newest arrival time (µs) of the next `step` events after `after` and before `below`, or of all when fewer. */
export function nextStepEnd(db: string, after: string, step: number, below: string): Statement {
  return {
    sql: `SELECT toString(max(p)) AS through, count() AS n FROM (
      SELECT toUnixTimestamp64Micro(parsedAt) AS p FROM ${db}.events
      WHERE parsedAt > fromUnixTimestamp64Micro({after:Int64}, 'UTC') AND parsedAt < fromUnixTimestamp64Micro({below:Int64}, 'UTC')
      ORDER BY parsedAt LIMIT {step:UInt64})`,
    params: { after, step, below },
  };
}

/** The arrivals in (after, through], by µs bound as `after` and `through`. */
const ARRIVED = "parsedAt > fromUnixTimestamp64Micro({after:Int64}, 'UTC') AND parsedAt <= fromUnixTimestamp64Micro({through:Int64}, 'UTC')";

/**
 * Per visit key, what its visit events that arrived in (after, through] add up to, in the order
 * visits are cut (time, arrival, uuid): the first and last time (µs), how many, page views, other
 * interactive events (a bounce has none), the first and last page, and the widest gap between two.
 */
function arrivals(db: string): string {
  // Each event's columns once, its page only for a page view (the JSON read once, and only there).
  return `SELECT key, min(t) AS first, max(t) AS last, count() AS n, countIf(isPage) AS pages, countIf(interactive AND NOT isPage) AS others,
      argMinIf(path, (t, p, uuid), isPage) AS entry, argMaxIf(path, (t, p, uuid), isPage) AS exit,
      arrayMax(arrayDifference(arraySort(groupArray(t)))) AS widest
    FROM (
      SELECT ${VISIT_KEY} AS key, toUnixTimestamp64Micro(timestamp) AS t, toUnixTimestamp64Micro(parsedAt) AS p, uuid, type = 'page' AS isPage,
        JSONExtractRaw(context, 'interactive') != 'false' AS interactive, if(isPage, ${PAGE_PATH}, '') AS path
      FROM ${db}.events
      WHERE ${ARRIVED} AND ${VISIT_EVENTS} AND key != '')
    GROUP BY key`;
}

/**
 * The last live stored visit of each key with arrivals in (after, through] (value columns and
 * `live`). The keys and the earliest time are taken from every arrival, visit events or not: a
 * bound as good for the table's order, without the visit events' test.
 */
function lastVisits(db: string): string {
  const values = VALUE_COLUMNS.join(', ');
  return `SELECT * FROM (
      SELECT ${values}, sum(sign) AS live FROM ${db}.visits
      WHERE start >= (SELECT min(timestamp) FROM ${db}.events WHERE ${ARRIVED}) - INTERVAL ${LONGEST_VISIT_DAYS} DAY
        AND visitKey IN (SELECT ${VISIT_KEY} FROM ${db}.events WHERE ${ARRIVED})
      GROUP BY ${values} HAVING live > 0)
    ORDER BY visitKey, end DESC LIMIT 1 BY visitKey`;
}

/**
 * Whether a key's arrivals (`a`) only continue its last stored visit (`v`): every arrival after
 * the visit's last event, the first within the timeout (`{timeout:Int64}`, µs) of it and no two
 * further apart, the visit counted once. A merge of the two is then the visit a cut of all its
 * events gives, but for one case left to the cut: a visit without page views whose arrivals
 * bring its first and only one, whose bounce hangs on its other events, which the stored visit
 * does not count. Strictly after: a visit that holds an arrival already (built again after a
 * stop) is cut again instead.
 */
const CONTINUES = `v.visitKey != '' AND a.first > toUnixTimestamp64Micro(v.end) AND a.first - toUnixTimestamp64Micro(v.end) < {timeout:Int64}
  AND a.widest < {timeout:Int64} AND v.live = 1 AND NOT (v.pageviews = 0 AND a.pages = 1)`;

/**
 * Per visit key, the span of the visit events that arrived in (after, through], but for the keys
 * whose arrivals only continue their last visit (CONTINUES): `extendVisits` builds those, without
 * reading their earlier events again.
 */
export function arrivedWindows(db: string, after: string, through: string, timeout: number): Statement {
  return {
    sql: `SELECT a.key AS key, toString(a.first) AS from, toString(a.last) AS to
      FROM (${arrivals(db)}) AS a LEFT JOIN (${lastVisits(db)}) AS v ON v.visitKey = a.key
      WHERE NOT (${CONTINUES})`,
    params: { after, through, timeout },
  };
}

/** The keys whose arrivals continue their last visit, with its value columns and what the arrivals add. */
function continuedVisits(db: string): string {
  return `SELECT a.key AS visitKey, ${VALUE_COLUMNS.filter((c) => c !== '`visitKey`').map((c) => `v.${c} AS ${c}`).join(', ')},
      a.last AS last, a.n AS n, a.pages AS pages, a.others AS others, a.entry AS entry, a.exit AS exit
    FROM (${arrivals(db)}) AS a INNER JOIN (${lastVisits(db)}) AS v ON v.visitKey = a.key
    WHERE ${CONTINUES}`;
}

/**
 * One insert: for each key whose arrivals in (after, through] only continue its last visit
 * (`continuedVisits`), a cancelling copy of that visit and the visit merged with them: its start
 * and first event's attributes, the last arrival's time as its end, the counts added, its entry
 * page unless it had no page view, the last arrival's page as its exit when they bring one, and
 * a bounce only if it still has a single page view and nothing else interactive. Reads the
 * arrivals and the stored visits, never the visit's earlier events. One block, so one part.
 */
export function extendVisits(db: string, after: string, through: string, timeout: number): Statement {
  const merged: Record<string, string> = {
    '`end`': "if(s = 1, fromUnixTimestamp64Micro(last, 'UTC'), `end`)",
    '`pageviews`': 'if(s = 1, `pageviews` + pages, `pageviews`)',
    '`events`': 'if(s = 1, `events` + n, `events`)',
    '`bounce`': 'if(s = 1, `pageviews` + pages = 1 AND `bounce` = 1 AND others = 0, `bounce`)',
    '`entryPage`': 'if(s = 1 AND `pageviews` = 0, entry, `entryPage`)',
    '`exitPage`': 'if(s = 1 AND pages > 0, exit, `exitPage`)',
  };
  return {
    sql: `INSERT INTO ${db}.visits (${COLUMNS.join(', ')})
      SETTINGS max_insert_threads = 1, min_insert_block_size_rows = 1000000000, min_insert_block_size_bytes = 1000000000000
      SELECT ${VALUE_COLUMNS.map((c) => merged[c] ?? c).join(', ')}, toInt8(s)
      FROM (${continuedVisits(db)}) ARRAY JOIN [-1, 1] AS s`,
    params: { after, through, timeout },
  };
}

/** The whole span of the stored visits of `keys` (erasure: their visits are all made again). */
export function storedSpans(db: string, keys: readonly string[]): Statement {
  const params = new SqlParams();
  return {
    sql: `SELECT visitKey AS key, toString(min(toUnixTimestamp64Micro(start))) AS from, toString(max(toUnixTimestamp64Micro(end))) AS to
      FROM ${db}.visits WHERE visitKey IN ${params.bind(keys, 'Array(String)')} GROUP BY key HAVING sum(sign) > 0`,
    params: params.values,
  };
}

/** The visits still counted (not cancelled) of each window's key that reach within `timeout` of it. */
function liveVisits(db: string, windows: readonly VisitWindow[], timeout: number, params: SqlParams): string {
  const keys = params.bind(windows.map((w) => w.key), 'Array(String)');
  const bound = (values: string[]) => `arrayMap(x -> toInt64(x), ${params.bind(values, 'Array(String)')})`;
  const from = bound(windows.map((w) => String(BigInt(w.from) - BigInt(timeout))));
  const to = bound(windows.map((w) => String(BigInt(w.to) + BigInt(timeout))));
  const earliest = windows.reduce((m, w) => (BigInt(w.from) < m ? BigInt(w.from) : m), BigInt(windows[0]!.from)) - BigInt(timeout);
  // Only visits that start at most LONGEST_VISIT_DAYS before a window can reach it: the table's
  // order skips the older days.
  const since = `fromUnixTimestamp64Micro(${params.bind(String(earliest), 'Int64')}, 'UTC') - INTERVAL ${LONGEST_VISIT_DAYS} DAY`;
  return `SELECT ${VALUE_COLUMNS.join(', ')}, sum(sign) AS live FROM ${db}.visits
    WHERE start >= ${since} AND visitKey IN ${keys}
      AND toUnixTimestamp64Micro(end) >= transform(visitKey, ${keys}, ${from}, toInt64(0))
      AND toUnixTimestamp64Micro(start) <= transform(visitKey, ${keys}, ${to}, toInt64(0))
    GROUP BY ${VALUE_COLUMNS.join(', ')} HAVING live > 0`;
}

/** Per key, the span of its stored visits that reach within `timeout` of its window. */
export function touchedSpans(db: string, windows: readonly VisitWindow[], timeout: number): Statement {
  const params = new SqlParams();
  return {
    sql: `SELECT visitKey AS key, toString(min(toUnixTimestamp64Micro(start))) AS from, toString(max(toUnixTimestamp64Micro(end))) AS to
      FROM (${liveVisits(db, windows, timeout, params)}) GROUP BY key`,
    params: params.values,
  };
}

/**
 * One insert: a cancelling copy of every stored visit reaching within `timeout` of each window
 * (`windows`, as the arrivals gave them), and the visits the engine cuts again from the events of
 * each key within its widened window (`widened`: the window and the spans of those visits). One
 * block, so one part: a stop cannot keep the cancellations without the new visits; in it, every
 * cancellation before any new visit.
 */
export function rebuildVisits(db: string, windows: readonly VisitWindow[], widened: readonly VisitWindow[], timeout: number): Statement {
  const params = new SqlParams();
  const cancelled = liveVisits(db, windows, timeout, params);
  const keys = params.bind(widened.map((w) => w.key), 'Array(String)');
  const bound = (values: string[]) => `arrayMap(x -> toInt64(x), ${params.bind(values, 'Array(String)')})`;
  const from = bound(widened.map((w) => w.from));
  const to = bound(widened.map((w) => w.to));
  const first = widened.reduce((m, w) => (BigInt(w.from) < m ? BigInt(w.from) : m), BigInt(widened[0]!.from));
  const last = widened.reduce((m, w) => (BigInt(w.to) > m ? BigInt(w.to) : m), BigInt(widened[0]!.to));
  const where = `${VISIT_KEY} IN ${keys}
    AND timestamp >= fromUnixTimestamp64Micro(${params.bind(String(first), 'Int64')}, 'UTC') AND timestamp <= fromUnixTimestamp64Micro(${params.bind(String(last), 'Int64')}, 'UTC')
    AND toUnixTimestamp64Micro(timestamp) >= transform(${VISIT_KEY}, ${keys}, ${from}, toInt64(0))
    AND toUnixTimestamp64Micro(timestamp) <= transform(${VISIT_KEY}, ${keys}, ${to}, toInt64(-1))`;
  const source = { key: VISIT_KEY, table: `${db}.events`, attributes: [['userId', 'userId'], ['anonymousId', 'anonymousId']] as Array<[string, string]> };
  const fresh = `SELECT personId AS visitKey, v.userId, v.anonymousId, fromUnixTimestamp64Micro(v.sessionStart, 'UTC'), fromUnixTimestamp64Micro(v.sessionEnd, 'UTC'),
      v.sessionPageviews, v.eventCount, v.bounce, v.entryPage, v.exitPage, ${VISIT_TABLE_COLUMNS.slice(10, -1).map(([name]) => `v.${name}`).join(', ')}, toInt8(1)
    FROM ${personVisits(where, params.bind(timeout, 'Int64'), undefined, false, source)}
    ARRAY JOIN visits AS v`;
  // Cancelling rows go first: a collapsing table drops a new visit that comes before the
  // cancellation of the one it replaces (same start, so same sorting key) in its block, at the
  // insert and at merges, keeping the old one; a UNION ALL gives its branches in no set order.
  return {
    sql: `INSERT INTO ${db}.visits (${COLUMNS.join(', ')})
      SETTINGS max_insert_threads = 1, min_insert_block_size_rows = 1000000000, min_insert_block_size_bytes = 1000000000000
      SELECT * FROM (
        SELECT ${VALUE_COLUMNS.join(', ')}, toInt8(-1) AS sign FROM (${cancelled}) ARRAY JOIN range(toUInt64(live)) AS copy
        UNION ALL
        ${fresh})
      ORDER BY sign`,
    params: params.values,
  };
}

/** The builder's progress: how far (parsedAt, µs) events are built, and whether all were. */
export function readProgress(db: string): Statement {
  return {
    sql: `SELECT toString(toUnixTimestamp64Micro(builtThrough)) AS through, complete, toString(toUnixTimestamp64Micro(historyThrough)) AS historyThrough, timeoutMinutes, definition
      FROM ${db}.visit_progress FINAL`,
    params: {},
  };
}

/** Where the builder is: `through` (arrival, µs), `complete`, `historyThrough` (time, µs, while not complete). */
export interface Progress {
  through: string;
  complete: boolean;
  historyThrough: string;
}

/** The progress written with the visits' timeout and definition (VISIT_DEFINITION): another of either builds them all again. */
export function writeProgress(db: string, progress: Progress, timeoutMinutes: number, version: number): Statement {
  return {
    sql: `INSERT INTO ${db}.visit_progress (builtThrough, complete, historyThrough, timeoutMinutes, definition, version)
      VALUES (fromUnixTimestamp64Micro({through:Int64}, 'UTC'), {complete:Bool}, fromUnixTimestamp64Micro({historyThrough:Int64}, 'UTC'), {timeoutMinutes:UInt32}, {definition:UInt32}, {version:UInt64})`,
    params: { ...progress, timeoutMinutes, definition: VISIT_DEFINITION, version },
  };
}

/** The arrival time (µs) of the newest event stored: what a workspace's history is, when its visits are first built. */
export function newestArrival(db: string): Statement {
  return { sql: `SELECT toString(toUnixTimestamp64Micro(max(parsedAt))) AS through, count() AS n FROM ${db}.events`, params: {} };
}

/**
 * The end (exclusive, µs) of the history's next step from `from` (time, µs): the time of the
 * (`step` + 1)th visit event of the history at or after it, or none when fewer are left.
 */
export function historyStepEnd(db: string, from: string, arrivedBy: string, step: number): Statement {
  return {
    sql: `SELECT toString(toUnixTimestamp64Micro(timestamp)) AS end FROM ${db}.events
      WHERE timestamp >= fromUnixTimestamp64Micro({from:Int64}, 'UTC') AND parsedAt <= fromUnixTimestamp64Micro({arrivedBy:Int64}, 'UTC') AND ${VISIT_EVENTS}
      ORDER BY timestamp LIMIT 1 OFFSET {step:UInt64}`,
    params: { from, arrivedBy, step },
  };
}

/** Per visit key, the span of the history's visit events timed in [from, to) (µs). */
export function historyWindows(db: string, from: string, to: string, arrivedBy: string): Statement {
  return {
    sql: `SELECT ${VISIT_KEY} AS key, toString(toUnixTimestamp64Micro(min(timestamp))) AS from, toString(toUnixTimestamp64Micro(max(timestamp))) AS to
      FROM ${db}.events
      WHERE timestamp >= fromUnixTimestamp64Micro({from:Int64}, 'UTC') AND timestamp < fromUnixTimestamp64Micro({to:Int64}, 'UTC')
        AND parsedAt <= fromUnixTimestamp64Micro({arrivedBy:Int64}, 'UTC') AND ${VISIT_EVENTS} AND ${VISIT_KEY} != ''
      GROUP BY key`,
    params: { from, to, arrivedBy },
  };
}

/** The visits of `keys` deleted (`table`: `visits`, or its shards' `visits_local ON CLUSTER`). */
export function deleteVisits(db: string, table: string, keys: readonly string[]): Statement {
  const [name, ...onCluster] = table.split(' ');
  return { sql: `DELETE FROM ${db}.${name} ${onCluster.join(' ')} WHERE visitKey IN {keys:Array(String)}`, params: { keys } };
}

/** Every stored visit dropped (`table`: `visits`, or its shards' `visits_local ON CLUSTER`). */
export function dropVisits(db: string, table: string): Statement {
  return { sql: `TRUNCATE TABLE ${db}.${table}`, params: {} };
}
