import { invalidInput } from '../http/problem';
import { FIRST_TOUCH_VIEW, isFirstTouch } from '../persons/first-touch-names';
import type { SqlParams } from '../sql-params';
import { MAX_PROPERTY_DEPTH, type Filter, type Operator, type PropertyFilter } from './model';

/**
 * Filters compiled to SQL conditions (docs/api/filters.md has the rules). A property is a column
 * where the rows have one by that name, else a key of their JSON object (`properties` of events,
 * `traits` of persons and groups), dotted for nested keys; its text is the JSON string's value or
 * the JSON text of other values (`42`, `true`). Missing keys read as '' (and as no number).
 * Names and values are bound parameters; column names come from the lists below.
 */

/** The columns of `events_with_persons` a filter may name. */
const EVENT_COLUMNS = new Set(['uuid', 'type', 'messageId', 'event', 'userId', 'anonymousId', 'groupId', 'instanceId', 'personId', 'timestamp', 'parsedAt']);
const EVENT_OBJECTS = new Set(['properties', 'traits', 'context']);
/** The columns of the `persons` and `groups` views a filter may name. */
const PERSON_COLUMNS = new Set(['personId', 'userId', 'firstSeen', 'lastSeen', 'eventCount']);
const GROUP_COLUMNS = new Set(['groupId', 'firstSeen', 'lastSeen', 'eventCount', 'personCount']);
const TIME_COLUMNS = new Set(['timestamp', 'parsedAt', 'firstSeen', 'lastSeen']);

export interface FilterContext {
  params: SqlParams;
  /** The SELECT of a cohort's members (`personId`), or a 400 naming `pointer` when there is none. */
  cohort(cohortId: string, pointer: string): string;
}

/** What the rows being filtered are: events (`events_with_persons`) or persons (`persons`). */
export type Rows = 'events' | 'persons';

/** The conditions of `filters` on `rows`, joined by AND ('1' for none). `pointer` locates the list in the request. */
export function filterConditions(filters: readonly Filter[], rows: Rows, context: FilterContext, pointer: string): string {
  const conditions = filters.map((filter, i) => filterCondition(filter, rows, context, `${pointer}/${i}`));
  return conditions.length === 0 ? '1' : conditions.map((c) => `(${c})`).join(' AND ');
}

/** The condition of one filter on `rows`; `pointer` locates it in the request. */
export function filterCondition(filter: Filter, rows: Rows, context: FilterContext, pointer: string): string {
  if ('cohort' in filter) return `personId IN (${context.cohort(filter.cohort, `${pointer}/cohort`)})`;
  return propertyFilter(filter, rows, context.params, pointer);
}

function propertyFilter(filter: PropertyFilter, rows: Rows, params: SqlParams, pointer: string): string {
  const source = filter.source ?? (rows === 'persons' ? 'person' : 'event');
  if (source === 'event') {
    const condition = valueCondition(filter, eventValue(filter.property, params), params, pointer);
    return rows === 'events' ? condition : `personId IN (SELECT personId FROM events_with_persons WHERE ${condition})`;
  }
  if (source === 'person' && isFirstTouch(filter.property)) {
    return `personId IN (SELECT personId FROM ${FIRST_TOUCH_VIEW} WHERE ${valueCondition(filter, column(filter.property), params, pointer)})`;
  }
  if (source === 'person') {
    const condition = valueCondition(filter, viewValue(filter.property, PERSON_COLUMNS, params), params, pointer);
    return rows === 'persons' ? condition : `personId IN (SELECT personId FROM persons WHERE ${condition})`;
  }
  const groups = `SELECT groupId FROM groups WHERE ${valueCondition(filter, viewValue(filter.property, GROUP_COLUMNS, params), params, pointer)}`;
  return rows === 'events' ? `groupId IN (${groups})` : `personId IN (SELECT personId FROM events_with_persons WHERE groupId IN (${groups}))`;
}

/** A value as SQL: its text, its number (NULL when not one), whether it is set, and its time when a time column. */
interface Value {
  text: string;
  number: string;
  isSet: string;
  time?: string;
}

/** A column's value; `name` is one of the lists' (a first-touch name quoted, for its `$`). */
function column(name: string): Value {
  const quoted = isFirstTouch(name) ? `\`${name}\`` : name;
  return {
    text: `toString(${quoted})`,
    number: `toFloat64OrNull(toString(${quoted}))`,
    isSet: TIME_COLUMNS.has(name) ? '1' : `toString(${quoted}) != ''`,
    time: TIME_COLUMNS.has(name) ? name : undefined,
  };
}

function jsonValue(object: string, keys: readonly string[], params: SqlParams): Value {
  const path = keys.map((k) => params.bind(k, 'String')).join(', ');
  // JSONExtract's String is a string's value and any other value's JSON (`42`, `[1]`), but '' for
  // a JSON null, whose text is 'null'. Three reads of the path, each of which a column can store
  // (src/properties/fast-reads.ts), where JSONExtractString and JSONExtractRaw stored strings twice.
  const isSet = `JSONHas(${object}, ${path})`;
  const text = `if(JSONType(${object}, ${path}) = 'Null', if(${isSet}, 'null', ''), JSONExtract(${object}, ${path}, 'String'))`;
  return { text, number: `toFloat64OrNull(${text})`, isSet };
}

function keysOf(property: string): string[] {
  return property.split('.');
}

function eventValue(property: string, params: SqlParams): Value {
  if (EVENT_COLUMNS.has(property)) return column(property);
  const keys = keysOf(property);
  if (EVENT_OBJECTS.has(keys[0]!) && keys.length > 1) return jsonValue(keys[0]!, keys.slice(1, MAX_PROPERTY_DEPTH + 1), params);
  return jsonValue('properties', keys.slice(0, MAX_PROPERTY_DEPTH), params);
}

function viewValue(property: string, columns: ReadonlySet<string>, params: SqlParams): Value {
  return columns.has(property) ? column(property) : jsonValue('traits', keysOf(property).slice(0, MAX_PROPERTY_DEPTH), params);
}

/**
 * The text of a property (as filters compare it): of the event rows for `event`, else of the
 * `persons` or `groups` view's rows (their traits and columns), or of `person_first_touch`'s for
 * a first-touch property (personViewOf).
 */
export function propertyText(property: string, source: 'event' | 'person' | 'group', params: SqlParams): string {
  if (source === 'event') return eventValue(property, params).text;
  if (source === 'person' && isFirstTouch(property)) return column(property).text;
  return viewValue(property, source === 'person' ? PERSON_COLUMNS : GROUP_COLUMNS, params).text;
}

/** The view that holds a person property: `person_first_touch` for a first-touch one, else `persons`. */
export const personViewOf = (property: string): string => (isFirstTouch(property) ? FIRST_TOUCH_VIEW : 'persons');

/** The number of an event property (NULL where it is not one), as filters compare it. */
export function eventPropertyNumber(property: string, params: SqlParams): string {
  return eventValue(property, params).number;
}

const scalarText = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v));

function valueCondition(filter: PropertyFilter, value: Value, params: SqlParams, pointer: string): string {
  const { operator } = filter;
  if (operator === 'is_set') return value.isSet;
  if (operator === 'is_not_set') return `NOT (${value.isSet})`;
  const given = filter.value;
  const list = operator === 'in' || operator === 'not_in';
  if (given === undefined || Array.isArray(given) !== list) {
    throw invalidInput(`the ${operator} filter on ${filter.property} needs ${list ? 'a list of values' : 'one value'}`, [
      { pointer: `${pointer}/value`, detail: list ? 'must be a list of values' : 'must be a string, number or boolean' },
    ]);
  }
  if (list) {
    const bound = params.bind((given as unknown[]).map(scalarText), 'Array(String)');
    return `${operator === 'not_in' ? 'NOT ' : ''}has(${bound}, ${value.text})`;
  }
  return scalarCondition(operator, value, given, params, pointer);
}

function scalarCondition(operator: Operator, value: Value, given: unknown, params: SqlParams, pointer: string): string {
  switch (operator) {
    case 'eq':
      return `${value.text} = ${params.bind(scalarText(given), 'String')}`;
    case 'neq':
      return `${value.text} != ${params.bind(scalarText(given), 'String')}`;
    case 'contains':
      return `positionCaseInsensitiveUTF8(${value.text}, ${params.bind(scalarText(given), 'String')}) > 0`;
    case 'not_contains':
      return `positionCaseInsensitiveUTF8(${value.text}, ${params.bind(scalarText(given), 'String')}) = 0`;
    case 'regex':
      return `match(${value.text}, ${params.bind(scalarText(given), 'String')})`;
    default:
      return comparison(operator, value, given, params, pointer);
  }
}

const COMPARISONS: Partial<Record<Operator, string>> = { gt: '>', gte: '>=', lt: '<', lte: '<=' };

function comparison(operator: Operator, value: Value, given: unknown, params: SqlParams, pointer: string): string {
  const sign = COMPARISONS[operator]!;
  if (value.time !== undefined) {
    if (typeof given !== 'string' || Number.isNaN(Date.parse(given))) {
      throw invalidInput(`the ${operator} filter on a time needs an ISO 8601 time`, [{ pointer: `${pointer}/value`, detail: 'must be an ISO 8601 time' }]);
    }
    return `${value.time} ${sign} parseDateTime64BestEffort(${params.bind(given, 'String')}, 6, 'UTC')`;
  }
  const n = typeof given === 'number' ? given : Number(given);
  if (typeof given === 'boolean' || !Number.isFinite(n)) {
    throw invalidInput(`the ${operator} filter needs a number`, [{ pointer: `${pointer}/value`, detail: 'must be a number' }]);
  }
  return `${value.number} ${sign} ${params.bind(n, 'Float64')}`;
}
