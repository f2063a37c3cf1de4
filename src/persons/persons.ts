import { personBotCondition } from '../events/bots';
import { Value } from '@sinclair/typebox/value';
import type { Cohorts } from '../cohorts/cohorts';
import { eventsPageJson } from '../events/list-events';
import { filterConditions } from '../filters/compile';
import { Filters, type Filter } from '../filters/model';
import { pageWindow } from '../http/pagination';
import { invalidInput, notFound } from '../http/problem';
import type { QueryRunner } from '../queries/query-runner';
import { SqlParams } from '../sql-params';
import type { Row } from '../storage/storage';
import { engineToIso } from '../timestamps';
import type { Workspace } from '../workspaces/model';
import type { Group, ListGroupsQuery, ListPersonsQuery, Person } from './model';
import { FIRST_TOUCH_NAMES } from './first-touch-names';
import { firstTouchOf, groupSearch, groupsOfPerson, groupsPage, oneGroup, onePerson, personEvents, personSearch, personsPage } from './person-sql';

/** A row of the `persons` view as the API's Person (the runner answers `traits` as an object already), with its first touch. */
function toPerson(row: Row, firstTouch: Record<string, string>): Person {
  const person: Person = {
    personId: String(row.personId),
    userIds: row.userIds as string[],
    anonymousIds: row.anonymousIds as string[],
    traits: row.traits as Record<string, unknown>,
    firstSeen: engineToIso(String(row.firstSeen)),
    lastSeen: engineToIso(String(row.lastSeen)),
    eventCount: Number(row.eventCount),
    firstTouch,
  };
  if (row.userId !== '') person.userId = String(row.userId);
  return person;
}

/** A row of the `groups` view as the API's Group. */
function toGroup(row: Row): Group {
  return {
    groupId: String(row.groupId),
    traits: row.traits as Record<string, unknown>,
    firstSeen: engineToIso(String(row.firstSeen)),
    lastSeen: engineToIso(String(row.lastSeen)),
    eventCount: Number(row.eventCount),
    personCount: Number(row.personCount),
  };
}

/** The `filters` query parameter: JSON text of a filter list, checked as a body would be. */
function parseFilters(text: string | undefined): Filter[] {
  if (text === undefined) return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw invalidInput('filters is not JSON', [{ parameter: 'filters', detail: 'must be a JSON list of filters' }]);
  }
  const errors = [...Value.Errors(Filters, parsed)].slice(0, 20);
  if (errors.length > 0) {
    throw invalidInput(`${errors.length} invalid field${errors.length > 1 ? 's' : ''} in filters`, errors.map((e) => ({ parameter: 'filters', pointer: e.path || '/', detail: e.message })));
  }
  return parsed as Filter[];
}

/**
 * Persons and groups: profiles computed by the engine from the workspace's events, when asked.
 * Each read first waits for the events acknowledged before it to be loaded, as GET /events does.
 */
export class Persons {
  constructor(
    private readonly runner: QueryRunner,
    private readonly cohorts: Cohorts,
    private readonly ingested: (database: string) => Promise<void>,
  ) {}

  private async run(workspace: Workspace, sql: string, params: SqlParams): Promise<Row[]> {
    await this.ingested(workspace.databaseName);
    return this.runner.runCompiled(workspace.databaseName, sql, params.values);
  }

  async list(workspace: Workspace, query: ListPersonsQuery) {
    const filters = parseFilters(query.filters);
    const all: Filter[] = query.cohort === undefined ? filters : [...filters, { cohort: query.cohort }];
    const context = await this.cohorts.context(workspace, all);
    const conditions = [filterConditions(all, 'persons', context, ''), personBotCondition(query.includeBots === 'true')];
    if (query.search !== undefined) conditions.push(personSearch(query.search, context.params));
    const where = conditions.map((c) => `(${c})`).join(' AND ');
    const { limit, offset } = pageWindow(query);
    const rows = await this.run(workspace, personsPage(where, limit, offset, context.params), context.params);
    const touches = await this.firstTouches(workspace, rows);
    return { results: rows.map((row) => toPerson(row, touches.get(String(row.personId))!)), limit, offset, total: Number(rows[0]?.total ?? (offset > 0 || limit === 0 ? await this.count(workspace, 'persons', where, context.params) : 0)) };
  }

  async get(workspace: Workspace, personId: string): Promise<Person> {
    const params = new SqlParams();
    const [row] = await this.run(workspace, onePerson(personId, params), params);
    if (!row) throw notFound(`no person ${personId}`);
    return toPerson(row, (await this.firstTouches(workspace, [row])).get(personId)!);
  }

  /** The first touch of the persons of `rows`, by personId (read for those persons alone). */
  private async firstTouches(workspace: Workspace, rows: readonly Row[]): Promise<Map<string, Record<string, string>>> {
    const touches = new Map<string, Record<string, string>>();
    if (rows.length === 0) return touches;
    const params = new SqlParams();
    for (const { personId, ...touch } of await this.run(workspace, firstTouchOf(rows.map((r) => String(r.personId)), params), params)) {
      touches.set(String(personId), Object.fromEntries(FIRST_TOUCH_NAMES.map((name) => [name, String(touch[name] ?? '')])));
    }
    return touches;
  }

  /** A page of the person's events as the JSON text of an EventsPage (each event's JSON made by the engine). */
  async events(workspace: Workspace, personId: string, query: { limit?: string; offset?: string }): Promise<string> {
    const { limit, offset } = pageWindow(query);
    const params = new SqlParams();
    const rows = await this.run(workspace, personEvents(personId, limit, offset, params), params);
    if (rows.length === 0 && offset === 0) throw notFound(`no person ${personId}`);
    const total = rows.length > 0 ? Number(rows[0]!.total) : (await this.get(workspace, personId)).eventCount;
    return eventsPageJson(rows.map((r) => r.json), limit, offset, total);
  }

  async group(workspace: Workspace, groupId: string): Promise<Group> {
    const params = new SqlParams();
    const [row] = await this.run(workspace, oneGroup(groupId, params), params);
    if (!row) throw notFound(`no group ${groupId}`);
    return toGroup(row);
  }

  /** `GET /groups`: most recently seen first, searched, or the groups of one person. */
  async groups(workspace: Workspace, query: ListGroupsQuery) {
    const params = new SqlParams();
    const conditions = ['1'];
    if (query.search !== undefined) conditions.push(groupSearch(query.search, params));
    if (query.personId !== undefined) conditions.push(groupsOfPerson(query.personId, params));
    const where = conditions.map((c) => `(${c})`).join(' AND ');
    const { limit, offset } = pageWindow(query);
    const rows = await this.run(workspace, groupsPage(where, limit, offset, params), params);
    return { results: rows.map(toGroup), limit, offset, total: Number(rows[0]?.total ?? (offset > 0 || limit === 0 ? await this.count(workspace, 'groups', where, params) : 0)) };
  }

  /** Rows of `view` matching, when the page asked for lies past the last or holds none (its rows carry no total). */
  private async count(workspace: Workspace, view: 'persons' | 'groups', where: string, params: SqlParams): Promise<number> {
    const [row] = await this.run(workspace, `SELECT count() AS n FROM ${view} WHERE ${where}`, params);
    return Number(row?.n ?? 0);
  }
}
