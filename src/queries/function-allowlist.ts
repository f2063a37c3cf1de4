import review from './function-review.json' with { type: 'json' };

/**
 * The functions a sandboxed statement may call: every function of the engine was sorted once into
 * a family of src/queries/function-review.json, allowed or refused, with the reason for each family
 * (docs/security.md#functions). A name the review does not hold (a function that a later engine
 * adds) is refused until someone reviews it; tests/queries/function-review.test.ts lists them.
 */

export type FunctionVerdict = { allowed: true; name: string } | { allowed: false; name: string; reason: string };

const familyOf = new Map<string, (typeof review.families)[number]>();
for (const family of review.families) for (const name of family.functions) familyOf.set(name, family);

// Maps, not objects: a name such as `toString` must not find Object.prototype's.
const aliases = new Map<string, string>(Object.entries(review.aliases));
/** Case-insensitive names (functions and aliases), by their lower-case spelling. */
const byLowerCase = new Map(review.caseInsensitive.map((name) => [name.toLowerCase(), name]));

/**
 * Aggregate function combinators (system.aggregate_function_combinators): `sumIf`, `uniqArrayIf`,
 * `countMergeState`. A name made of an aggregate function and combinators is that function's.
 */
const COMBINATORS = ['SimpleState', 'OrDefault', 'Distinct', 'Resample', 'ForEach', 'ArgMax', 'ArgMin', 'OrNull', 'Tuple', 'Merge', 'State', 'Array', 'Null', 'Map', 'If'];
const AGGREGATES = new Set(review.families.find((family) => family.family === 'Aggregate and window functions')!.functions);

/**
 * The function a name written in a statement calls: aliases and case-insensitive spellings resolved,
 * also in turn (the engine's `connection_id` is an alias of `connectionID`, which is
 * `connectionId` spelt otherwise).
 */
function canonical(written: string): string | undefined {
  let name = written;
  for (let step = 0; step < 4 && !familyOf.has(name); step++) {
    const next = aliases.get(name) ?? byLowerCase.get(name.toLowerCase());
    if (next === undefined || next === name) return step === 0 ? undefined : name;
    name = next;
  }
  return name;
}

/** The aggregate function that `written` applies combinators to, if it is one. */
function combinedAggregate(written: string, depth = 0): string | undefined {
  if (depth > 4) return undefined;
  for (const combinator of COMBINATORS) {
    if (!written.endsWith(combinator) || written.length === combinator.length) continue;
    const base = written.slice(0, -combinator.length);
    const name = canonical(base);
    if (name !== undefined && AGGREGATES.has(name)) return name;
    const deeper = combinedAggregate(base, depth + 1);
    if (deeper !== undefined) return deeper;
  }
  return undefined;
}

/** The reviewed function `written` calls, directly or as an aggregate with combinators. */
function reviewedName(written: string): string | undefined {
  const resolved = canonical(written);
  // An alias may name a combined aggregate (`array_concat_agg` is `groupArrayArray`).
  return resolved !== undefined && familyOf.has(resolved) ? resolved : combinedAggregate(resolved ?? written);
}

/** Whether a statement may call the function written as `written`, and why not. */
export function functionVerdict(written: string): FunctionVerdict {
  const name = reviewedName(written);
  const family = name === undefined ? undefined : familyOf.get(name);
  if (name === undefined || family === undefined) {
    return { allowed: false, name: written, reason: 'it is not on the reviewed list of functions the sandbox allows' };
  }
  if (family.verdict !== 'allowed') return { allowed: false, name, reason: `${family.family.toLowerCase()}: ${family.reason}` };
  return { allowed: true, name };
}

/** Whether `written` names an aggregate function the sandbox allows (for arrayReduce's first argument). */
export function isAllowedAggregate(written: string): boolean {
  const name = reviewedName(written);
  return name !== undefined && AGGREGATES.has(name);
}

/** The engine release the review was made against. */
export const REVIEWED_ENGINE = review.engine;
