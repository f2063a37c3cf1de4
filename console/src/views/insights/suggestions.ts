import { api } from '../../api';
import { session } from '../../session';
import type { QueriesResult } from '../../types';
import type { Source } from './types';

/**
 * What the builder suggests while a query is typed: the workspace's event names, the property
 * names of recent events and of persons' traits, and a property's most frequent values, all read
 * through `POST /queries` (the sandbox that any private key may use) and kept for a minute.
 */
export interface Suggestions {
  events: string[];
  eventProperties: string[];
  personProperties: string[];
}

/** Names every insight takes besides the workspace's events. */
export const SPECIAL_EVENTS = ['$pageview', '$any'];
/** Event columns a filter or breakdown may name (docs/api/filters.md). */
export const EVENT_COLUMNS = ['event', 'type', 'userId', 'anonymousId', 'groupId', 'personId', 'messageId', 'instanceId'];
const PERSON_COLUMNS = ['personId', 'userId'];

const EVENTS_SQL = "SELECT event, count() AS n FROM events WHERE timestamp > now() - INTERVAL 30 DAY AND event != '' GROUP BY event ORDER BY n DESC LIMIT 200";
const keysOf = (column: string, table: string, order: string) =>
  `SELECT key, count() AS n FROM (SELECT arrayJoin(JSONExtractKeys(${column})) AS key FROM (SELECT ${column} FROM ${table} ORDER BY ${order} DESC LIMIT 5000)) GROUP BY key ORDER BY n DESC LIMIT 100`;
const EVENT_KEYS_SQL = keysOf('properties', 'events', 'timestamp');
const PERSON_KEYS_SQL = keysOf('traits', 'persons', 'lastSeen');

const TTL_MS = 60_000;
let cached: { workspaceId: string; at: number; value: Promise<Suggestions> } | undefined;
const valueCache = new Map<string, Promise<string[]>>();

const column = (answer: QueriesResult, index: number, name: string) => (answer.results[index]?.results ?? []).map((r) => String(r[name] ?? '')).filter(Boolean);

export function loadSuggestions(): Promise<Suggestions> {
  const workspaceId = session()?.identity.workspace.workspaceId ?? '';
  if (cached && cached.workspaceId === workspaceId && Date.now() - cached.at < TTL_MS) return cached.value;
  valueCache.clear();
  const value = api<QueriesResult>('POST', '/queries', { queries: [EVENTS_SQL, EVENT_KEYS_SQL] }).then(async (answer) => {
    // The persons view is asked on its own: a workspace without it still gets event suggestions.
    const persons = await api<QueriesResult>('POST', '/queries', { queries: [PERSON_KEYS_SQL] }).then(
      (a) => column(a, 0, 'key'),
      () => [] as string[],
    );
    return {
      events: column(answer, 0, 'event'),
      eventProperties: [...column(answer, 1, 'key'), ...EVENT_COLUMNS],
      personProperties: [...persons, ...PERSON_COLUMNS],
    };
  });
  cached = { workspaceId, at: Date.now(), value };
  value.catch(() => (cached = undefined));
  return value;
}

/** A ClickHouse string literal of any text. */
export function literal(text: string): string {
  return `'${text.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`;
}

/** The SQL text of a property, as the filters compare it: a string's value, else its JSON text. */
function propertyText(source: Source, property: string): { expression: string; present: string; table: string } {
  const table = source === 'person' ? 'persons' : source === 'group' ? 'groups' : 'events';
  const columns = source === 'event' ? EVENT_COLUMNS : source === 'person' ? PERSON_COLUMNS : ['groupId'];
  if (columns.includes(property)) return { expression: `toString(${property})`, present: '1', table };
  let json = source === 'event' ? 'properties' : 'traits';
  let keys = property.split('.');
  if (source === 'event' && (keys[0] === 'traits' || keys[0] === 'context') && keys.length > 1) {
    json = keys[0];
    keys = keys.slice(1);
  }
  const path = keys.map(literal).join(', ');
  return {
    expression: `multiIf(JSONType(${json}, ${path}) = 'String', JSONExtractString(${json}, ${path}), JSONExtractRaw(${json}, ${path}))`,
    present: `JSONHas(${json}, ${path})`,
    table,
  };
}

/** The most frequent values of a property (of the last 30 days' events, or of persons or groups). */
export function topValues(source: Source, property: string): Promise<string[]> {
  const name = property.trim();
  if (!name || name.split('.').some((k) => k === '')) return Promise.resolve([]);
  const key = `${source}\u0000${name}`;
  let values = valueCache.get(key);
  if (!values) {
    const { expression, present, table } = propertyText(source, name);
    const recent = table === 'events' ? 'timestamp > now() - INTERVAL 30 DAY AND ' : '';
    const sql = `SELECT ${expression} AS v, count() AS n FROM ${table} WHERE ${recent}${present} GROUP BY v ORDER BY n DESC LIMIT 20`;
    values = api<QueriesResult>('POST', '/queries', { queries: [sql] }).then(
      (a) => column(a, 0, 'v'),
      () => [],
    );
    valueCache.set(key, values);
  }
  return values;
}
