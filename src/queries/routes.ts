import { Elysia } from 'elysia';
import { auth } from '../http/auth';
import { BODY_PROBLEMS, problems } from '../http/problem';
import type { WorkspaceStore } from '../workspaces/workspace-store';
import { createQueriesBody, QueriesResult } from './model';
import type { QueryRunner } from './query-runner';

export interface QueryRoutesDeps {
  store: WorkspaceStore;
  runner: QueryRunner;
  queryMaxStatements: number;
  /** Resolves once the events of `database` acknowledged before the call are in the engine (read-your-writes). */
  ingested(database: string): Promise<void>;
}

export function queryRoutes(deps: QueryRoutesDeps) {
  return new Elysia({ name: 'queries', normalize: false }).use(auth(deps.store)).post(
    '/queries',
    async ({ body, principal }): Promise<QueriesResult> => {
      await deps.ingested(principal.workspace.databaseName);
      const rows = await deps.runner.run(principal.workspace.databaseName, body.queries);
      return { results: rows.map((results) => ({ results })), limit: null, offset: null, total: rows.length };
    },
    {
      scope: 'private',
      body: createQueriesBody(deps.queryMaxStatements),
      response: { 200: QueriesResult, ...problems(...BODY_PROBLEMS, 401, 403) },
      detail: {
        tags: ['Queries'],
        summary: 'Run SQL',
        description:
          "Runs each read-only statement against the workspace's database (`FROM events`); one result entry per statement, in order.",
      },
    },
  );
}
