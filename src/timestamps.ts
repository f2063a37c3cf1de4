/**
 * ISO 8601 date-times in and out, keeping microseconds (the columns are DateTime64(6)), which a
 * JavaScript Date would cut to milliseconds.
 */

const ISO_DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?([Zz]|[+-]\d{2}(?::?\d{2})?)?)?$/;

/** DateTime64 covers 1900 to 2299; outside that ClickHouse would silently clamp. */
const MIN_YEAR = 1900;
const MAX_YEAR = 2299;

/** A point in time as whole microseconds since the Unix epoch. */
export type Micros = bigint;

/**
 * Parses `YYYY-MM-DD`, or a date-time with optional seconds, fraction and offset. Without an
 * offset the time is taken as UTC. Returns undefined for anything else, including impossible
 * calendar dates such as February 30.
 */
export function parseIsoDateTime(text: string): Micros | undefined {
  const m = ISO_DATE_TIME.exec(text);
  if (!m) return undefined;
  const [, y, mo, d, h = '00', mi = '00', s = '00', frac = '', zone = 'Z'] = m;
  const year = Number(y), month = Number(mo), day = Number(d);
  const hour = Number(h), minute = Number(mi), second = Number(s);
  if (hour > 23 || minute > 59 || second > 59) return undefined;
  const ms = Date.UTC(year, month - 1, day, hour, minute, second);
  const check = new Date(ms);
  if (check.getUTCFullYear() !== year || check.getUTCMonth() !== month - 1 || check.getUTCDate() !== day) return undefined;
  let offsetMinutes = 0;
  if (zone !== 'Z' && zone !== 'z') {
    const digits = zone.slice(1).replace(':', '');
    const oh = Number(digits.slice(0, 2)), om = Number(digits.slice(2) || '0');
    if (oh > 23 || om > 59) return undefined;
    offsetMinutes = (zone[0] === '-' ? -1 : 1) * (oh * 60 + om);
  }
  const micros = BigInt(frac.padEnd(6, '0').slice(0, 6) || '0');
  const total = BigInt(ms - offsetMinutes * 60_000) * 1000n + micros;
  const utcYear = new Date(Number(total / 1000n)).getUTCFullYear();
  if (utcYear < MIN_YEAR || utcYear > MAX_YEAR) return undefined;
  return total;
}

export function nowMicros(): Micros {
  return BigInt(Date.now()) * 1000n;
}

/** Times from 1970 up to here are exact as doubles (2^53 µs: the year 2255), and far cheaper to split so. */
const SAFE_MICROS = BigInt(Number.MAX_SAFE_INTEGER);

/** '000' to '999': a fraction's digits by table (events are formatted on the ingest path, each by acceptEvent). */
const DIGITS3 = Array.from({ length: 1000 }, (_, i) => String(i).padStart(3, '0'));

/** Whole seconds (rounded down, also before 1970) and the microseconds after them. */
function split(t: Micros): { second: number; micros: number } {
  if (t >= 0n && t <= SAFE_MICROS) {
    const n = Number(t);
    const second = Math.floor(n / 1_000_000);
    return { second, micros: n - second * 1_000_000 };
  }
  const second = t >= 0n ? t / 1_000_000n : (t - 999_999n) / 1_000_000n;
  return { second: Number(second), micros: Number(t - second * 1_000_000n) };
}

/** The last whole second formatted, `YYYY-MM-DDThh:mm:ss` and the engine's `YYYY-MM-DD hh:mm:ss`: events come many to a second. */
let lastSecond = { at: NaN, iso: '', engine: '' };

function secondOf(second: number): { iso: string; engine: string } {
  if (second !== lastSecond.at) {
    const iso = new Date(second * 1000).toISOString().slice(0, 19);
    lastSecond = { at: second, iso, engine: iso.replace('T', ' ') };
  }
  return lastSecond;
}

/** The engine's text form, `YYYY-MM-DD hh:mm:ss.ffffff` in UTC. */
export function toEngineDateTime(t: Micros): string {
  const { second, micros } = split(t);
  const sub = micros % 1000;
  return `${secondOf(second).engine}.${DIGITS3[(micros - sub) / 1000]}${DIGITS3[sub]}`;
}

/** ISO 8601 in UTC: milliseconds as `toISOString()` gives them, six digits when finer. */
export function toIsoString(t: Micros): string {
  const { second, micros } = split(t);
  const sub = micros % 1000;
  return `${secondOf(second).iso}.${DIGITS3[(micros - sub) / 1000]}${sub === 0 ? '' : DIGITS3[sub]}Z`;
}

const ENGINE_MICROS = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{6}$/;

/** Reads the engine's `YYYY-MM-DD hh:mm:ss[.ffffff]` (UTC) back to an ISO string. */
export function engineToIso(text: string): string {
  // The engine's DateTime64(6) text needs no date arithmetic: the same fields, reformatted.
  if (ENGINE_MICROS.test(text)) {
    const micros = text.slice(20);
    return `${text.slice(0, 10)}T${text.slice(11, 19)}.${micros.endsWith('000') ? micros.slice(0, 3) : micros}Z`;
  }
  const t = parseIsoDateTime(text);
  if (t === undefined) throw new Error(`unexpected DateTime64 text from the engine: ${text}`);
  return toIsoString(t);
}
