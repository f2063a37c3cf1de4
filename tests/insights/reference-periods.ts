/**
 * Periods of a time zone computed plainly, for the reference side of the insights' differential
 * tests: from the wall clock that Intl gives, not from the service's time-range code. Keys sort
 * in time order; labels are those the service answers.
 */

type Interval = 'hour' | 'day' | 'week' | 'month';

const QUARTER_HOUR = 15 * 60_000;

const pad = (n: number) => String(n).padStart(2, '0');

function wall(at: number, timezone: string) {
  const format = new Intl.DateTimeFormat('en-US', { timeZone: timezone, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric', timeZoneName: 'longOffset' });
  const parts = Object.fromEntries(format.formatToParts(new Date(at)).map((p) => [p.type, p.value]));
  const offset = parts.timeZoneName === 'GMT' ? '+00:00' : parts.timeZoneName!.slice(3);
  return { year: Number(parts.year), month: Number(parts.month), day: Number(parts.day), minute: Number(parts.minute), second: Number(parts.second), hour: Number(parts.hour), offset };
}

const isoDate = (utcMidnight: number) => new Date(utcMidnight).toISOString().slice(0, 10);

export interface RefPeriod {
  key: string;
  label: string;
}

/** The period of `interval` holding the instant `at` (ms) in `timezone`. */
export function periodOf(at: number, interval: Interval, timezone: string): RefPeriod {
  const w = wall(at, timezone);
  const date = Date.UTC(w.year, w.month - 1, w.day);
  if (interval === 'hour') {
    const start = Math.floor(at / 1000) * 1000 - (w.minute * 60 + w.second) * 1000;
    return { key: new Date(start).toISOString(), label: `${isoDate(date)}T${pad(w.hour)}:00:00${w.offset}` };
  }
  const label = interval === 'day' ? isoDate(date) : interval === 'week' ? isoDate(date - ((new Date(date).getUTCDay() + 6) % 7) * 86_400_000) : `${w.year}-${pad(w.month)}-01`;
  return { key: label, label };
}

/** The periods from the one holding `from` to the one holding `to`, in order, and the one just before them. */
export function periodsBetween(from: number, to: number, interval: Interval, timezone: string): { periods: RefPeriod[]; before: RefPeriod } {
  const periods: RefPeriod[] = [];
  for (let t = from; ; t = Math.min(t + QUARTER_HOUR, to)) {
    const p = periodOf(t, interval, timezone);
    if (periods.at(-1)?.key !== p.key) periods.push(p);
    if (t === to) break;
  }
  let t = from;
  while (periodOf(t, interval, timezone).key === periods[0]!.key) t -= QUARTER_HOUR;
  return { periods, before: periodOf(t, interval, timezone) };
}
