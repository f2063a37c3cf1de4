import { invalidInput } from '../http/problem';
import type { CompileContext, CompiledInsight } from './compile-context';
import type { Breakdown } from './model';
import type { Period } from './time-range';

/**
 * `POST /insights/<kind>/persons`: the actors behind one point of an insight. Each kind answers
 * a statement of those actors from the stages of its own compiled statement (so they are exactly
 * the ones its point counts); here, what the kinds share: a page of them, by id.
 */

/** Actors listed by default. */
export const DEFAULT_ACTORS_LIMIT = 100;

/** The actors behind a point: a statement with one row per actor, its column `actor` (and `eventCount`, with `eventCount`). */
export interface ActorsStatement {
  sql: string;
  key: 'personId' | 'groupId';
  eventCount: boolean;
  /** The point counts events (trends' `total` math): its `total` is the sum of the event counts. */
  countsEvents?: boolean;
}

export interface ActorsPage {
  limit?: number;
  offset?: number;
}

/**
 * One row: the point's count (its actors, or their events where it counts events), and a page of
 * its actors ordered by id (so pages never overlap or skip).
 */
export function pagedActors(actors: ActorsStatement, page: ActorsPage, context: CompileContext): CompiledInsight {
  const limit = page.limit ?? DEFAULT_ACTORS_LIMIT;
  const offset = page.offset ?? 0;
  const slice = (array: string) => `arraySlice(${array}, ${context.params.bind(offset + 1, 'UInt64')}, ${context.params.bind(limit, 'UInt64')})`;
  const counts = actors.eventCount ? `, ${slice('arraySort((c, a) -> a, groupArray(eventCount), groupArray(actor))')} AS eventCounts` : '';
  const sql = `SELECT ${actors.countsEvents ? 'sum(eventCount)' : 'count()'} AS total, count() AS actorCount, ${slice('arraySort(groupArray(actor))')} AS actors${counts}
FROM (
${actors.sql}
)`;
  return {
    sql,
    params: context.params.values,
    answer(rows) {
      const row = rows[0] ?? { total: 0, actorCount: 0, actors: [] };
      const total = Number(row.total);
      const counts = row.eventCounts as unknown[] | undefined;
      const results = (row.actors as unknown[]).map((actor, i) => ({ [actors.key]: String(actor), ...(counts ? { eventCount: Number(counts[i]) } : {}) }));
      const actorCount = Number(row.actorCount);
      return { results, total, ...(offset + limit < actorCount ? { next: offset + limit } : {}) };
    },
  };
}

/** The index of the period labelled `label`, or a 400 at `pointer`. */
export function periodIndexOf(periods: readonly Period[], label: string, pointer: string): number {
  const index = periods.findIndex((p) => p.label === label);
  if (index < 0) throw invalidInput('no period of the insight has this label', [{ pointer, detail: `must be one of the answer's labels: ${periods[0]?.label ?? ''} to ${periods.at(-1)?.label ?? ''}` }]);
  return index;
}

/** A 400 at `pointer` unless `index` is below `count` (`what`: the list it indexes). */
export function checkIndex(index: number, count: number, pointer: string, what: string): void {
  if (index >= count) throw invalidInput(`the query has ${count} ${what}`, [{ pointer, detail: `must be below ${count}` }]);
}

/** A 400 when the point's breakdown value is missing with a breakdown, or given without one. */
export function checkBreakdownValue(breakdown: Breakdown | undefined, value: string | undefined): void {
  if (breakdown && value === undefined) throw invalidInput('the query has a breakdown', [{ pointer: '/breakdownValue', detail: 'must name the breakdown value of the point' }]);
  if (!breakdown && value !== undefined) throw invalidInput('the query has no breakdown', [{ pointer: '/breakdownValue', detail: 'must be left out without a breakdown' }]);
}

/** The condition on the column `breakdownValue` that selects the point's ('1' without a breakdown). */
export function breakdownCondition(breakdown: Breakdown | undefined, value: string | undefined, context: CompileContext): string {
  checkBreakdownValue(breakdown, value);
  return breakdown ? `breakdownValue = ${context.params.bind(value!, 'String')}` : '1';
}
