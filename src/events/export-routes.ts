import { Elysia, t } from 'elysia';
import { auth } from '../http/auth';
import { problems } from '../http/problem';
import { releasing, streamedDownload, WorkspaceGate } from '../http/streamed-export';
import { ownStatements, type FastReads } from '../properties/fast-reads';
import type { Storage } from '../storage/storage';
import type { WorkspaceStore } from '../workspaces/workspace-store';
import { exportEvents, ExportEventsQuery } from './export';
import type { IngestBuffer } from './ingest-buffer';

/** Exports of one workspace streaming at once, at most: each holds an engine session. */
const EXPORTS_PER_WORKSPACE = 2;

/** `GET /events/export`: a workspace's events as one streamed file. */
export function eventExportRoutes(deps: { storage: Storage; store: WorkspaceStore; buffer: IngestBuffer; fastReads?: FastReads }) {
  const gate = new WorkspaceGate(EXPORTS_PER_WORKSPACE, 'exports');
  return new Elysia({ name: 'event-export', normalize: false }).use(auth(deps.store)).get(
    '/events/export',
    async ({ query, principal }) => {
      const database = principal.workspace.databaseName;
      await deps.buffer.loaded(database);
      const chunks = exportEvents(deps.storage, database, query, ownStatements(deps.fastReads, database));
      return streamedDownload(releasing(chunks, gate.enter(database)), query.format, `events-${database}`);
    },
    {
      scope: 'private',
      query: ExportEventsQuery,
      response: { 200: t.Any({ description: 'The events as NDJSON (the objects of GET /events), CSV with a header, or Parquet.' }), ...problems(400, 401, 403, 429, 503) },
      detail: {
        tags: ['Events'],
        summary: 'Export events',
        description:
          'Every matching event (filters as GET /events), oldest first, streamed as ndjson, csv or parquet with no row limit. A cut download is repeated; add endDate to make a repeat return the same events.',
      },
    },
  );
}
