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
