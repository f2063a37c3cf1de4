import { Elysia } from 'elysia';
import { auth } from '../http/auth';
import { BODY_PROBLEMS, problems } from '../http/problem';
import type { WorkspaceStore } from '../workspaces/workspace-store';
import { heldBody } from './held-answer';
import { createQueriesBody, QueriesResult } from './model';
import type { QueryRunner } from './query-runner';

export interface QueryRoutesDeps {
  store: WorkspaceStore;
  runner: QueryRunner;
  queryMaxStatements: number;
  /** Resolves once the events of `database` acknowledged before the call are in the engine (read-your-writes). */
  ingested(database: string): Promise<void>;
}

/**
 * The text of a QueriesResult, in parts, around each statement's rows as JSON text: written as
 * the client reads it, never made into one string.
 */
function queriesAnswer(rows: readonly string[]): string[] {
  const parts = ['{"results":['];
  for (const [index, text] of rows.entries()) parts.push(index === 0 ? '{"results":' : ',{"results":', text, '}');
  parts.push(`],"limit":null,"offset":null,"total":${rows.length}}`);
  return parts;
}

export function queryRoutes(deps: QueryRoutesDeps) {
  return new Elysia({ name: 'queries', normalize: false }).use(auth(deps.store)).post(
    '/queries',
    async ({ body, principal, request }) => {
      await deps.ingested(principal.workspace.databaseName);
      const hold = deps.runner.resultHold();
      const answers = await deps.runner.runAnswers(principal.workspace.databaseName, body.queries, hold);
      // Also when the client goes before its answer is begun.
      request.signal.addEventListener('abort', () => hold.release(), { once: true });
      return new Response(heldBody(queriesAnswer(answers), hold), { headers: { 'content-type': 'application/json' } });
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
