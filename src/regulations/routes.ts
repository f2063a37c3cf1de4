import { Elysia } from 'elysia';
import { auth, keyIdOf } from '../http/auth';
import { pageWindow } from '../http/pagination';
import { BODY_PROBLEMS, problems } from '../http/problem';
import type { WorkspaceStore } from '../workspaces/workspace-store';
import { ListRegulationsQuery, Regulation, RegulationAccepted, RegulationIdParams, RegulationInput, RegulationsPage } from './model';
import type { RegulationRunner } from './regulation-runner';

/** `/regulations`: erasure and suppression of people, for a private key on its own workspace. */
export function regulationRoutes(store: WorkspaceStore, runner: RegulationRunner) {
  return new Elysia({ name: 'regulations', normalize: false })
    .use(auth(store))
    .post(
      '/regulations',
      async ({ body, principal, request, set }) => {
        const accepted = await runner.submit(principal, keyIdOf(request), body);
        set.status = 202;
        return accepted;
      },
      {
        scope: 'private',
        body: RegulationInput,
        response: { 202: RegulationAccepted, ...problems(...BODY_PROBLEMS, 401, 403, 429) },
        detail: {
          tags: ['Regulations'],
          summary: 'Suppress or erase people',
          description:
            'SUPPRESS drops new events of the subjects at collection; DELETE erases their stored events; SUPPRESS_WITH_DELETE does both; UNSUPPRESS lifts a suppression. Runs in the background: 202 with the id to follow.',
        },
      },
    )
    .get(
      '/regulations',
      async ({ query, principal }) => {
        const { limit, offset } = pageWindow(query);
        const { records, total } = await runner.page(principal.workspace.workspaceId, limit, offset);
        return { results: records.map((r) => r.regulation), limit, offset, total };
      },
      {
        scope: 'private',
        query: ListRegulationsQuery,
        response: { 200: RegulationsPage, ...problems(400, 401, 403, 503) },
        detail: { tags: ['Regulations'], summary: 'List regulations', description: 'The audit list: who asked (key kind and key id), what and when; newest first.' },
      },
    )
    .get('/regulations/:id', ({ params, principal }) => runner.get(principal.workspace.workspaceId, params.id), {
      scope: 'private',
      params: RegulationIdParams,
      response: { 200: Regulation, ...problems(401, 403, 404, 503) },
      detail: { tags: ['Regulations'], summary: 'Get a regulation', description: 'Its status (pending, running, finished, failed) and counts.' },
    });
}
