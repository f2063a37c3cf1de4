import type { SqlParams } from '../sql-params';

/**
 * Names beside the ids of a page of actors (`POST /insights/<kind>/persons`), so that a list of
 * persons reads as people without a request per person: each person's latest `name` and `email`
 * traits, each group's latest `name`, read for that page's ids alone.
 */

export interface ActorNames {
  name?: string;
  email?: string;
}

/** The statement of the names of `ids` (persons or groups, by `key`): a row per actor with names. */
export function actorNamesOf(key: 'personId' | 'groupId', ids: readonly string[], params: SqlParams): string {
  const [view, email] = key === 'personId' ? ['persons', "JSONExtractString(traits, 'email')"] : ['groups', "''"];
  return `SELECT ${key} AS actor, JSONExtractString(traits, 'name') AS name, ${email} AS email FROM ${view}
    WHERE ${key} IN ${params.bind(ids, 'Array(String)')} AND (name != '' OR email != '')`;
}

/** The names of a row of `actorNamesOf`, the empty ones left out. */
export function namesOfRow(row: Record<string, unknown>): ActorNames {
  const names: ActorNames = {};
  if (row.name) names.name = String(row.name);
  if (row.email) names.email = String(row.email);
  return names;
}
