import { api } from '../../api';
import { session } from '../../session';
import type { Page, QueriesResult } from '../../types';
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
  /**
   * Every event name the workspace has received (hidden ones too), from the catalog: a name
   * outside it is not asked for (it would answer zeros). Undefined while unknown (the catalog
   * unread, or longer than one page).
   */
  known?: ReadonlySet<string>;
  /** What the catalog says of a property (its observed types, its description), by source and path as filters name it. */
  described: Record<Source, ReadonlyMap<string, Described>>;
  /** What the catalog says of an event: its display name and description. */
  describedEvents: ReadonlyMap<string, Described>;
}

/** A catalog entry as the pickers show it beside a name. */
export interface Described {
  types: string[];
  text: string;
}

/** Readable names of the suggestions that are paths (the datalists show them beside the path). */
export const LABELS: Record<string, string> = {
  'context.source': 'Source',
  'context.page.referrer': 'Referrer',
  'context.location.country': 'Country',
  'context.browser.name': 'Browser',
  'context.os.name': 'OS',
  'context.device.type': 'Device type',
  'context.campaign.source': 'UTM source',
  'context.campaign.medium': 'UTM medium',
  'context.campaign.name': 'UTM campaign',
  'context.campaign.term': 'UTM term',
  'context.campaign.content': 'UTM content',
  $initial_source: 'First source',
  $initial_referrer: 'First referrer',
  $initial_referring_domain: 'First referring domain',
  $initial_utm_source: 'First UTM source',
  $initial_utm_medium: 'First UTM medium',
  $initial_utm_campaign: 'First UTM campaign',
  $initial_pathname: 'First page',
  $initial_country: 'First country',
  $initial_browser: 'First browser',
  $initial_os: 'First OS',
  $initial_device: 'First device type',
};
/** What the enrichment adds to an event's context (docs/api/events.md#enrichment), as an event property path. */
const ENRICHED = Object.keys(LABELS).filter((k) => k.startsWith('context.'));
/** A person's first touch (CONTRACT section 13, docs/api/persons.md). */
const FIRST_TOUCH = Object.keys(LABELS).filter((k) => k.startsWith('$initial_'));
/** Catalog entries read in one page at most (the API's limit). */
const CATALOG_PAGE = 1000;

interface CatalogItem {
  name: string;
  source?: string;
  hidden: boolean;
  types: Array<{ type: string }>;
  description: string;
  displayName?: string | null;
}

/** A filter's path of a catalog property: `plan` (properties), `context.page.path`, `traits.plan` of an event; a trait's own name for persons. */
const eventPath = (p: CatalogItem) => (p.source === 'context' || p.source === 'traits' ? `${p.source}.${p.name}` : p.name);

function describe(items: readonly CatalogItem[], key: (item: CatalogItem) => string, own: (item: CatalogItem) => string[]): Map<string, Described> {
  return new Map(items.map((item) => [key(item), { types: item.types.map((t) => t.type), text: own(item).filter(Boolean).join(' · ') }]));
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
  const catalog = <T>(path: string) => api<Page<T>>('GET', `${path}?limit=${CATALOG_PAGE}`).catch(() => undefined);
  const value = api<QueriesResult>('POST', '/queries', { queries: [EVENTS_SQL, EVENT_KEYS_SQL] }).then(async (answer) => {
    // The persons view is asked on its own: a workspace without it still gets event suggestions.
    const [persons, events, properties] = await Promise.all([
      api<QueriesResult>('POST', '/queries', { queries: [PERSON_KEYS_SQL] }).then(
        (a) => column(a, 0, 'key'),
        () => [] as string[],
      ),
      catalog<CatalogItem>('/catalog/events'),
      catalog<CatalogItem>('/catalog/properties'),
    ]);
    const catalogProperties = properties?.results ?? [];
    const ofTraits = catalogProperties.filter((p) => p.source === 'traits');
    // Curated as hidden in the catalog: left out of the pickers (still usable when typed).
    const hidden = new Set(catalogProperties.filter((p) => p.hidden && p.source !== 'traits').map((p) => (p.source === 'context' ? `context.${p.name}` : p.name)));
    const hiddenTraits = new Set(ofTraits.filter((p) => p.hidden).map((p) => p.name));
    const hiddenEvents = new Set((events?.results ?? []).filter((e) => e.hidden).map((e) => e.name));
    const whole = events && events.total <= events.results.length;
    return {
      events: column(answer, 0, 'event').filter((e) => !hiddenEvents.has(e)),
      eventProperties: unique([...ENRICHED, ...column(answer, 1, 'key'), ...EVENT_COLUMNS]).filter((p) => !hidden.has(p)),
      personProperties: unique([...FIRST_TOUCH, ...persons, ...PERSON_COLUMNS]).filter((p) => !hiddenTraits.has(p)),
      // With the names of recent events, which may be newer than the catalog's last record.
      ...(whole ? { known: new Set([...events.results.map((e) => e.name), ...column(answer, 0, 'event')]) } : {}),
      described: {
        event: describe(catalogProperties, eventPath, (p) => [p.types.map((t) => t.type).join(' or '), p.description]),
        person: describe(ofTraits, (p) => p.name, (p) => [p.types.map((t) => t.type).join(' or '), p.description]),
        group: new Map(),
      },
      describedEvents: describe(events?.results ?? [], (e) => e.name, (e) => [e.displayName ?? '', e.description]),
    };
  });
  cached = { workspaceId, at: Date.now(), value };
  value.catch(() => (cached = undefined));
  return value;
}

const unique = (names: string[]) => [...new Set(names)];

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
