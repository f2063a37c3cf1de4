import { parseJsonLossless } from '../lossless-json';
import type { Row } from '../storage/storage';

/**
 * Columns that hold the JSON text of an object and are answered as that object, as Trench does:
 * `properties`, `traits`, `context`, also behind a table alias (`i.traits` in a join).
 */
const OBJECT_COLUMN = /(?:^|\.)(?:properties|traits|context)$/;

function asObject(text: string): Record<string, unknown> | undefined {
  if (!text.startsWith('{')) return undefined;
  try {
    return parseJsonLossless(text) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

/** The engine's JSONEachRow text as rows keyed by column name or alias. */
export function parseResultRows(text: string): Row[] {
  const rows: Row[] = [];
  for (const line of text.split('\n')) {
    if (!line) continue;
    const row = parseJsonLossless(line) as Row;
    for (const [column, value] of Object.entries(row)) {
      if (typeof value !== 'string' || !OBJECT_COLUMN.test(column)) continue;
      const object = asObject(value);
      if (object) row[column] = object;
    }
    rows.push(row);
  }
  return rows;
}

/**
 * The engine's JSONEachRow text as the JSON text of the array of its rows, as
 * `JSON.stringify(parseResultRows(text))` gives them. When no column holds an object's text (the
 * first row names the columns), the lines are joined as they are, never parsed: a 60 MB result
 * made about five times its size in objects before it was written out again.
 */
export function resultRowsJson(text: string): string {
  if (text === '') return '[]';
  const firstEnd = text.indexOf('\n');
  const first = parseJsonLossless(firstEnd < 0 ? text : text.slice(0, firstEnd)) as Row;
  if (Object.keys(first).some((column) => OBJECT_COLUMN.test(column))) return JSON.stringify(parseResultRows(text));
  const lines = text.endsWith('\n') ? text.slice(0, -1) : text;
  return `[${lines.replaceAll('\n', ',')}]`;
}
