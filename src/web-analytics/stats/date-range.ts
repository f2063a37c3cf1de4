import { localDate, wallTime, zonedInstant } from '../../insights/time-range';
import { parseIsoDateTime } from '../../timestamps';
import { inspect, StatsQueryError } from './errors';

/**
 * Plausible's `date_range`, resolved in the site's time zone as its current query parser does
 * (lib/plausible/stats/query_period.ex): `day` is today up to now, `24h` the last 24 hours, `7d`,
 * `28d`, `30d` and `91d` that many whole days ending yesterday, `month` and `year` the whole
 * current month or year, `6mo` and `12mo` that many whole months ending last month, `all` from the
 * first event's day to today, and a pair of ISO dates (whole days) or date-times with offsets
 * (whole seconds).
 */

export const DATE_RANGE_SHORTCUTS = ['day', '24h', '7d', '28d', '30d', '91d', 'month', '6mo', '12mo', 'year', 'all'] as const;

export interface ResolvedRange {
  /** The first instant counted, ms. */
  from: number;
  /** The last instant counted (inclusive), ms. */
  to: number;
  timezone: string;
  /** Whether the range is whole local days (a shortcut or a pair of dates), as opposed to exact times. */
  wholeDays: boolean;
  /** The end of the time labels when it is not `to`: `day` ends now but is labelled to its end. */
  labelsTo?: number;
}

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME_WITH_OFFSET = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:[Zz]|[+-]\d{2}:?\d{2})$/;

interface Day {
  year: number;
  month: number;
  day: number;
}

const today = (now: number, timezone: string): Day => {
  const w = wallTime(now, timezone);
  return { year: w.year, month: w.month, day: w.day };
};

/** The start of a local day (fields may overflow), ms. */
const startOf = (timezone: string, d: Day, days = 0, months = 0) => zonedInstant(timezone, d.year, d.month + months, d.day + days);

function wholeDays(timezone: string, first: number, nextAfterLast: number): ResolvedRange {
  return { from: first, to: nextAfterLast - 1, timezone, wholeDays: true };
}

function parseDate(text: string): Day | undefined {
  const m = DATE.exec(text);
  if (!m || parseIsoDateTime(text) === undefined) return undefined;
  return { year: Number(m[1]), month: Number(m[2]), day: Number(m[3]) };
}

/**
 * The range `input` names at `now` in `timezone`; `firstEvent` (ms) is the workspace's first event
 * for `all`. 400 with Plausible's message for anything else.
 */
export function resolveDateRange(input: unknown, timezone: string, now: number, firstEvent: number | undefined): ResolvedRange {
  const t = today(now, timezone);
  if (typeof input === 'string') {
    const days = /^(7|28|30|91)d$/.exec(input);
    if (days) return wholeDays(timezone, startOf(timezone, t, -Number(days[1])), startOf(timezone, t));
    const months = /^(6|12)mo$/.exec(input);
    if (months) return wholeDays(timezone, zonedInstant(timezone, t.year, t.month - Number(months[1]), 1), zonedInstant(timezone, t.year, t.month, 1));
    switch (input) {
      case 'day':
        return { from: startOf(timezone, t), to: now, timezone, wholeDays: true, labelsTo: startOf(timezone, t, 1) - 1 };
      case '24h':
        return { from: now - 86_400_000, to: now, timezone, wholeDays: false };
      case 'month':
        return wholeDays(timezone, zonedInstant(timezone, t.year, t.month, 1), zonedInstant(timezone, t.year, t.month + 1, 1));
      case 'year':
        return wholeDays(timezone, zonedInstant(timezone, t.year, 1, 1), zonedInstant(timezone, t.year + 1, 1, 1));
      case 'all': {
        const first = firstEvent === undefined ? t : today(Math.min(firstEvent, now), timezone);
        return wholeDays(timezone, startOf(timezone, first), startOf(timezone, t, 1));
      }
    }
  }
  if (Array.isArray(input) && input.length === 2 && input.every((v) => typeof v === 'string')) {
    const [a, b] = input as [string, string];
    const da = parseDate(a);
    const db = parseDate(b);
    if (da && db) {
      const range = wholeDays(timezone, startOf(timezone, da), startOf(timezone, db, 1));
      if (range.to < range.from) throw new StatsQueryError(`Invalid date_range ${quoted(input)}.`);
      return range;
    }
    if (DATE_TIME_WITH_OFFSET.test(a) && DATE_TIME_WITH_OFFSET.test(b)) {
      const from = parseIsoDateTime(a);
      const to = parseIsoDateTime(b);
      // Plausible stores whole seconds: its range takes both ends to theirs, the end inclusive to
      // the end of its second (an event at 23:59:59.500 is in a range ending at 23:59:59).
      if (from !== undefined && to !== undefined && to >= from) return { from: Number(from / 1_000_000n) * 1000, to: Number(to / 1_000_000n) * 1000 + 999, timezone, wholeDays: false };
    }
    throw new StatsQueryError(`Invalid date_range ${quoted(input)}.`);
  }
  throw new StatsQueryError(`#/date_range: Invalid date range ${inspect(input)}`);
}

const quoted = (value: unknown) => `'${inspect(value)}'`;

const pad = (n: number) => String(n).padStart(2, '0');

/** An instant as Plausible echoes the range: local time with the zone's offset, to the second. */
export function isoWithOffset(ms: number, timezone: string): string {
  const w = wallTime(ms, timezone);
  const wall = Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second);
  const offset = Math.round((wall - Math.floor(ms / 1000) * 1000) / 60_000);
  const sign = offset < 0 ? '-' : '+';
  return `${localDate(ms, timezone)}T${pad(w.hour)}:${pad(w.minute)}:${pad(w.second)}${sign}${pad(Math.floor(Math.abs(offset) / 60))}:${pad(Math.abs(offset) % 60)}`;
}
