import { Elysia } from 'elysia';
import { auth } from '../http/auth';
import { pageOf } from '../http/pagination';
import { BODY_PROBLEMS, problems } from '../http/problem';
import type { WorkspaceStore } from '../workspaces/workspace-store';
import type { Cohorts } from './cohorts';
import { Cohort, CohortIdParams, CohortInput, CohortsPage, ListCohortsQuery } from './model';

const tags = ['Cohorts'];

/** `/cohorts`: saved sets of persons, for a private key on its own workspace. */
export function cohortRoutes(store: WorkspaceStore, cohorts: Cohorts) {
  return new Elysia({ name: 'cohorts', normalize: false })
    .use(auth(store))
    .post(
      '/cohorts',
      async ({ body, principal, set }) => {
        set.status = 201;
        return cohorts.create(principal.workspace, body);
      },
      {
        scope: 'private',
        body: CohortInput,
        response: { 201: Cohort, ...problems(...BODY_PROBLEMS, 401, 403, 429) },
        detail: { tags, summary: 'Create a cohort', description: 'Persons for whom every filter holds: person properties and behaviour ("did purchase at least 2 times in the last 30 days").' },
      },
    )
    .get('/cohorts', async ({ query, principal }) => pageOf(await cohorts.list(principal.workspace), query), {
      scope: 'private',
      query: ListCohortsQuery,
      response: { 200: CohortsPage, ...problems(400, 401, 403, 429, 503) },
      detail: { tags, summary: 'List cohorts', description: 'Each with its current size, computed now.' },
    })
    .get('/cohorts/:cohortId', ({ params, principal }) => cohorts.get(principal.workspace, params.cohortId), {
      scope: 'private',
      params: CohortIdParams,
      response: { 200: Cohort, ...problems(401, 403, 404, 429, 503) },
      detail: { tags, summary: 'Get a cohort', description: 'Its definition and current size.' },
    })
    .put('/cohorts/:cohortId', ({ params, body, principal }) => cohorts.update(principal.workspace, params.cohortId, body), {
      scope: 'private',
      params: CohortIdParams,
      body: CohortInput,
      response: { 200: Cohort, ...problems(...BODY_PROBLEMS, 401, 403, 404, 429) },
      detail: { tags, summary: 'Replace a cohort', description: 'Its name and filters.' },
    })
    .delete('/cohorts/:cohortId', ({ params, principal }) => cohorts.remove(principal.workspace, params.cohortId), {
      scope: 'private',
      params: CohortIdParams,
      response: { 200: Cohort, ...problems(401, 403, 404, 429, 503) },
      detail: { tags, summary: 'Delete a cohort', description: 'Answers the deleted cohort, with its size just before.' },
    });
}
