/**
 * A read of one value of an event's JSON object by constant keys: `JSONExtract(properties, 'plan',
 * 'String')`, `JSONHas(context, 'page', 'path')`. Its signature is its text with the arguments as
 * plain literals, written as ClickHouse writes them (so it is also the name ClickHouse gives the
 * call as a result column), and the expression of the column that stores it
 * (docs/architecture.md#fast-properties).
 */
import { createHash } from 'node:crypto';

/** The functions whose reads may be stored: those of one value at a path (arrays of values are not stored), by ClickHouse's names. */
export const READ_FUNCTIONS: ReadonlySet<string> = new Set([
  'JSONHas',
  'JSONLength',
  'JSONType',
  'JSONExtract',
  'JSONExtractUInt',
  'JSONExtractInt',
  'JSONExtractFloat',
  'JSONExtractBool',
  'JSONExtractString',
  'JSONExtractRaw',
]);

/** The event columns holding JSON objects. */
export const OBJECT_COLUMNS: ReadonlySet<string> = new Set(['properties', 'traits', 'context']);

export interface JsonRead {
  fn: string;
  /** `properties`, `traits` or `context`. */
  object: string;
  /** Keys (strings) and positions (integers), then the type name for JSONExtract. */
  args: ReadonlyArray<string | number>;
}

/** Escapes as ClickHouse's formatter writes a string literal: these eight, every other character as it is. */
const ESCAPES: Record<string, string> = { '\\': '\\\\', "'": "\\'", '\n': '\\n', '\r': '\\r', '\t': '\\t', '\0': '\\0', '\b': '\\b', '\f': '\\f' };
const UNESCAPES: Record<string, string> = Object.fromEntries(Object.entries(ESCAPES).map(([c, e]) => [e[1]!, c]));

export function quoteLiteral(value: string): string {
  return `'${value.replace(/[\\'\n\r\t\0\b\f]/g, (c) => ESCAPES[c]!)}'`;
}

/**
 * The value of a string literal written with only the formatter's escapes (or `''`); undefined for
 * any other escape, whose reading this module does not claim to know.
 */
export function unquoteLiteral(literal: string): string | undefined {
  if (literal.length < 2 || literal[0] !== "'" || literal[literal.length - 1] !== "'") return undefined;
  let value = '';
  for (let i = 1; i < literal.length - 1; i++) {
    const c = literal[i]!;
    if (c === "'" && literal[i + 1] === "'" && i + 1 < literal.length - 1) {
      value += "'";
      i++;
    } else if (c === '\\') {
      const unescaped = UNESCAPES[literal[i + 1] ?? ''];
      if (unescaped === undefined) return undefined;
      value += unescaped;
      i++;
    } else {
      value += c;
    }
  }
  return value;
}

export function signatureOf(read: JsonRead): string {
  const args = read.args.map((a) => (typeof a === 'number' ? String(a) : quoteLiteral(a)));
  return `${read.fn}(${[read.object, ...args].join(', ')})`;
}

/** Stored reads' columns are named `property_read_` and 16 hex digits of their signature's SHA-256. */
export const READ_COLUMN_PREFIX = 'property_read_';

export function readColumnName(signature: string): string {
  return READ_COLUMN_PREFIX + createHash('sha256').update(signature).digest('hex').slice(0, 16);
}
