import type { Completion } from '@codemirror/autocomplete';
import { api, problemOf, requestWith } from '../api';
import { session } from '../session';
import type { QueriesResult } from '../types';

/**
 * The events table's columns with their types, as the ClickHouse interface describes them:
 * POST /queries runs SELECTs only, and its guard refuses `* APPLY toTypeName` (which function
 * APPLY applies is not in the parse it judges). Columns filled by the service (property reads kept
 * as MATERIALIZED columns) are left out, as `SELECT *` leaves them out.
 */
async function eventColumns(): Promise<Array<{ name: string; type: string }>> {
  const current = session();
  if (!current) return [];
  const res = await requestWith(current, 'POST', '/clickhouse', { body: 'DESCRIBE TABLE events FORMAT JSONEachRow' });
  if (!res.ok) throw await problemOf(res);
  const described = (await res.text())
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as { name: string; type: string; default_type: string });
  return described.filter((column) => column.default_type === '' || column.default_type === 'DEFAULT');
}

/**
 * The most common top-level keys of recent events' properties, traits and context: the newest by
 * time, which the table's sort key reads from its end (by arrival, every row was sorted: 112
 * against 18 ms on 2 million events).
 */
const KEYS_SQL = `SELECT kind, key FROM (
  SELECT 'properties' AS kind, arrayJoin(JSONExtractKeys(properties)) AS key FROM (SELECT properties FROM events ORDER BY timestamp DESC LIMIT 5000)
  UNION ALL SELECT 'traits', arrayJoin(JSONExtractKeys(traits)) FROM (SELECT traits FROM events ORDER BY timestamp DESC LIMIT 5000)
  UNION ALL SELECT 'context', arrayJoin(JSONExtractKeys(context)) FROM (SELECT context FROM events ORDER BY timestamp DESC LIMIT 5000)
) GROUP BY kind, key ORDER BY count() DESC LIMIT 200`;

export async function loadCompletions(): Promise<{ columns: Completion[]; snippets: Completion[] }> {
  const [described, keys] = await Promise.all([eventColumns(), api<QueriesResult>('POST', '/queries', { queries: [KEYS_SQL] })]);
  const columns = described.map(({ name, type }) => ({ label: name, type: 'property', detail: type, boost: 1 }));
  const snippets = (keys.results[0]?.results ?? []).map((r) => ({
    label: `JSONExtractString(${r.kind}, '${String(r.key).replaceAll("'", "\\'")}')`,
    type: 'function',
    detail: `${r.kind} key`,
  }));
  return { columns, snippets };
}
