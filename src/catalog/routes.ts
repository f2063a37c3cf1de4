import { Elysia } from 'elysia';
import { auth } from '../http/auth';
import { BODY_PROBLEMS, problems } from '../http/problem';
import type { WorkspaceStore } from '../workspaces/workspace-store';
import type { Catalog } from './catalog';
import { CatalogEvent, CatalogEventsPage, CatalogPropertiesPage, CatalogProperty, EventListQuery, EventPatch, NameParams, PropertyListQuery, PropertyPatch, PropertyPatchQuery } from './model';

const tags = ['Catalog'];

/** `/catalog`: a private key's event catalog of its own workspace (docs/api/catalog.md). */
export function catalogRoutes(store: WorkspaceStore, catalog: Catalog) {
  return new Elysia({ name: 'catalog', normalize: false })
    .use(auth(store))
    .get('/catalog/events', ({ query, principal }) => catalog.events(principal.workspace, query), {
      scope: 'private',
      query: EventListQuery,
      response: { 200: CatalogEventsPage, ...problems(400, 401, 403, 429, 503) },
      detail: { tags, summary: 'List the events received', description: 'Every event name the workspace has received, with its types, volume, first and last seen and SDKs, and its curated fields; most received first.' },
    })
    .get('/catalog/properties', ({ query, principal }) => catalog.properties(principal.workspace, query), {
      scope: 'private',
      query: PropertyListQuery,
      response: { 200: CatalogPropertiesPage, ...problems(400, 401, 403, 429, 503) },
      detail: { tags, summary: 'List the properties received', description: 'Every key (nested keys joined with dots) of `properties`, `traits` and `context` the workspace has received, with its observed types and counts, examples and curated fields.' },
    })
    .patch('/catalog/events/:name', ({ params, body, principal }) => catalog.patchEvent(principal.workspace, params.name, body), {
      scope: 'private',
      params: NameParams,
      body: EventPatch,
      response: { 200: CatalogEvent, ...problems(...BODY_PROBLEMS, 401, 403, 404, 429) },
      detail: { tags, summary: "Curate an event", description: 'Sets the fields given (display name, description, tags, owner, verified, hidden); the others stay.' },
    })
    .patch('/catalog/properties/:name', ({ params, query, body, principal }) => catalog.patchProperty(principal.workspace, query.source ?? 'properties', params.name, body), {
      scope: 'private',
      params: NameParams,
      query: PropertyPatchQuery,
      body: PropertyPatch,
      response: { 200: CatalogProperty, ...problems(...BODY_PROBLEMS, 401, 403, 404, 429) },
      detail: { tags, summary: 'Curate a property', description: 'Sets the fields given (description, tags, owner, verified, hidden) of the property of `source` (`properties` unless told); the others stay.' },
    });
}
