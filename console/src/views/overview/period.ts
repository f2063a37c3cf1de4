/**
 * The date ranges of the picker. Most are asked by Plausible's own shortcut (`7d`: the seven whole
 * days ending yesterday, `month`: this whole month, `day`: today so far), so the screen means what
 * the API means; the last 6 and 12 months are the months up to this one (its days to come counting
 * nothing), asked as a pair of dates; the period before it, of the same
 * length, is asked as a pair of ISO dates at the same time (from the days worked out here, and
 * again from the ones the API says it counted, should they differ).
 */
export const PERIODS = [
  { id: 'today', label: 'Today' },
  { id: '7d', label: 'Last 7 days' },
  { id: '30d', label: 'Last 30 days' },
  { id: 'month', label: 'This month' },
  { id: '6mo', label: 'Last 6 months' },
  { id: '12mo', label: 'Last 12 months' },
  { id: 'custom', label: 'Custom range' },
] as const;
export type PeriodId = (typeof PERIODS)[number]['id'];

/** How the chart buckets time: the API's time dimension for it. */
export type Interval = 'hour' | 'day' | 'month';

export interface Range {
  from: string;
  to: string;
  interval: Interval;
  /** Plausible's name for the range, when it has one. */
  shortcut?: string;
}

/** The `date_range` a range is asked with. */
export const dateRangeOf = (r: Range): string | [string, string] => r.shortcut ?? [r.from, r.to];

const DAY_MS = 86_400_000;
const iso = (d: Date) => d.toISOString().slice(0, 10);
const parse = (s: string) => new Date(`${s}T00:00:00Z`);
const addDays = (s: string, n: number) => iso(new Date(parse(s).getTime() + n * DAY_MS));
/** The first day of the month `n` months after the one of `s`. */
const monthStart = (s: string, n = 0) => {
  const d = parse(s);
  return iso(new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + n, 1)));
};
const monthEnd = (s: string, n = 0) => addDays(monthStart(s, n + 1), -1);
export const isDate = (s: string | null | undefined): s is string => !!s && /^\d{4}-\d{2}-\d{2}$/.test(s) && !Number.isNaN(parse(s).getTime());
export const daysIn = (r: Range) => Math.round((parse(r.to).getTime() - parse(r.from).getTime()) / DAY_MS) + 1;

export function todayUtc(now = new Date()): string {
  return iso(now);
}

/** The range a period covers, `today` being the last day of the rolling ones. */
export function rangeOf(period: PeriodId, custom: { from?: string; to?: string } = {}, today = todayUtc()): Range {
  switch (period) {
    case 'today':
      return { from: today, to: today, interval: 'hour', shortcut: 'day' };
    case '7d':
      return { from: addDays(today, -7), to: addDays(today, -1), interval: 'day', shortcut: '7d' };
    case '30d':
      return { from: addDays(today, -30), to: addDays(today, -1), interval: 'day', shortcut: '30d' };
    case 'month':
      return { from: monthStart(today), to: monthEnd(today), interval: 'day', shortcut: 'month' };
    // The months up to this one, asked as dates: Plausible's `6mo` and `12mo` end with last month,
    // which on a site a few weeks old answers no visits at all.
    case '6mo':
      return { from: monthStart(today, -5), to: monthEnd(today), interval: 'month' };
    case '12mo':
      return { from: monthStart(today, -11), to: monthEnd(today), interval: 'month' };
    case 'custom': {
      let from = isDate(custom.from) ? custom.from : addDays(today, -6);
      let to = isDate(custom.to) ? custom.to : today;
      if (from > to) [from, to] = [to, from];
      const r = { from, to, interval: 'day' as Interval };
      return { ...r, interval: daysIn(r) === 1 ? 'hour' : daysIn(r) > 92 ? 'month' : 'day' };
    }
  }
}

/**
 * The days the API says it counted (its answer's `query.date_range`, local date-times with the
 * site's offset), in place of the ones worked out here in UTC: the site may keep another time zone.
 */
export function resolvedBy(range: Range, echoed: unknown): Range {
  if (!Array.isArray(echoed) || echoed.length !== 2) return range;
  const [from, to] = echoed.map((v) => String(v).slice(0, 10));
  return isDate(from) && isDate(to) && from <= to ? { ...range, from, to } : range;
}

/** The period just before, as long: the previous months for the month-based ones. */
export function previousOf(period: PeriodId, range: Range): Range {
  if (period === 'month' || period === '6mo' || period === '12mo') {
    const months = period === 'month' ? 1 : period === '6mo' ? 6 : 12;
    return { from: monthStart(range.from, -months), to: monthEnd(range.from, -1), interval: range.interval };
  }
  const n = daysIn(range);
  return { from: addDays(range.from, -n), to: addDays(range.from, -1), interval: range.interval };
}


/**
 * Every bucket of a range in order, as keys that a time dimension's value is reduced to:
 * `2026-11-27T14` by the hour, `2026-11-27` by the day, `2026-11` by the month.
 */
export function bucketsOf(range: Range): string[] {
  const out: string[] = [];
  if (range.interval === 'hour') {
    for (let d = range.from; d <= range.to; d = addDays(d, 1)) for (let hr = 0; hr < 24; hr++) out.push(`${d}T${String(hr).padStart(2, '0')}`);
  } else if (range.interval === 'day') {
    for (let d = range.from; d <= range.to; d = addDays(d, 1)) out.push(d);
  } else {
    for (let m = monthStart(range.from); m <= range.to; m = monthStart(m, 1)) out.push(m.slice(0, 7));
  }
  return out;
}

/** A time dimension's value (`2026-11-27`, `2026-11-27 14:00:00`, `2026-11-01`) as a bucket key. */
export function bucketKey(value: string, interval: Interval): string {
  const v = value.replace(' ', 'T');
  return interval === 'hour' ? v.slice(0, 13) : interval === 'day' ? v.slice(0, 10) : v.slice(0, 7);
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** A bucket under the chart's axis: `14:00`, `27 Nov`, `Nov 2026`. */
export function bucketLabel(key: string, interval: Interval): string {
  if (interval === 'hour') return `${key.slice(11, 13)}:00`;
  const month = MONTHS[Number(key.slice(5, 7)) - 1] ?? '';
  return interval === 'day' ? `${Number(key.slice(8, 10))} ${month}` : `${month} ${key.slice(0, 4)}`;
}

/** `1 Nov – 27 Nov 2026`, or one day. */
export function describeRange(r: Range): string {
  const day = (s: string, year: boolean) => `${Number(s.slice(8, 10))} ${MONTHS[Number(s.slice(5, 7)) - 1]}${year ? ` ${s.slice(0, 4)}` : ''}`;
  return r.from === r.to ? day(r.from, true) : `${day(r.from, r.from.slice(0, 4) !== r.to.slice(0, 4))} – ${day(r.to, true)}`;
}
