import { invalidInput, type ProblemError } from '../http/problem';
import type { AggregateBy, TrendSeries } from './model';

/**
 * Stickiness and lifecycle count actors (persons or groups, by `aggregateBy`), so of a series'
 * `math` only the one naming that actor means anything, and `property` nothing: anything else is
 * refused rather than silently ignored. The series take trends' shape so that a saved trend's
 * series can be reused.
 */
export function checkActorSeries(series: readonly TrendSeries[], aggregateBy: AggregateBy | undefined, pointer: string): void {
  const actorMath = aggregateBy === 'group' ? 'groups' : 'persons';
  const errors: ProblemError[] = [];
  series.forEach((s, i) => {
    if (s.math !== undefined && s.math !== actorMath) {
      errors.push({ pointer: `${pointer}/series/${i}/math`, detail: `must be left out or be ${actorMath} (aggregateBy ${aggregateBy ?? 'person'} says who is counted)` });
    }
    if (s.property !== undefined) errors.push({ pointer: `${pointer}/series/${i}/property`, detail: 'does not apply: actors are counted, not a property' });
  });
  if (errors.length > 0) throw invalidInput(`${errors.length} field${errors.length > 1 ? 's' : ''} of the series do not apply`, errors);
}
