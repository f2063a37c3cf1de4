import type { Completion } from '@codemirror/autocomplete';
import { api } from '../api';
import type { QueriesResult } from '../types';

/**
 * The workspace's columns with their types, read through POST /queries itself: `* APPLY any
 * APPLY toTypeName` answers one row even for an empty table, its keys naming the columns.
 */
const COLUMNS_SQL = 'SELECT * APPLY any APPLY toTypeName FROM events';
/** The most common top-level keys of recent events' properties, traits and context. */
const KEYS_SQL = `SELECT kind, key FROM (
  SELECT 'properties' AS kind, arrayJoin(JSONExtractKeys(properties)) AS key FROM (SELECT properties FROM events ORDER BY parsedAt DESC LIMIT 5000)
  UNION ALL SELECT 'traits', arrayJoin(JSONExtractKeys(traits)) FROM (SELECT traits FROM events ORDER BY parsedAt DESC LIMIT 5000)
  UNION ALL SELECT 'context', arrayJoin(JSONExtractKeys(context)) FROM (SELECT context FROM events ORDER BY parsedAt DESC LIMIT 5000)
) GROUP BY kind, key ORDER BY count() DESC LIMIT 200`;

export async function loadCompletions(): Promise<{ columns: Completion[]; snippets: Completion[] }> {
  const answer = await api<QueriesResult>('POST', '/queries', { queries: [COLUMNS_SQL, KEYS_SQL] });
  const typeRow = answer.results[0]?.results[0] ?? {};
  const columns = Object.entries(typeRow).map(([name, type]) => ({
    label: /^toTypeName\(any\((.*)\)\)$/.exec(name)?.[1] ?? name,
    type: 'property',
    detail: String(type),
    boost: 1,
  }));
  const snippets = (answer.results[1]?.results ?? []).map((r) => ({
    label: `JSONExtractString(${r.kind}, '${String(r.key).replaceAll("'", "\\'")}')`,
    type: 'function',
    detail: `${r.kind} key`,
  }));
  return { columns, snippets };
}
