import type { Row } from '../types';

/** A date (`2024-05-01`) or a date-time as ClickHouse or ISO 8601 writes it. */
const DATE_TIME = /^\d{4}-\d{2}-\d{2}(?:[ T]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/;

/** Seconds since the epoch of a date or date-time; ClickHouse's own text is UTC here (DateTime64(6, 'UTC')). */
export function parseTime(value: unknown): number | undefined {
  if (typeof value !== 'string' || !DATE_TIME.test(value)) return undefined;
  const iso = value.replace(' ', 'T');
  const ms = Date.parse(/[Zz]|[+-]\d{2}:?\d{2}$/.test(iso) || iso.length === 10 ? iso : `${iso}Z`);
  return Number.isNaN(ms) ? undefined : ms / 1000;
}

function numeric(value: unknown): number | undefined {
  if (typeof value === 'number') return value;
  // 64-bit integers and decimals may come as strings; a date is not a number.
  if (typeof value === 'string' && value.trim() !== '' && !DATE_TIME.test(value)) {
    const n = Number(value);
    return Number.isFinite(n) ? n : undefined;
  }
  return undefined;
}

export type ChartPlan =
  | { kind: 'line'; x: string; xs: number[]; series: Array<{ name: string; values: Array<number | null> }> }
  | { kind: 'bars'; x: string; labels: string[]; series: Array<{ name: string; values: Array<number | null> }> }
  | { kind: 'none'; reason: string };

/** Most bars drawn: beyond them labels cannot be read. */
const MAX_BARS = 200;

/**
 * What a result's chart should be: a line over time when a column holds dates or times (the
 * first such column is the x axis), bars over the first text column otherwise; every numeric
 * column is a series.
 */
export function planChart(columns: readonly string[], rows: readonly Row[]): ChartPlan {
  if (rows.length === 0) return { kind: 'none', reason: 'The query returned no rows.' };
  const every = (c: string, test: (v: unknown) => boolean) => rows.every((r) => r[c] === null || test(r[c]));
  const timeColumn = columns.find((c) => every(c, (v) => parseTime(v) !== undefined));
  const valueColumns = columns.filter((c) => c !== timeColumn && every(c, (v) => numeric(v) !== undefined));
  if (valueColumns.length === 0) return { kind: 'none', reason: 'Nothing to chart: no column holds numbers.' };
  if (timeColumn) {
    const order = rows.map((r, i) => [parseTime(r[timeColumn]) ?? 0, i] as const).sort((a, b) => a[0] - b[0]);
    return {
      kind: 'line',
      x: timeColumn,
      xs: order.map(([t]) => t),
      series: valueColumns.map((name) => ({ name, values: order.map(([, i]) => numeric(rows[i]![name]) ?? null) })),
    };
  }
  const labelColumn = columns.find((c) => !valueColumns.includes(c));
  const shown = rows.slice(0, MAX_BARS);
  return {
    kind: 'bars',
    x: labelColumn ?? '#',
    labels: shown.map((r, i) => (labelColumn ? String(r[labelColumn] ?? '') : String(i + 1))),
    series: valueColumns.map((name) => ({ name, values: shown.map((r) => numeric(r[name]) ?? null) })),
  };
}
