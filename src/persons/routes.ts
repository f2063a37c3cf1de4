import { Elysia } from 'elysia';
import { EventsPage } from '../events/model';
import { auth } from '../http/auth';
import { jsonText } from '../http/json-text';
import { problems } from '../http/problem';
import type { WorkspaceStore } from '../workspaces/workspace-store';
import { Group, GroupIdParams, GroupsPage, ListGroupsQuery, ListPersonsQuery, Person, PersonEventsQuery, PersonIdParams, PersonsPage } from './model';
import type { Persons } from './persons';

/** `/persons` and `/groups`: profiles made from the workspace's events, for a private key. */
export function personRoutes(store: WorkspaceStore, persons: Persons) {
  const tags = ['Persons'];
  return new Elysia({ name: 'persons', normalize: false })
    .use(auth(store))
    .get('/persons', ({ query, principal }) => persons.list(principal.workspace, query), {
      scope: 'private',
      query: ListPersonsQuery,
      response: { 200: PersonsPage, ...problems(400, 401, 403, 429, 503) },
      detail: { tags, summary: 'List persons', description: 'Most recently seen first; `search` over ids and traits, `filters` (a JSON list), `cohort`; automated clients (`context.bot`) only with `includeBots=true`.' },
    })
    .get('/persons/:personId', ({ params, principal }) => persons.get(principal.workspace, params.personId), {
      scope: 'private',
      params: PersonIdParams,
      response: { 200: Person, ...problems(401, 403, 404, 429, 503) },
      detail: { tags, summary: 'Get a person', description: 'Every id, the latest traits, first and last seen, and the count of events.' },
    })
    .get('/persons/:personId/events', async ({ params, query, principal }) => jsonText(await persons.events(principal.workspace, params.personId, query)), {
      scope: 'private',
      params: PersonIdParams,
      query: PersonEventsQuery,
      response: { 200: EventsPage, ...problems(400, 401, 403, 404, 429, 503) },
      detail: { tags, summary: "List a person's events", description: 'Newest first, whichever of its ids each carries.' },
    })
    .get('/groups', ({ query, principal }) => persons.groups(principal.workspace, query), {
      scope: 'private',
      query: ListGroupsQuery,
      response: { 200: GroupsPage, ...problems(400, 401, 403, 429, 503) },
      detail: { tags: ['Groups'], summary: 'List groups', description: 'Most recently seen first, with their persons (`personCount`) and last seen; `search` over the groupId and traits, `personId` for the groups of one person.' },
    })
    .get('/groups/:groupId', ({ params, principal }) => persons.group(principal.workspace, params.groupId), {
      scope: 'private',
      params: GroupIdParams,
      response: { 200: Group, ...problems(401, 403, 404, 429, 503) },
      detail: { tags: ['Groups'], summary: 'Get a group', description: 'Its latest traits (from group calls), first and last seen, events and persons.' },
    });
}
