import { invalidInput, type ProblemError } from '../http/problem';

/** A JSON Schema, as a plan holds it (an object; checked by compiling it). */
export type JsonSchema = Record<string, unknown>;

/**
 * A tracking plan in this service's own format: a JSON Schema of `properties` per track event
 * name, and of `traits` for identify and group calls. Events the plan does not name pass.
 */
export interface NativePlan {
  events: Record<string, JsonSchema>;
  identify?: JsonSchema;
  group?: JsonSchema;
}

export type PlanFormat = 'native' | 'segment' | 'rudderstack';

/** A plan read from a format, and the rules of it this service does not enforce (page and screen calls, other sections). */
export interface ImportedPlan {
  plan: NativePlan;
  ignored: string[];
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const escape = (key: string) => key.replaceAll('~', '~0').replaceAll('/', '~1');

/** Collects the problems of one plan, each at its JSON Pointer under `/plan`. */
class Problems {
  readonly errors: ProblemError[] = [];
  add(pointer: string, detail: string): void {
    this.errors.push({ pointer: `/plan${pointer}`, detail });
  }
  throwIfAny(format: PlanFormat): void {
    if (this.errors.length > 0) throw invalidInput(`the ${format} tracking plan has ${this.errors.length} problem(s); nothing was changed`, this.errors);
  }
}

/** The schema of one object (`properties` or `traits`) inside a whole-event schema (Segment's and RudderStack's `rules`), or undefined when it sets none. */
function sectionOf(rules: unknown, section: 'properties' | 'traits', pointer: string, problems: Problems): JsonSchema | undefined {
  if (!isObject(rules)) {
    problems.add(pointer, 'must be a JSON Schema object of the whole event');
    return undefined;
  }
  const props = rules.properties;
  if (props === undefined) return undefined;
  if (!isObject(props)) {
    problems.add(`${pointer}/properties`, 'must be an object');
    return undefined;
  }
  const schema = props[section];
  if (schema === undefined) return undefined;
  if (!isObject(schema)) {
    problems.add(`${pointer}/properties/${section}`, 'must be a JSON Schema object');
    return undefined;
  }
  return schema;
}

function nativePlan(plan: unknown, problems: Problems): NativePlan {
  if (!isObject(plan)) {
    problems.add('', 'must be an object: { "events": { "<event>": <JSON Schema of properties> }, "identify"?: <JSON Schema of traits>, "group"?: ... }');
    return { events: {} };
  }
  for (const key of Object.keys(plan)) if (!['events', 'identify', 'group'].includes(key)) problems.add(`/${escape(key)}`, 'is not a field of a native plan (events, identify, group)');
  const events: Record<string, JsonSchema> = {};
  if (!isObject(plan.events)) problems.add('/events', 'must be an object of JSON Schemas by event name');
  else
    for (const [name, schema] of Object.entries(plan.events)) {
      if (!isObject(schema)) problems.add(`/events/${escape(name)}`, 'must be a JSON Schema object');
      else events[name] = schema;
    }
  const result: NativePlan = { events };
  for (const call of ['identify', 'group'] as const) {
    if (plan[call] === undefined) continue;
    if (!isObject(plan[call])) problems.add(`/${call}`, 'must be a JSON Schema object of the traits');
    else result[call] = plan[call];
  }
  return result;
}

/**
 * Segment's tracking plan: the Config API's (`rules.events[]` of `{ name, rules }`, `rules.identify`,
 * `rules.group`, each `rules` a JSON Schema of the whole event) or the Public API's list of rules
 * (`rules[]` of `{ type: TRACK | IDENTIFY | GROUP | ..., key, jsonSchema }`).
 */
function segmentPlan(plan: unknown, problems: Problems): ImportedPlan {
  const ignored: string[] = [];
  const result: NativePlan = { events: {} };
  if (!isObject(plan) || (!isObject(plan.rules) && !Array.isArray(plan.rules))) {
    problems.add('/rules', 'must be the Config API\'s object ({ "events": [...], "identify", "group" }) or the Public API\'s list of rules');
    return { plan: result, ignored };
  }
  if (Array.isArray(plan.rules)) {
    plan.rules.forEach((rule, i) => {
      const at = `/rules/${i}`;
      if (!isObject(rule) || typeof rule.type !== 'string') return problems.add(at, 'must be a rule with a type (TRACK, IDENTIFY, GROUP, ...) and a jsonSchema');
      const type = rule.type.toUpperCase();
      if (type === 'TRACK') {
        if (typeof rule.key !== 'string' || rule.key === '') return problems.add(`${at}/key`, "must be the track event's name");
        const schema = sectionOf(rule.jsonSchema, 'properties', `${at}/jsonSchema`, problems);
        result.events[rule.key] = schema ?? {};
      } else if (type === 'IDENTIFY' || type === 'GROUP') {
        const schema = sectionOf(rule.jsonSchema, 'traits', `${at}/jsonSchema`, problems);
        if (schema) result[type === 'IDENTIFY' ? 'identify' : 'group'] = schema;
      } else ignored.push(`${at} (${rule.type})`);
    });
    return { plan: result, ignored };
  }
  const rules = plan.rules;
  if (rules.events !== undefined && !Array.isArray(rules.events)) problems.add('/rules/events', 'must be a list of { name, rules }');
  (Array.isArray(rules.events) ? rules.events : []).forEach((event, i) => {
    const at = `/rules/events/${i}`;
    if (!isObject(event) || typeof event.name !== 'string' || event.name === '') return problems.add(at, 'must be an event rule with a name and rules');
    result.events[event.name] = sectionOf(event.rules, 'properties', `${at}/rules`, problems) ?? {};
  });
  for (const call of ['identify', 'group'] as const) {
    if (rules[call] === undefined) continue;
    const schema = sectionOf(rules[call], 'traits', `/rules/${call}`, problems);
    if (schema) result[call] = schema;
  }
  for (const key of Object.keys(rules)) if (!['events', 'identify', 'group'].includes(key)) ignored.push(`/rules/${escape(key)}`);
  return { plan: result, ignored };
}

/**
 * RudderStack's tracking plan: its events (`rules.events[]` of the Tracking Plan API, or `events[]`
 * of the Data Catalog API), each `{ name, eventType?, identitySection?, rules }` with `rules` a JSON
 * Schema of the whole event; `track` events by name, `identify` and `group` ones for their traits.
 */
function rudderstackPlan(plan: unknown, problems: Problems): ImportedPlan {
  const ignored: string[] = [];
  const result: NativePlan = { events: {} };
  const list = isObject(plan) ? (isObject(plan.rules) ? plan.rules.events : plan.events) : undefined;
  const base = isObject(plan) && isObject(plan.rules) ? '/rules/events' : '/events';
  if (!Array.isArray(list)) {
    problems.add(base, 'must be a list of event rules ({ "name", "eventType"?, "rules" })');
    return { plan: result, ignored };
  }
  list.forEach((event, i) => {
    const at = `${base}/${i}`;
    if (!isObject(event)) return problems.add(at, 'must be an event rule');
    const type = event.eventType === undefined ? 'track' : event.eventType;
    if (type === 'track') {
      if (typeof event.name !== 'string' || event.name === '') return problems.add(`${at}/name`, "must be the track event's name");
      result.events[event.name] = sectionOf(event.rules, 'properties', `${at}/rules`, problems) ?? {};
    } else if (type === 'identify' || type === 'group') {
      const section = event.identitySection ?? 'traits';
      if (section !== 'traits') return void ignored.push(`${at} (${type} rules of ${String(section)})`);
      const schema = sectionOf(event.rules, 'traits', `${at}/rules`, problems);
      if (schema) result[type] = schema;
    } else if (typeof type === 'string') ignored.push(`${at} (${type})`);
    else problems.add(`${at}/eventType`, 'must be track, identify, group, page or screen');
  });
  return { plan: result, ignored };
}

/** The native plan of `plan` in `format`: 400 naming each problem (by JSON Pointer) of a plan that is not one. */
export function importPlan(format: PlanFormat, plan: unknown): ImportedPlan {
  const problems = new Problems();
  const imported = format === 'native' ? { plan: nativePlan(plan, problems), ignored: [] } : format === 'segment' ? segmentPlan(plan, problems) : rudderstackPlan(plan, problems);
  problems.throwIfAny(format);
  return imported;
}
