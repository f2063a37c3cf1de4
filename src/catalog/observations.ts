import type { Event } from '../events/model';
import { toEngineDateTime, parseIsoDateTime } from '../timestamps';

/**
 * What the catalog observes of an event (docs/governance.md#the-catalog): one row for the event
 * itself (kind `event`, its type as `type`) and one per property path of its `properties`, `traits`
 * and `context`, with the JSON type of the value there. Nested objects are walked to
 * MAX_PATH_DEPTH parts (`context.page.path` is `page.path` of `context`); deeper, or empty, an
 * object is a value of type `object`. The same rule is written twice, here for the events a load
 * stores and in SQL (`observationsSql`) for the events stored before the catalog: the catalog's
 * tests hold the two to the same answers.
 */
export const MAX_PATH_DEPTH = 3;
/** Distinct example values kept per row of the catalog (and answered per item). */
export const MAX_EXAMPLES = 5;
/** Only a scalar value whose JSON text is this short (in bytes) is kept as an example. */
export const MAX_EXAMPLE_BYTES = 100;

export const PROPERTY_KINDS = ['properties', 'traits', 'context'] as const;
export type PropertyKind = (typeof PROPERTY_KINDS)[number];
export type ObservedType = 'string' | 'number' | 'boolean' | 'null' | 'array' | 'object';

/** The catalog's name of an event: its `event` for a track, `$pageview` for a page (as insights name it), `$identify`, `$group`. */
export function catalogEventName(type: string, event: string | undefined): string {
  if (type === 'track') return event ?? '';
  return type === 'page' ? '$pageview' : `$${type}`;
}

/** The same name in SQL, over the columns `type` and `event`. */
export const EVENT_NAME_SQL = "multiIf(type = 'track', event, type = 'page', '$pageview', concat('$', type))";

/** A row of the `catalog` table, as inserted (JSONEachRow). */
export interface CatalogRow {
  kind: 'event' | PropertyKind;
  event: string;
  path: string;
  type: string;
  day: string;
  library: string;
  events: number;
  firstSeen: string;
  lastSeen: string;
  examples: string[];
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value) && !(JSON as unknown as { isRawJSON(v: unknown): boolean }).isRawJSON(value);

/** The JSON type of a parsed value (a long number kept exact is a raw JSON number). */
export function observedType(value: unknown): ObservedType {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'object') return isObject(value) ? 'object' : 'number';
  if (typeof value === 'bigint') return 'number';
  return typeof value as 'string' | 'number' | 'boolean';
}

function hasKeys(object: object): boolean {
  for (const _ in object) return true;
  return false;
}

/** A value's example text: its JSON, for a short scalar read exactly; else none. */
export function exampleOf(value: unknown, type: ObservedType): string | undefined {
  if (type === 'array' || type === 'object') return undefined;
  // A whole number past 2^53 read as a double lost digits: its text would not be what was sent.
  if (typeof value === 'number' && Number.isInteger(value) && !Number.isSafeInteger(value)) return undefined;
  const text = JSON.stringify(value);
  return Buffer.byteLength(text) <= MAX_EXAMPLE_BYTES ? text : undefined;
}

/** The library that sent an event: `context.library.name`, else ''. */
export function libraryOf(context: Record<string, unknown> | undefined): string {
  const library = context?.library;
  return isObject(library) && typeof library.name === 'string' ? library.name : '';
}

/**
 * The engine's text of an event's time (as the API writes it: ISO 8601, in UTC, to the millisecond
 * unless finer), made by moving characters; times compare as text in this form.
 */
function engineTime(iso: string): string {
  if (iso.length === 24 && iso[10] === 'T') return `${iso.slice(0, 10)} ${iso.slice(11, 23)}000`;
  if (iso.length === 27 && iso[10] === 'T') return `${iso.slice(0, 10)} ${iso.slice(11, 26)}`;
  return toEngineDateTime(parseIsoDateTime(iso)!);
}

/** A row being made, and the scalar values already tried as its examples (a value seen again is not written out again). */
interface Making {
  row: CatalogRow;
  tried: Set<unknown>;
}
/** Values remembered as tried per row: past this many (long texts that are no example, say), each is written out to be judged. */
const MAX_TRIED = 64;

/** The observed types in a fixed order: a path's rows are found by index, without a key. */
const TYPES: readonly ObservedType[] = ['string', 'number', 'boolean', 'null', 'array', 'object'];
const NUMBER = 1;
const OBJECT = 5;

/** A path of one kind in one group: its rows by type index, and the paths below it by key. */
interface PathNode {
  path: string;
  byType: Array<Making | undefined>;
  children: Map<string, PathNode> | undefined;
}

/** The rows of one (event, day, library): the event's own, by its type, and each kind's path tree. */
interface Group {
  event: string;
  day: string;
  library: string;
  own: Map<string, Making>;
  roots: Record<PropertyKind, PathNode>;
  /** The latest time of its events so far (engine text), at or after each of its rows' `lastSeen`. */
  latest: string;
}

const pathNode = (path: string): PathNode => ({ path, byType: [], children: undefined });

/** The index in TYPES of a parsed value's JSON type, as `observedType` names it. */
function typeIndex(value: unknown): number {
  switch (typeof value) {
    case 'string':
      return 0;
    case 'number':
    case 'bigint':
      return NUMBER;
    case 'boolean':
      return 2;
    default:
      if (value === null) return 3;
      if (Array.isArray(value)) return 4;
      return isObject(value) ? OBJECT : NUMBER;
  }
}

/**
 * The catalog rows of events, aggregated by (kind, event, path, type, day, library) as events
 * are added, one at a time. On the ingest path for every event: a path's rows are found through a tree of its
 * parts (no path text made per value, a type by index), and a value is written out as an example
 * only while its row wants more and only the first time it is seen.
 */
export class Observations {
  readonly rows: CatalogRow[] = [];
  private readonly groups = new Map<string, Group>();
  private time = '';
  /** Whether the event being added is at or after every event of its group so far. */
  private latest = false;

  /** Adds the observations of one event. */
  add(e: Event): void {
    const time = engineTime(e.timestamp);
    this.time = time;
    const group = this.groupOf(catalogEventName(e.type, e.event), time.slice(0, 10), libraryOf(e.context as Record<string, unknown> | undefined));
    // Events mostly come in time order: such an event is the last seen of each of its rows, without a comparison per row.
    this.latest = time >= group.latest;
    if (this.latest) group.latest = time;
    let own = group.own.get(e.type);
    if (!own) group.own.set(e.type, (own = this.making(group, 'event', '', e.type)));
    this.count(own.row);
    for (const kind of PROPERTY_KINDS) {
      const object = e[kind] as Record<string, unknown> | undefined;
      if (object) this.walk(group, kind, group.roots[kind], object, 1);
    }
  }

  private groupOf(event: string, day: string, library: string): Group {
    const key = `${event}\u0000${day}\u0000${library}`;
    let group = this.groups.get(key);
    if (!group) this.groups.set(key, (group = { event, day, library, own: new Map(), roots: { properties: pathNode(''), traits: pathNode(''), context: pathNode('') }, latest: '' }));
    return group;
  }

  /** Observes every path of `object` and its value, walked as the module's comment says. */
  private walk(group: Group, kind: PropertyKind, node: PathNode, object: Record<string, unknown>, depth: number): void {
    const children = (node.children ??= new Map());
    for (const key in object) {
      const value = object[key];
      let child = children.get(key);
      if (!child) children.set(key, (child = pathNode(depth === 1 ? key : `${node.path}.${key}`)));
      const type = typeIndex(value);
      if (type === OBJECT && depth < MAX_PATH_DEPTH && hasKeys(value as object)) this.walk(group, kind, child, value as Record<string, unknown>, depth + 1);
      else this.value(group, kind, child, type, value);
    }
  }

  private value(group: Group, kind: PropertyKind, node: PathNode, type: number, value: unknown): void {
    let making = node.byType[type];
    if (!making) node.byType[type] = making = this.making(group, kind, node.path, TYPES[type]!);
    const { row, tried } = making;
    this.count(row);
    if (row.examples.length >= MAX_EXAMPLES) return;
    // A scalar tried before gives the same text (or none) again; objects (a long number kept raw) are judged each time.
    const scalar = typeof value !== 'object' || value === null;
    if (scalar && tried.has(value)) return;
    if (scalar && tried.size < MAX_TRIED) tried.add(value);
    const example = exampleOf(value, TYPES[type]!);
    if (example !== undefined && !row.examples.includes(example)) row.examples.push(example);
  }

  private making(group: Group, kind: CatalogRow['kind'], path: string, type: string): Making {
    const { time } = this;
    const row: CatalogRow = { kind, event: group.event, path, type, day: group.day, library: group.library, events: 0, firstSeen: time, lastSeen: time, examples: [] };
    this.rows.push(row);
    return { row, tried: new Set() };
  }

  private count(row: CatalogRow): void {
    row.events++;
    const { time } = this;
    if (this.latest) row.lastSeen = time;
    else if (time < row.firstSeen) row.firstSeen = time;
    else if (time > row.lastSeen) row.lastSeen = time;
  }
}

/** The catalog rows of a batch of events (`Observations` over them alone). */
export function observationRows(events: readonly Event[]): CatalogRow[] {
  const observations = new Observations();
  for (const e of events) observations.add(e);
  return observations.rows;
}

/** SQL for a JSON column's `(path, raw value)` pairs, walked as `Observations` walks. */
function pathsSql(column: string): string {
  let pairs = `JSONExtractKeysAndValuesRaw(${column})`;
  for (let depth = 2; depth <= MAX_PATH_DEPTH; depth++) {
    const [p, q] = [`p${depth}`, `q${depth}`];
    pairs = `arrayFlatten(arrayMap(${p} -> if(JSONType(${p}.2) = 'Object' AND JSONLength(${p}.2) > 0, arrayMap(${q} -> (concat(${p}.1, '.', ${q}.1), ${q}.2), JSONExtractKeysAndValuesRaw(${p}.2)), [${p}]), ${pairs}))`;
  }
  return pairs;
}

/** SQL for the observed type of a raw JSON value, in `observedType`'s words. */
const TYPE_SQL = (raw: string) =>
  `multiIf(JSONType(${raw}) IN ('Int64', 'UInt64', 'Double'), 'number', JSONType(${raw}) = 'Bool', 'boolean', lower(toString(JSONType(${raw}))))`;

/**
 * SELECT of the catalog rows of the events of `db.events` that `where` picks (the caller's own
 * SQL with bound parameters), as `observationRows` makes them: the history of a workspace.
 */
export function observationsSql(db: string, where: string): string {
  const perKind = PROPERTY_KINDS.map((kind) => `arrayMap(x -> ('${kind}', x.1, ${TYPE_SQL('x.2')}, x.2), ${pathsSql(kind)})`).join(', ');
  // Named apart from the columns inside (an alias would take the place of the column it names), then renamed.
  return `SELECT c_kind AS kind, c_event AS event, c_path AS path, c_type AS type, c_day AS day, c_library AS library, events, firstSeen, lastSeen, examples FROM (
    SELECT o.1 AS c_kind, ${EVENT_NAME_SQL} AS c_event, o.2 AS c_path, if(o.1 = 'event', toString(type), o.3) AS c_type, toDate(timestamp) AS c_day,
      if(JSONType(context, 'library', 'name') = 'String', JSONExtractString(context, 'library', 'name'), '') AS c_library,
      count() AS events, min(timestamp) AS firstSeen, max(timestamp) AS lastSeen,
      groupUniqArrayIf(${MAX_EXAMPLES})(o.4, o.1 != 'event' AND o.3 NOT IN ('array', 'object') AND length(o.4) <= ${MAX_EXAMPLE_BYTES}) AS examples
    FROM ${db}.events
    ARRAY JOIN arrayConcat([('event', '', '', '')], ${perKind}) AS o
    WHERE ${where}
    GROUP BY c_kind, c_event, c_path, c_type, c_day, c_library)`;
}
