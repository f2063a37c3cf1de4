/** How values read in tables and lists. */
import { session } from '../session';

const number = new Intl.NumberFormat();

export function formatCount(n: number): string {
  return number.format(n);
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const DATE = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2}))?/;

/**
 * The console's one way of writing a date (a period's label, `2026-11-21`, or a time given as
 * such, `2026-11-21T14:00:00+01:00`, read as written, in the zone it was counted in): `21 Nov 2026`,
 * with `14:00` when it has a time. Axes drop the year of dates in the current one (periodTick).
 */
export function formatDate(label: string): string {
  const m = DATE.exec(label);
  if (!m) return label;
  return `${Number(m[3])} ${MONTHS[Number(m[2]) - 1] ?? m[2]} ${m[1]}${m[4] ? ` ${m[4]}:${m[5]}` : ''}`;
}

/**
 * A period's start under an axis or atop a column: `21 Nov` (`21 Nov 2025` in another year than
 * this one), `Nov 2026` by the month, `21 Nov 14:00` by the hour.
 */
export function periodTick(label: string, interval: 'hour' | 'day' | 'week' | 'month' = 'day'): string {
  const m = DATE.exec(label);
  if (!m) return label;
  const month = MONTHS[Number(m[2]) - 1] ?? m[2];
  if (interval === 'month') return `${month} ${m[1]}`;
  const day = `${Number(m[3])} ${month}${Number(m[1]) === new Date().getFullYear() ? '' : ` ${m[1]}`}`;
  return m[4] ? `${day} ${m[4]}:${m[5]}` : day;
}

const zoned = new Map<string, Intl.DateTimeFormat>();

/**
 * `2024-05-01 12:00:00.123` in `timeZone`, for event times (ISO strings): by default the signed-in
 * workspace's, the zone its days and periods are counted in, so that a list's times and a chart's
 * days agree (the viewer's when the workspace names none).
 */
export function formatTime(iso: string, timeZone = session()?.identity.workspace.timezone): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  const pad = (n: number, w = 2) => String(n).padStart(w, '0');
  if (timeZone) {
    let f = zoned.get(timeZone);
    if (!f) zoned.set(timeZone, (f = new Intl.DateTimeFormat('en-CA', { timeZone, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit' })));
    const p = Object.fromEntries(f.formatToParts(d).map((x) => [x.type, x.value]));
    return `${p.year}-${p.month}-${p.day} ${p.hour}:${p.minute}:${p.second}.${pad(d.getMilliseconds(), 3)}`;
  }
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)}`;
}

/** A cell's text: objects as compact JSON, null as empty. */
export function cellText(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}
