import { OPERATORS, type Operator } from './types';

const COMPARISONS: readonly Operator[] = ['gt', 'gte', 'lt', 'lte'];
const TEXT_ONLY: readonly Operator[] = ['contains', 'not_contains', 'regex'];

/**
 * The operators a filter offers for a property of these observed types (the catalog's): a number
 * is not searched as text, a text is not compared as a number, a boolean is equal or not. Unknown
 * or mixed types offer every operator; the one a filter already has is always kept.
 */
export function operatorsFor(types: readonly string[] | undefined, current: Operator): Operator[] {
  const sent = (types ?? []).filter((t) => t !== 'null');
  const only = (type: string) => sent.length > 0 && sent.every((t) => t === type);
  let offered: readonly Operator[] = OPERATORS;
  if (only('number')) offered = OPERATORS.filter((o) => !TEXT_ONLY.includes(o));
  else if (only('string')) offered = OPERATORS.filter((o) => !COMPARISONS.includes(o));
  else if (only('boolean')) offered = ['eq', 'neq', 'is_set', 'is_not_set'];
  return OPERATORS.filter((o) => offered.includes(o) || o === current);
}
