import { LONGEST_VISIT_DAYS, VISIT_KEY, VISIT_TABLE_COLUMNS } from '../../storage/migrations/visits';
import { personVisits, VISIT_EVENTS } from '../stats/sessions';
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

/** Per visit key, the span of the visit events that arrived in (after, through]. */
export function arrivedWindows(db: string, after: string, through: string): Statement {
  return {
    sql: `SELECT ${VISIT_KEY} AS key, toString(toUnixTimestamp64Micro(min(timestamp))) AS from, toString(toUnixTimestamp64Micro(max(timestamp))) AS to
      FROM ${db}.events
      WHERE parsedAt > fromUnixTimestamp64Micro({after:Int64}, 'UTC') AND parsedAt <= fromUnixTimestamp64Micro({through:Int64}, 'UTC')
        AND ${VISIT_EVENTS} AND ${VISIT_KEY} != ''
      GROUP BY key`,
    params: { after, through },
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
