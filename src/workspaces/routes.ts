import { Elysia } from 'elysia';
import { auth } from '../http/auth';
import { pageOf } from '../http/pagination';
import { BODY_PROBLEMS, problems } from '../http/problem';
import { CreatedWorkspace, KeyRotationInput, ListWorkspacesQuery, RotatedKey, Workspace, WorkspaceIdParams, WorkspaceInput, WorkspacesPage } from './model';
import type { WorkspaceStore } from './workspace-store';

/** `/workspaces`: managed with an admin key only. */
export function workspaceRoutes(store: WorkspaceStore) {
  return new Elysia({ name: 'workspaces', normalize: false })
    .use(auth(store))
    .get('/workspaces', ({ query }) => pageOf(store.list(), query), {
      scope: 'admin',
      query: ListWorkspacesQuery,
      response: { 200: WorkspacesPage, ...problems(400, 401, 403, 503) },
      detail: { tags: ['Workspaces'], summary: 'List workspaces', description: 'Oldest first.' },
    })
    .post('/workspaces', ({ body }) => store.create(body), {
      scope: 'admin',
      body: WorkspaceInput,
      response: { 200: CreatedWorkspace, ...problems(...BODY_PROBLEMS, 401, 403, 409) },
      detail: {
        tags: ['Workspaces'],
        summary: 'Create a workspace',
        description: 'Creates its database and events table, and a public and a private key, returned this once.',
      },
    })
    .get('/workspaces/:workspaceId', ({ params }) => store.get(params.workspaceId), {
      scope: 'admin',
      params: WorkspaceIdParams,
      response: { 200: Workspace, ...problems(401, 403, 404, 503) },
      detail: { tags: ['Workspaces'], summary: 'Get a workspace' },
    })
    .put('/workspaces/:workspaceId', ({ params, body }) => store.update(params.workspaceId, body), {
      scope: 'admin',
      params: WorkspaceIdParams,
      body: WorkspaceInput,
      response: { 200: Workspace, ...problems(...BODY_PROBLEMS, 401, 403, 404, 409) },
      detail: { tags: ['Workspaces'], summary: 'Replace a workspace', description: 'Replaces name, isDefault and properties; databaseName cannot change.' },
    })
    .delete('/workspaces/:workspaceId', ({ params }) => store.remove(params.workspaceId), {
      scope: 'admin',
      params: WorkspaceIdParams,
      response: { 200: Workspace, ...problems(400, 401, 403, 404, 503) },
      detail: { tags: ['Workspaces'], summary: 'Delete a workspace', description: 'Revokes its keys at once and drops its database. Answers the deleted workspace.' },
    })
    .post(
      '/workspaces/:workspaceId/keys',
      async ({ params, body, set }) => {
        const rotated = await store.rotateKey(params.workspaceId, body.kind);
        set.status = 201;
        return rotated;
      },
      {
        scope: 'admin',
        params: WorkspaceIdParams,
        body: KeyRotationInput,
        response: { 201: RotatedKey, ...problems(...BODY_PROBLEMS, 401, 403, 404) },
        detail: {
          tags: ['Workspaces'],
          summary: 'Rotate a key',
          description:
            "Issues a new public or private key for the workspace, returned this once, and revokes the workspace's keys of that kind at once (401 from the next request; in other processes within WORKSPACE_CHANGE_POLL_MS). The environment's keys are not touched.",
        },
      },
    );
}
