import { botCondition, personBotCondition } from '../events/bots';
import { filterCondition, type FilterContext } from '../filters/compile';
import type { CohortFilter } from './model';

/**
 * The SELECT of a cohort's members (`personId`), computed when used: persons (the `persons` view)
 * for whom every filter holds. A behavioural filter holds for a person who did the event at least
 * `atLeast` times in the last `withinDays` days, counted back from the engine's now. Unless
 * `includeBots`, automated clients are no members and their events are not counted (src/events/bots.ts).
 */
export function cohortMembers(filters: readonly CohortFilter[], context: FilterContext, pointer: string, includeBots?: boolean): string {
  const conditions = filters.map((filter, i) => {
    if (!('performed' in filter)) return filterCondition(filter, 'persons', context, `${pointer}/${i}`);
    const { params } = context;
    return `personId IN (SELECT personId FROM events_with_persons
      WHERE event = ${params.bind(filter.performed, 'String')} AND ${botCondition(includeBots)} AND timestamp >= now64(6) - toIntervalDay(${params.bind(filter.withinDays, 'UInt32')})
      GROUP BY personId HAVING count() >= ${params.bind(filter.atLeast ?? 1, 'UInt32')})`;
  });
  return `SELECT personId FROM persons WHERE ${[...conditions, personBotCondition(includeBots)].map((c) => `(${c})`).join(' AND ')}`;
}
