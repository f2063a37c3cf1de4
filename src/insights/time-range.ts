import { invalidInput } from '../http/problem';
import type { SqlParams } from '../sql-params';
import { parseIsoDateTime, toEngineDateTime, type Micros } from '../timestamps';
import type { Interval } from './model';

/**
 * Time ranges of insights, in a time zone: where `dateFrom`/`dateTo` fall, the periods between
 * them, and the SQL that puts an event in its period. Days, weeks (from Monday) and months start
 * at local midnight, so a day of a daylight-saving change has 23 or 25 hours; hours are the
 * zone's own (a repeated hour in autumn is two periods, told apart by their offsets).
 */

/** Periods of one range at most: each is a point of a chart and a row of the statement. */
export const MAX_PERIODS = 1000;

const HOUR_MS = 3_600_000;

export interface Period {
  /** The start of the period as answered: `YYYY-MM-DD`, or for hours a local date-time with its offset. */
  label: string;
  /** The period as the statement names it (`periodKey`). */
  key: string;
}

export interface TimeRange {
  timezone: string;
  interval: Interval;
  /** The first instant counted, µs: the start of the first period when snapped. */
  from: Micros;
  /** The last instant counted (inclusive), µs. */
  to: Micros;
  periods: Period[];
}

export interface TimeFields {
  dateFrom?: string;
  dateTo?: string;
  timezone?: string;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(timezone: string): Intl.DateTimeFormat {
  let f = formatters.get(timezone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', { timeZone: timezone, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit' });
    formatters.set(timezone, f);
  }
  return f;
}

interface WallTime {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
}

/** The wall-clock time in `timezone` at the instant `ms`. */
export function wallTime(ms: number, timezone: string): WallTime {
  const parts: Record<string, number> = {};
  for (const p of formatter(timezone).formatToParts(new Date(ms))) if (p.type !== 'literal') parts[p.type] = Number(p.value);
  return { year: parts.year!, month: parts.month!, day: parts.day!, hour: parts.hour!, minute: parts.minute!, second: parts.second! };
}

/** The zone's offset from UTC at the instant `ms`, in ms. */
function offsetAt(ms: number, timezone: string): number {
  const w = wallTime(ms, timezone);
  return Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second) - Math.floor(ms / 1000) * 1000;
}

/**
 * The instant of a wall-clock time in `timezone` (fields may overflow, as Date.UTC takes them). A
 * time skipped by a change to summer time is taken at the offset before the change.
 */
export function zonedInstant(timezone: string, year: number, month: number, day: number, hour = 0, minute = 0, second = 0): number {
  const wall = Date.UTC(year, month - 1, day, hour, minute, second);
  const first = wall - offsetAt(wall, timezone);
  const second2 = wall - offsetAt(first, timezone);
  return offsetAt(second2, timezone) === wall - second2 ? second2 : first;
}

const pad = (n: number, width = 2) => String(n).padStart(width, '0');
const dateText = (w: { year: number; month: number; day: number }) => `${pad(w.year, 4)}-${pad(w.month)}-${pad(w.day)}`;

/** The local date (`YYYY-MM-DD`) of the instant `ms` in `timezone`. */
export function localDate(ms: number, timezone: string): string {
  return dateText(wallTime(ms, timezone));
}

/** The start of the period of `interval` holding the instant `ms`. */
export function periodStart(ms: number, interval: Interval, timezone: string): number {
  const w = wallTime(ms, timezone);
  switch (interval) {
    case 'hour':
      return Math.floor(ms / 1000) * 1000 - (w.minute * 60 + w.second) * 1000;
    case 'day':
      return zonedInstant(timezone, w.year, w.month, w.day);
    case 'week': {
      const weekday = new Date(Date.UTC(w.year, w.month - 1, w.day)).getUTCDay();
      return zonedInstant(timezone, w.year, w.month, w.day - ((weekday + 6) % 7));
    }
    case 'month':
      return zonedInstant(timezone, w.year, w.month, 1);
  }
}

/** The start of the period after the one starting at `start`. */
export function nextPeriod(start: number, interval: Interval, timezone: string): number {
  if (interval === 'hour') return start + HOUR_MS;
  const w = wallTime(start, timezone);
  if (interval === 'month') return zonedInstant(timezone, w.year, w.month + 1, 1);
  return zonedInstant(timezone, w.year, w.month, w.day + (interval === 'week' ? 7 : 1));
}

function offsetText(ms: number, timezone: string): string {
  const minutes = Math.round(offsetAt(ms, timezone) / 60_000);
  const sign = minutes < 0 ? '-' : '+';
  return `${sign}${pad(Math.floor(Math.abs(minutes) / 60))}:${pad(Math.abs(minutes) % 60)}`;
}

/** A period starting at `start` as answered and as the statement names it. */
export function period(start: number, interval: Interval, timezone: string): Period {
  if (interval !== 'hour') {
    const date = localDate(start, timezone);
    return { label: date, key: date };
  }
  const w = wallTime(start, timezone);
  return { label: `${dateText(w)}T${pad(w.hour)}:00:00${offsetText(start, timezone)}`, key: String(start / 1000) };
}

/**
 * The SQL of the start of the period of `interval` holding the time column `column`: a Date, or
 * for hours a Unix time. Grouping and counting by it is several times cheaper than by its text
 * (`periodKey`), which the engine would build for every event. `tz` is the bound time zone.
 */
export function periodStartSql(column: string, interval: Interval, tz: string): string {
  switch (interval) {
    case 'hour':
      return `toUnixTimestamp(toStartOfHour(${column}, ${tz}))`;
    case 'day':
      return `toDate(${column}, ${tz})`;
    case 'week':
      return `toMonday(${column}, ${tz})`;
    case 'month':
      return `toStartOfMonth(${column}, ${tz})`;
  }
}

/** The SQL naming the period of `interval` of the time column `column`, as `period` keys it. */
export function periodKey(column: string, interval: Interval, tz: string): string {
  return `toString(${periodStartSql(column, interval, tz)})`;
}

/** The `timezone` field checked: an IANA name this runtime knows (the engine is asked too, when the statement runs). */
export function checkTimezone(timezone: string | undefined, pointer: string): string {
  if (timezone === undefined) return 'UTC';
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: timezone });
  } catch {
    throw invalidInput(`unknown time zone ${JSON.stringify(timezone)}`, [{ pointer, detail: 'must be an IANA time zone name, such as Europe/Paris' }]);
  }
  if (!/^[A-Za-z0-9_+\-/]+$/.test(timezone)) throw invalidInput(`unknown time zone ${JSON.stringify(timezone)}`, [{ pointer, detail: 'must be an IANA time zone name' }]);
  return timezone;
}

const RELATIVE = /^-(\d{1,5})([hdwmy])$/;
const LOCAL = /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,]\d{1,9})?)?)?$/;

/**
 * The instant `text` names in `timezone`, ms: relative to `now` (calendar days, weeks, months
 * and years of the zone), a local date or date-time, or an ISO date-time with an offset. A date
 * alone is its start, or with `endOfDate` the last millisecond of it.
 */
export function instantOf(text: string, timezone: string, now: number, endOfDate: boolean, pointer: string): number {
  const relative = RELATIVE.exec(text);
  if (relative) {
    const n = Number(relative[1]);
    const unit = relative[2]!;
    if (unit === 'h') return now - n * HOUR_MS;
    const w = wallTime(now, timezone);
    const days = unit === 'd' ? n : unit === 'w' ? 7 * n : 0;
    const months = unit === 'm' ? n : unit === 'y' ? 12 * n : 0;
    return zonedInstant(timezone, w.year, w.month - months, w.day - days, w.hour, w.minute, w.second);
  }
  const local = LOCAL.exec(text);
  if (local && parseIsoDateTime(text) !== undefined) {
    const [, y, mo, d, h, mi = '0', s = '0'] = local;
    if (h === undefined) return zonedInstant(timezone, Number(y), Number(mo), Number(d) + (endOfDate ? 1 : 0)) - (endOfDate ? 1 : 0);
    return zonedInstant(timezone, Number(y), Number(mo), Number(d), Number(h), Number(mi), Number(s));
  }
  const exact = parseIsoDateTime(text);
  if (exact !== undefined) return Number(exact / 1000n);
  throw invalidInput(`${JSON.stringify(text)} is not a time`, [{ pointer, detail: 'must be ISO 8601 or relative: -7d, -24h, -2w, -3m, -1y' }]);
}

const toMicros = (ms: number): Micros => BigInt(ms) * 1000n;

/**
 * Where a trend's range starts (timeRange's `snap`): at the start of `dateFrom`'s period, but a
 * relative `dateFrom` by week or month at the start of its day (its hour for `-24h`): "the last
 * 7 days" by week are those 7 days, the first week counted from the first of them, not from its
 * Monday (as PostHog counts them).
 */
export function trendSnap(fields: Pick<TimeFields, 'dateFrom'>, interval: Interval): Interval {
  const relative = RELATIVE.exec(fields.dateFrom ?? '-7d');
  if (!relative || (interval !== 'week' && interval !== 'month')) return interval;
  return relative[2] === 'h' ? 'hour' : 'day';
}

/**
 * The range `fields` asks for, at `now` (ms): from `dateFrom` (default `-7d`) to `dateTo`
 * (default now), with `snap` the start taken back to the start of its period (or of the
 * interval `snap` names). 400 at `pointer`'s
 * fields when a time is not one, the range is empty, or it has more than MAX_PERIODS periods.
 */
export function timeRange(fields: TimeFields, interval: Interval, now: number, pointer: string, snap: boolean | Interval = true): TimeRange {
  const timezone = checkTimezone(fields.timezone, `${pointer}/timezone`);
  const given = instantOf(fields.dateFrom ?? '-7d', timezone, now, false, `${pointer}/dateFrom`);
  const to = fields.dateTo === undefined ? now : instantOf(fields.dateTo, timezone, now, true, `${pointer}/dateTo`);
  const from = snap === false ? given : periodStart(given, snap === true ? interval : snap, timezone);
  if (to < from) throw invalidInput('dateTo is before dateFrom', [{ pointer: `${pointer}/dateTo`, detail: 'must not be before dateFrom' }]);
  return { timezone, interval, from: toMicros(from), to: toMicros(to) + 999n, periods: periodsBetween(from, to, interval, timezone, pointer) };
}

function periodsBetween(from: number, to: number, interval: Interval, timezone: string, pointer: string): Period[] {
  const periods: Period[] = [];
  for (let start = periodStart(from, interval, timezone); start <= to; start = nextPeriod(start, interval, timezone)) {
    if (periods.length === MAX_PERIODS) {
      throw invalidInput(`the range has more than ${MAX_PERIODS} periods of a ${interval}`, [{ pointer: `${pointer}/interval`, detail: `at most ${MAX_PERIODS} periods: a longer interval or a shorter range` }]);
    }
    periods.push(period(start, interval, timezone));
  }
  return periods;
}

/**
 * The `count` periods of `interval` ending with the one holding `dateTo` (default `now`): from the
 * start of the first to `dateTo`. 400 at `pointer`'s fields when the time or time zone is not one.
 */
export function lastPeriods(fields: Pick<TimeFields, 'dateTo' | 'timezone'>, interval: Interval, count: number, now: number, pointer: string): TimeRange {
  const timezone = checkTimezone(fields.timezone, `${pointer}/timezone`);
  const to = fields.dateTo === undefined ? now : instantOf(fields.dateTo, timezone, now, true, `${pointer}/dateTo`);
  let from = periodStart(to, interval, timezone);
  for (let i = 1; i < count; i++) from = periodStart(from - 1, interval, timezone);
  return { timezone, interval, from: toMicros(from), to: toMicros(to) + 999n, periods: periodsBetween(from, to, interval, timezone, pointer) };
}

/**
 * The range of the same periods just before `range` (a comparison), in calendar terms of its
 * zone: its end is the end of its last period when the range's is, else the current end as many
 * days (weeks, months; hours) back as the range has periods, within the last previous period; so
 * each previous period lines up with the current one across a change to summer time (a day of 23
 * hours beside one of 24) and between months of different lengths.
 */
export function previousRange(range: TimeRange, pointer: string): TimeRange {
  const { interval, timezone } = range;
  const n = range.periods.length;
  let start = Number(range.from / 1000n);
  for (let i = 0; i < n; i++) start = periodStart(start - 1, interval, timezone);
  let lastStart = start;
  for (let i = 1; i < n; i++) lastStart = nextPeriod(lastStart, interval, timezone);
  const end = Number(range.to / 1000n);
  const lastEnd = nextPeriod(lastStart, interval, timezone) - 1;
  let shifted: number;
  // A range to the end of its last period (a month of 30 days) compares with whole periods (one of 31).
  if (end + 1 === nextPeriod(periodStart(end, interval, timezone), interval, timezone)) shifted = lastEnd;
  else if (interval === 'hour') shifted = end - n * HOUR_MS;
  else {
    const w = wallTime(end, timezone);
    const days = interval === 'day' ? n : interval === 'week' ? 7 * n : 0;
    shifted = zonedInstant(timezone, w.year, w.month - (interval === 'month' ? n : 0), w.day - days, w.hour, w.minute, w.second) + (end % 1000);
  }
  const to = Math.max(lastStart, Math.min(lastEnd, shifted));
  return { timezone, interval, from: toMicros(start), to: toMicros(to) + 999n, periods: periodsBetween(start, to, interval, timezone, pointer) };
}

/**
 * `incompleteFrom` of an insight's answer: the label of the range's first period that has not
 * ended at `now` (ms), when there is one. It and the periods after it are incomplete: counted
 * so far, not a drop.
 */
export function incompleteFrom(range: TimeRange, now: number): { incompleteFrom?: string } {
  const { interval, timezone, periods } = range;
  if (Number(range.from / 1000n) > now) return periods.length > 0 ? { incompleteFrom: periods[0]!.label } : {};
  const current = period(periodStart(now, interval, timezone), interval, timezone).label;
  return periods.some((p) => p.label === current) ? { incompleteFrom: current } : {};
}

/** The range's bounds and time zone as bound parameters: `from` and `to` (DateTime64) and `tz`. */
export function bindRange(range: TimeRange, params: SqlParams): { from: string; to: string; tz: string } {
  return {
    from: params.bind(toEngineDateTime(range.from), "DateTime64(6, 'UTC')"),
    to: params.bind(toEngineDateTime(range.to), "DateTime64(6, 'UTC')"),
    tz: params.bind(range.timezone, 'String'),
  };
}
