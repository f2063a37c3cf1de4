import { EVENT_JSON_SQL } from '../events/event-rows';
import type { SqlParams } from '../sql-params';
import { FIRST_TOUCH_VIEW } from './first-touch-names';

/** The statements of the persons routes, over the workspace's views (the current database). */

const PERSON_COLUMNS = 'personId, userId, userIds, anonymousIds, traits, firstSeen, lastSeen, eventCount';

/** One page of persons matching `where`, most recently seen first, each row with the total. */
export function personsPage(where: string, limit: number, offset: number, params: SqlParams): string {
  return `SELECT ${PERSON_COLUMNS}, count() OVER () AS total FROM persons WHERE ${where}
    ORDER BY lastSeen DESC, personId LIMIT ${params.bind(limit, 'UInt32')} OFFSET ${params.bind(offset, 'UInt64')}`;
}

/** A search for `text` in a person's ids and traits, any case. */
export function personSearch(text: string, params: SqlParams): string {
  const bound = params.bind(text, 'String');
  return `positionCaseInsensitiveUTF8(personId, ${bound}) > 0 OR arrayExists(id -> positionCaseInsensitiveUTF8(id, ${bound}) > 0, arrayConcat(userIds, anonymousIds)) OR positionCaseInsensitiveUTF8(traits, ${bound}) > 0`;
}

export function onePerson(personId: string, params: SqlParams): string {
  return `SELECT ${PERSON_COLUMNS} FROM persons WHERE personId = ${params.bind(personId, 'String')}`;
}

/**
 * A page of a person's events, newest first, as the API's JSON, each row with the total. The
 * person's ids (from person_lookup) narrow the read before each row's person is resolved.
 */
export function personEvents(personId: string, limit: number, offset: number, params: SqlParams): string {
  const person = params.bind(personId, 'String');
  const ids = `(SELECT id FROM person_lookup FINAL WHERE personId = ${person} UNION ALL SELECT ${person})`;
  return `SELECT ${EVENT_JSON_SQL} AS json, count() OVER () AS total FROM events_with_persons
    WHERE (userId IN ${ids} OR anonymousId IN ${ids}) AND personId = ${person}
    ORDER BY timestamp DESC, uuid DESC LIMIT ${params.bind(limit, 'UInt32')} OFFSET ${params.bind(offset, 'UInt64')}`;
}

/** The first touch of `personIds`, by person. */
export function firstTouchOf(personIds: readonly string[], params: SqlParams): string {
  return `SELECT * FROM ${FIRST_TOUCH_VIEW} WHERE personId IN ${params.bind(personIds, 'Array(String)')}`;
}

const GROUP_COLUMNS = 'groupId, traits, firstSeen, lastSeen, eventCount, personCount';

export function oneGroup(groupId: string, params: SqlParams): string {
  return `SELECT ${GROUP_COLUMNS} FROM groups WHERE groupId = ${params.bind(groupId, 'String')}`;
}

/** One page of groups matching `where`, most recently seen first, each row with the total. */
export function groupsPage(where: string, limit: number, offset: number, params: SqlParams): string {
  return `SELECT ${GROUP_COLUMNS}, count() OVER () AS total FROM groups WHERE ${where}
    ORDER BY lastSeen DESC, groupId LIMIT ${params.bind(limit, 'UInt32')} OFFSET ${params.bind(offset, 'UInt64')}`;
}

/** A search for `text` in a group's id and traits, any case. */
export function groupSearch(text: string, params: SqlParams): string {
  const bound = params.bind(text, 'String');
  return `positionCaseInsensitiveUTF8(groupId, ${bound}) > 0 OR positionCaseInsensitiveUTF8(traits, ${bound}) > 0`;
}

/** The groups the events of `personId` carry. */
export function groupsOfPerson(personId: string, params: SqlParams): string {
  return `groupId IN (SELECT groupId FROM events_with_persons WHERE personId = ${params.bind(personId, 'String')} AND groupId != '')`;
}
