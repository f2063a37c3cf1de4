import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import type { Event } from '../events/model';
import { invalidInput, type ProblemError } from '../http/problem';
import type { JsonSchema, NativePlan } from './plan-formats';
import { safeRegExp } from './safe-pattern';

/**
 * One way an event breaks its plan: the property path (`properties.price`), the rule kind (the
 * JSON Schema keyword), what the plan expects and what came (a type, `absent`: never a value, so
 * that counts name no one), and for rules on values the value that came (its JSON, cut short).
 */
export interface Violation {
  event: string;
  path: string;
  kind: string;
  expected: string;
  actual: string;
  example?: string;
}

/** Values quoted in a violation are cut to this many characters: a violation names what came, it does not keep it. */
const MAX_ACTUAL = 100;

const jsonType = (value: unknown) => (value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value === 'number' && Number.isInteger(value) ? 'integer' : typeof value);
const quoted = (value: unknown) => {
  const text = JSON.stringify(value) ?? 'undefined';
  return text.length > MAX_ACTUAL ? `${text.slice(0, MAX_ACTUAL)}…` : text;
};
/** A JSON Pointer within the checked object as a dotted path under its name. */
const dotted = (section: string, pointer: string, key?: string) =>
  [section, ...pointer.split('/').slice(1).map((p) => p.replaceAll('~1', '/').replaceAll('~0', '~')), ...(key === undefined ? [] : [key])].join('.');

function valueAt(root: unknown, pointer: string): unknown {
  let value = root;
  for (const part of pointer.split('/').slice(1)) value = (value as Record<string, unknown> | undefined)?.[part.replaceAll('~1', '/').replaceAll('~0', '~')];
  return value;
}

/** What an error of Ajv says, in the terms of a violation. */
function violationOf(event: string, section: string, checked: unknown, error: ErrorObject): Violation {
  const at = valueAt(checked, error.instancePath);
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return { event, path: dotted(section, error.instancePath, String(params.missingProperty)), kind: 'required', expected: 'present', actual: 'absent' };
    case 'additionalProperties': {
      const key = String(params.additionalProperty);
      return { event, path: dotted(section, error.instancePath, key), kind: 'additionalProperties', expected: 'no such property', actual: jsonType((at as Record<string, unknown>)[key]) };
    }
    case 'type':
      return { event, path: dotted(section, error.instancePath), kind: 'type', expected: String(params.type), actual: jsonType(at) };
    case 'enum':
      return { event, path: dotted(section, error.instancePath), kind: 'enum', expected: `one of ${quoted(params.allowedValues)}`, actual: jsonType(at), example: quoted(at) };
    case 'pattern':
      return { event, path: dotted(section, error.instancePath), kind: 'pattern', expected: `matches ${String(params.pattern)}`, actual: jsonType(at), example: quoted(at) };
    default:
      return { event, path: dotted(section, error.instancePath), kind: error.keyword, expected: error.message ?? error.keyword, actual: jsonType(at), example: quoted(at) };
  }
}

/** A schema as Ajv takes it: `$schema` and `$id` are left out (plans name drafts and ids Ajv would fetch or refuse; every schema is read as draft-07). */
function compilable(schema: JsonSchema): JsonSchema {
  const { $schema: _schema, $id: _id, ...rest } = schema;
  return rest;
}

/**
 * A plan compiled once (per version): each schema a validating function of Ajv, which checks one
 * event's object in well under a microsecond per rule. 400 naming the schema Ajv refuses.
 */
export class PlanValidator {
  private readonly events = new Map<string, ValidateFunction>();
  private readonly identify?: ValidateFunction;
  private readonly group?: ValidateFunction;

  constructor(plan: NativePlan) {
    const ajv = new Ajv({ allErrors: true, strict: false, logger: false, validateSchema: true, code: { regExp: safeRegExp } });
    const errors: ProblemError[] = [];
    const compile = (schema: JsonSchema, pointer: string): ValidateFunction | undefined => {
      try {
        return ajv.compile(compilable(schema));
      } catch (err) {
        errors.push({ pointer, detail: `is not a JSON Schema Ajv compiles: ${(err as Error).message}` });
        return undefined;
      }
    };
    for (const [name, schema] of Object.entries(plan.events)) {
      const validate = compile(schema, `/plan/events/${name.replaceAll('~', '~0').replaceAll('/', '~1')}`);
      if (validate) this.events.set(name, validate);
    }
    if (plan.identify) this.identify = compile(plan.identify, '/plan/identify');
    if (plan.group) this.group = compile(plan.group, '/plan/group');
    if (errors.length > 0) throw invalidInput(`${errors.length} schema(s) of the plan do not compile; nothing was changed`, errors);
  }

  /** Whether the plan checks anything at all (an empty plan costs nothing). */
  get empty(): boolean {
    return this.events.size === 0 && !this.identify && !this.group;
  }

  /** How `event` breaks the plan; empty when it keeps it (or the plan does not name it). */
  check(event: Event): Violation[] {
    let validate: ValidateFunction | undefined;
    let name: string;
    let section: 'properties' | 'traits';
    if (event.type === 'track') {
      validate = this.events.get(event.event ?? '');
      name = event.event ?? '';
      section = 'properties';
    } else if (event.type === 'identify') {
      validate = this.identify;
      name = '$identify';
      section = 'traits';
    } else if (event.type === 'group') {
      validate = this.group;
      name = '$group';
      section = 'traits';
    } else return [];
    if (!validate) return [];
    const checked = event[section] ?? {};
    if (validate(checked)) return [];
    return (validate.errors ?? []).map((error) => violationOf(name, section, checked, error));
  }
}
