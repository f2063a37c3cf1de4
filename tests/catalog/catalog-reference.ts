/**
 * The event catalog computed plainly from stored events, as docs/governance.md defines it: each
 * event by its name (`$pageview` for a page, `$identify`, `$group`), and each key of its
 * `properties`, `traits` and `context`, nested objects walked to three parts, with the JSON type
 * of each value, counts, first and last time, the events it was on, the SDKs that sent it and the
 * short scalar values it took (candidates for examples).
 */

export interface StoredEvent {
  type: string;
  event: string;
  properties: string;
  traits: string;
  context: string;
  /** ISO 8601. */
  timestamp: string;
}

export interface ReferenceItem {
  name: string;
  source?: string;
  types: Array<{ type: string; count: number }>;
  volume: number;
  firstSeen: string;
  lastSeen: string;
  libraries: string[];
  events?: string[];
  /** Every short scalar value seen, as JSON text: examples are picked from these. */
  values: Set<string>;
}

const nameOf = (e: StoredEvent) => (e.type === 'track' ? e.event : e.type === 'page' ? '$pageview' : `$${e.type}`);

function typeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

function leaves(object: Record<string, unknown>, prefix: string, depth: number): Array<[string, unknown]> {
  return Object.entries(object).flatMap(([key, value]) => {
    const nested = typeOf(value) === 'object' && Object.keys(value as object).length > 0 && depth < 3;
    return nested ? leaves(value as Record<string, unknown>, `${prefix}${key}.`, depth + 1) : [[`${prefix}${key}`, value] as [string, unknown]];
  });
}

interface Acc {
  item: ReferenceItem;
  types: Map<string, number>;
  libraries: Set<string>;
  events: Set<string>;
}

export function referenceCatalog(stored: readonly StoredEvent[]): { events: ReferenceItem[]; properties: ReferenceItem[] } {
  const events = new Map<string, Acc>();
  const properties = new Map<string, Acc>();
  const see = (map: Map<string, Acc>, key: string, name: string, source: string | undefined, type: string, e: StoredEvent, library: string, value?: string) => {
    let acc = map.get(key);
    if (!acc) {
      acc = { item: { name, ...(source ? { source } : {}), types: [], volume: 0, firstSeen: e.timestamp, lastSeen: e.timestamp, libraries: [], values: new Set() }, types: new Map(), libraries: new Set(), events: new Set() };
      map.set(key, acc);
    }
    acc.item.volume++;
    if (e.timestamp < acc.item.firstSeen) acc.item.firstSeen = e.timestamp;
    if (e.timestamp > acc.item.lastSeen) acc.item.lastSeen = e.timestamp;
    acc.types.set(type, (acc.types.get(type) ?? 0) + 1);
    acc.libraries.add(library);
    acc.events.add(nameOf(e));
    if (value !== undefined) acc.item.values.add(value);
  };
  for (const e of stored) {
    const context = e.context ? JSON.parse(e.context) : {};
    const library = typeof context.library?.name === 'string' ? context.library.name : '';
    see(events, nameOf(e), nameOf(e), undefined, e.type, e, library);
    for (const source of ['properties', 'traits', 'context'] as const) {
      if (!e[source]) continue;
      for (const [path, value] of leaves(JSON.parse(e[source]), '', 1)) {
        const type = typeOf(value);
        const text = type === 'array' || type === 'object' ? undefined : JSON.stringify(value);
        see(properties, `${source}:${path}`, path, source, type, e, library, text !== undefined && Buffer.byteLength(text) <= 100 ? text : undefined);
      }
    }
  }
  const finish = (acc: Acc, withEvents: boolean): ReferenceItem => ({
    ...acc.item,
    types: [...acc.types].map(([type, count]) => ({ type, count })).sort((a, b) => b.count - a.count || a.type.localeCompare(b.type)),
    libraries: [...acc.libraries].sort(),
    ...(withEvents ? { events: [...acc.events].sort() } : {}),
  });
  return { events: [...events.values()].map((a) => finish(a, false)), properties: [...properties.values()].map((a) => finish(a, true)) };
}
