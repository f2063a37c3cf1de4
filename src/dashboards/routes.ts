import { Elysia } from 'elysia';
import { auth } from '../http/auth';
import { pageOf } from '../http/pagination';
import { BODY_PROBLEMS, problems } from '../http/problem';
import type { WorkspaceStore } from '../workspaces/workspace-store';
import type { Dashboards } from './dashboards';
import { Dashboard, DashboardInput, DashboardResults, DashboardsPage, IdParams, ListQuery, ResultsQuery, SavedInsight, SavedInsightInput, SavedInsightsPage } from './model';
import type { SavedInsights } from './saved-insights';

const insightTags = ['Saved insights'];
const dashboardTags = ['Dashboards'];

/** `/insights/saved` and `/dashboards`: a private key's saved insights and dashboards of its own workspace. */
export function dashboardRoutes(store: WorkspaceStore, insights: SavedInsights, dashboards: Dashboards) {
  return new Elysia({ name: 'dashboards', normalize: false })
    .use(auth(store))
    .post(
      '/insights/saved',
      async ({ body, principal, set }) => {
        set.status = 201;
        return insights.create(principal.workspace, body);
      },
      {
        scope: 'private',
        body: SavedInsightInput,
        response: { 201: SavedInsight, ...problems(...BODY_PROBLEMS, 401, 403, 429) },
        detail: { tags: insightTags, summary: 'Save an insight', description: "A named query of an insight kind (checked against that kind's request) or SQL, with free-form display settings." },
      },
    )
    .get('/insights/saved', async ({ query, principal }) => pageOf(await insights.list(principal.workspace), query), {
      scope: 'private',
      query: ListQuery,
      response: { 200: SavedInsightsPage, ...problems(400, 401, 403, 429, 503) },
      detail: { tags: insightTags, summary: 'List saved insights', description: 'Oldest first.' },
    })
    .get('/insights/saved/:id', ({ params, principal }) => insights.get(principal.workspace, params.id), {
      scope: 'private',
      params: IdParams,
      response: { 200: SavedInsight, ...problems(401, 403, 404, 429, 503) },
      detail: { tags: insightTags, summary: 'Get a saved insight' },
    })
    .put('/insights/saved/:id', ({ params, body, principal }) => insights.update(principal.workspace, params.id, body), {
      scope: 'private',
      params: IdParams,
      body: SavedInsightInput,
      response: { 200: SavedInsight, ...problems(...BODY_PROBLEMS, 401, 403, 404, 429) },
      detail: { tags: insightTags, summary: 'Replace a saved insight', description: 'Its name, kind, query and display; dashboards showing it answer the new query.' },
    })
    .delete('/insights/saved/:id', ({ params, principal }) => insights.remove(principal.workspace, params.id), {
      scope: 'private',
      params: IdParams,
      response: { 200: SavedInsight, ...problems(401, 403, 404, 429, 503) },
      detail: { tags: insightTags, summary: 'Delete a saved insight', description: 'Dashboard tiles showing it answer a 404 problem until they are removed.' },
    })
    .post(
      '/dashboards',
      async ({ body, principal, set }) => {
        set.status = 201;
        return dashboards.create(principal.workspace, body);
      },
      {
        scope: 'private',
        body: DashboardInput,
        response: { 201: Dashboard, ...problems(...BODY_PROBLEMS, 401, 403, 429) },
        detail: { tags: dashboardTags, summary: 'Create a dashboard', description: 'Saved insights of the workspace on a 12-column grid, with an optional date range for all of them.' },
      },
    )
    .get('/dashboards', async ({ query, principal }) => pageOf(await dashboards.list(principal.workspace), query), {
      scope: 'private',
      query: ListQuery,
      response: { 200: DashboardsPage, ...problems(400, 401, 403, 429, 503) },
      detail: { tags: dashboardTags, summary: 'List dashboards', description: 'Oldest first.' },
    })
    .get('/dashboards/:id', ({ params, principal }) => dashboards.get(principal.workspace, params.id), {
      scope: 'private',
      params: IdParams,
      response: { 200: Dashboard, ...problems(401, 403, 404, 429, 503) },
      detail: { tags: dashboardTags, summary: 'Get a dashboard' },
    })
    .put('/dashboards/:id', ({ params, body, principal }) => dashboards.update(principal.workspace, params.id, body), {
      scope: 'private',
      params: IdParams,
      body: DashboardInput,
      response: { 200: Dashboard, ...problems(...BODY_PROBLEMS, 401, 403, 404, 429) },
      detail: { tags: dashboardTags, summary: 'Replace a dashboard', description: 'Its name, tiles, refresh and date range.' },
    })
    .delete('/dashboards/:id', ({ params, principal }) => dashboards.remove(principal.workspace, params.id), {
      scope: 'private',
      params: IdParams,
      response: { 200: Dashboard, ...problems(401, 403, 404, 429, 503) },
      detail: { tags: dashboardTags, summary: 'Delete a dashboard', description: 'Its saved insights stay.' },
    })
    .get('/dashboards/:id/results', ({ params, query, principal }) => dashboards.results(principal.workspace, params.id, query.stale === 'true'), {
      scope: 'private',
      params: IdParams,
      query: ResultsQuery,
      response: { 200: DashboardResults, ...problems(400, 401, 403, 404, 429, 503) },
      detail: {
        tags: dashboardTags,
        summary: "Answer every tile of a dashboard",
        description: "Each tile's answer as `POST /insights/<kind>` or `POST /queries` gives it, in the order of the tiles, with the dashboard's date range in place of the tiles' own; a tile that fails answers its problem and the others are not affected. `?stale=true` answers kept answers at once, even if events arrived since.",
      },
    });
}
