/** The Prometheus text exposition format, version 0.0.4: the pieces every metric type writes. */

export const EXPOSITION_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

export type MetricType = 'counter' | 'gauge' | 'histogram';

/** A label value goes between double quotes, so backslash, double quote and line feed are escaped. */
export function escapeLabelValue(value: string): string {
  return value.replace(/[\\"\n]/g, (c) => (c === '\n' ? '\\n' : `\\${c}`));
}

/** HELP text escapes backslash and line feed only (it is not quoted). */
function escapeHelp(text: string): string {
  return text.replace(/[\\\n]/g, (c) => (c === '\n' ? '\\n' : '\\\\'));
}

/** A sample value as Prometheus reads it: infinities and NaN are spelled `+Inf`, `-Inf`, `NaN`. */
export function formatValue(value: number): string {
  if (value === Infinity) return '+Inf';
  if (value === -Infinity) return '-Inf';
  return Number.isNaN(value) ? 'NaN' : String(value);
}

/** `{a="x",b="y"}` from names and values in the same order; empty without labels. */
export function labelSet(names: readonly string[], values: readonly string[]): string {
  if (names.length === 0) return '';
  return `{${names.map((name, i) => `${name}="${escapeLabelValue(values[i]!)}"`).join(',')}}`;
}

/** The `# HELP` and `# TYPE` lines that open a metric family. */
export function familyHeader(name: string, help: string, type: MetricType): string {
  return `# HELP ${name} ${escapeHelp(help)}\n# TYPE ${name} ${type}\n`;
}
