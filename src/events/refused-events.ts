import type { StatusMap } from 'elysia';
import { principalOf } from '../http/auth';
import { answeredStatus } from '../http/request-log';
import type { IngestMetrics } from './routes';

interface Answered {
  request: Request;
  body: unknown;
  set: { status?: number | keyof StatusMap };
  responseValue: unknown;
}

/**
 * An `afterResponse` hook of an ingest route: counts the events of a refused request, by the
 * workspace of its key. The list under `field` gives their number when the body was read as a
 * batch, else it counts as one (how many were meant is unknown). A 401 names no workspace, and
 * is not counted.
 */
export function countRefusedEvents(metrics: IngestMetrics, acceptedStatus: number, field: string) {
  return ({ request, body, set, responseValue }: Answered) => {
    const status = answeredStatus(set, responseValue);
    if (status === acceptedStatus || status === 401) return;
    const items = (body as Record<string, unknown> | undefined)?.[field];
    metrics.eventsRejected(principalOf(request)?.workspace.databaseName, status, Array.isArray(items) ? items.length : 1);
  };
}
