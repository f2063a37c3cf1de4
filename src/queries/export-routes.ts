import { Elysia, t } from 'elysia';
import { auth } from '../http/auth';
import { BODY_PROBLEMS, problems } from '../http/problem';
import { EXPORT_ENCODINGS, ExportFormatSchema, releasing, streamedDownload, WorkspaceGate } from '../http/streamed-export';
import { Statement } from './model';
import type { QueryRoutesDeps } from './routes';

/** Statement exports of one workspace streaming at once, at most: each holds an engine session. */
const EXPORTS_PER_WORKSPACE = 2;

const QueryExportBody = t.Object(
  {
    query: Statement,
    format: ExportFormatSchema,
  },
  { additionalProperties: false, examples: [{ query: 'SELECT userId, count() AS events FROM events GROUP BY userId', format: 'csv' }] },
);

/** `POST /queries/export`: one statement's whole result as a streamed file, through the same sandbox as `POST /queries`. */
export function queryExportRoutes(deps: Pick<QueryRoutesDeps, 'store' | 'runner' | 'ingested'>) {
  const gate = new WorkspaceGate(EXPORTS_PER_WORKSPACE, 'query exports');
  return new Elysia({ name: 'query-export', normalize: false }).use(auth(deps.store)).post(
    '/queries/export',
    async ({ body, principal }) => {
      const database = principal.workspace.databaseName;
      await deps.ingested(database);
      const chunks = deps.runner.export(database, body.query, EXPORT_ENCODINGS[body.format].engine);
      return streamedDownload(releasing(chunks, gate.enter(database)), body.format, 'query');
    },
    {
      scope: 'private',
      body: QueryExportBody,
      response: { 200: t.Any({ description: 'The rows as NDJSON (one object per row), CSV with a header, or Parquet.' }), ...problems(...BODY_PROBLEMS, 401, 403, 429) },
      detail: {
        tags: ['Queries'],
        summary: 'Export the result of a SQL statement',
        description: 'One read-only statement, checked and limited as in POST /queries except for the result size, streamed as ndjson, csv or parquet.',
      },
    },
  );
}
