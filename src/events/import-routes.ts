import { Elysia } from 'elysia';
import { auth } from '../http/auth';
import type { BodyReservations } from '../http/body-budget';
import { HttpProblem, invalidInput, problems } from '../http/problem';
import { WorkspaceGate } from '../http/streamed-export';
import type { MonotonicClock } from '../monotonic-clock';
import type { WorkspaceStore } from '../workspaces/workspace-store';
import { importEvents, ImportSummary } from './import';
import type { IngestBuffer } from './ingest-buffer';

/** The route's path: the JSON body reader leaves its body alone. */
export const IMPORT_PATH = '/events/import';
/** Imports of one workspace at once, at most. */
const IMPORTS_PER_WORKSPACE = 1;
/** What an import body may be declared as: NDJSON under its usual names, or compressed. */
const NDJSON_TYPES = /^(?:application\/(?:x-ndjson|ndjson|jsonl|x-jsonlines|json|gzip|x-gzip)|text\/plain)\s*(?:;|$)/i;

export interface ImportRoutesDeps {
  store: WorkspaceStore;
  buffer: IngestBuffer;
  clock: MonotonicClock;
  maxEventBytes: number;
  loadedSince?: (database: string, parsedAt: bigint) => void;
  /** The body budget: an import reserves its body once its key is checked, as the JSON routes do. */
  reservations: BodyReservations;
}

/** The NDJSON of a request, inflated when it is gzip (by Content-Encoding or Content-Type). */
function ndjsonStream(request: Request): ReadableStream<Uint8Array> {
  const type = request.headers.get('content-type') ?? '';
  if (!NDJSON_TYPES.test(type)) {
    throw new HttpProblem(415, 'Unsupported Media Type', `the body must be NDJSON (application/x-ndjson), optionally gzip-compressed, not ${type || 'untyped'}`);
  }
  if (!request.body) throw invalidInput('the body is empty: send one event per line', [{ pointer: '', detail: 'no body' }]);
  const encoding = (request.headers.get('content-encoding') ?? '').toLowerCase();
  if (encoding !== '' && encoding !== 'identity' && encoding !== 'gzip') {
    throw new HttpProblem(415, 'Unsupported Media Type', `Content-Encoding ${encoding} is not supported here; send gzip or nothing`);
  }
  const gzip = encoding === 'gzip' || /gzip/i.test(type);
  return gzip ? request.body.pipeThrough(new DecompressionStream('gzip')) : request.body;
}

/**
 * `POST /events/import`: a backfill. Registered before the JSON body reader, which would read
 * the whole body first: this route reads it as a stream, line by line.
 */
export function eventImportRoutes(deps: ImportRoutesDeps) {
  const gate = new WorkspaceGate(IMPORTS_PER_WORKSPACE, 'imports');
  return new Elysia({ name: 'event-import', normalize: false }).use(auth(deps.store)).post(
    IMPORT_PATH,
    async ({ request, principal, server }) => {
      const database = principal.workspace.databaseName;
      const body = ndjsonStream(request);
      await deps.reservations.reserve(request, server);
      try {
        const release = gate.enter(database);
        try {
          return await importEvents(deps, database, body);
        } finally {
          release();
        }
      } finally {
        deps.reservations.release(request);
      }
    },
    {
      scope: 'private',
      parse: 'none',
      response: { 200: ImportSummary, ...problems(400, 401, 403, 413, 415, 429, 503) },
      detail: {
        tags: ['Events'],
        summary: 'Import events (backfill)',
        description:
          'NDJSON, one POST /events event per line, optionally gzip (Content-Encoding: gzip). Timestamps are kept; a messageId already stored is not stored again; bad lines are reported by number and the good ones stored.',
      },
    },
  );
}
