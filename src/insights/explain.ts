import type { Params } from '../storage/storage';

/**
 * A compiled statement with its bound parameters written in as ClickHouse literals, for people
 * to read and to run through POST /queries (which takes no parameters). The service itself only
 * ever runs the statement with its parameters bound.
 */

const quoted = (text: string) => `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

function literal(value: unknown, type: string): string {
  if (type.startsWith('Array(')) return `[${(value as unknown[]).map((v) => literal(v, type.slice(6, -1))).join(', ')}]`;
  if (type.startsWith('DateTime64')) return `toDateTime64(${quoted(String(value))}, 6, 'UTC')`;
  if (type === 'String') return quoted(String(value));
  return String(Number(value));
}

export function inlineParameters(sql: string, params: Params): string {
  return sql.replace(/\{(p\d+):([^}]+)\}/g, (whole, name: string, type: string) => (name in params ? literal(params[name], type) : whole));
}
