import { Elysia } from 'elysia';
import { EventsPage } from '../events/model';
import { auth } from '../http/auth';
import { problems } from '../http/problem';
import type { Principal, WorkspaceStore } from '../workspaces/workspace-store';
import { Group, GroupIdParams, ListPersonsQuery, Person, PersonEventsQuery, PersonIdParams, PersonsPage } from './model';
import type { Persons } from './persons';

const json = (text: string) => new Response(text, { headers: { 'content-type': 'application/json' } });

export interface PersonRoutesDeps {
  store: WorkspaceStore;
  persons: Persons;
  /** Resolves once the events acknowledged so far are loaded into `database` (reads see them). */
  ingested(database: string): Promise<void>;
}

/** `/persons` and `/groups`: profiles made from the workspace's events, for a private key. */
export function personRoutes({ store, persons, ingested }: PersonRoutesDeps) {
  const tags = ['Persons'];
  // A read sees every event acknowledged before it, as GET /events does.
  const loaded = async (principal: Principal) => {
    await ingested(principal.workspace.databaseName);
    return principal.workspace;
  };
  return new Elysia({ name: 'persons', normalize: false })
    .use(auth(store))
    .get('/persons', async ({ query, principal }) => persons.list(await loaded(principal), query), {
      scope: 'private',
      query: ListPersonsQuery,
      response: { 200: PersonsPage, ...problems(400, 401, 403, 429, 503) },
      detail: { tags, summary: 'List persons', description: 'Most recently seen first; `search` over ids and traits, `filters` (a JSON list), `cohort`.' },
    })
    .get('/persons/:personId', async ({ params, principal }) => persons.get(await loaded(principal), params.personId), {
      scope: 'private',
      params: PersonIdParams,
      response: { 200: Person, ...problems(401, 403, 404, 429, 503) },
      detail: { tags, summary: 'Get a person', description: 'Every id, the latest traits, first and last seen, and the count of events.' },
    })
    .get('/persons/:personId/events', async ({ params, query, principal }) => json(await persons.events(await loaded(principal), params.personId, query)), {
      scope: 'private',
      params: PersonIdParams,
      query: PersonEventsQuery,
      response: { 200: EventsPage, ...problems(400, 401, 403, 404, 429, 503) },
      detail: { tags, summary: "List a person's events", description: 'Newest first, whichever of its ids each carries.' },
    })
    .get('/groups/:groupId', async ({ params, principal }) => persons.group(await loaded(principal), params.groupId), {
      scope: 'private',
      params: GroupIdParams,
      response: { 200: Group, ...problems(401, 403, 404, 429, 503) },
      detail: { tags: ['Groups'], summary: 'Get a group', description: 'Its latest traits (from group calls), first and last seen, events and persons.' },
    });
}
