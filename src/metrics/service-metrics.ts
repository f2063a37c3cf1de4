import type { IngestMetrics } from '../events/routes';
import type { LimitName } from '../http/rate-limit';
import type { AnsweredRequest } from '../http/request-log';
import type { StatementOutcome } from '../queries/query-runner';
import type { AttemptVerdict } from '../webhooks/delivery-actor';
import type { PlausibleDropReason } from '../web-analytics/routes';
import { MetricsRegistry } from './registry';

/** What the metrics read at scrape time. */
export interface MetricSources {
  /** Events acknowledged and not yet loaded into the engine (the ingest buffer's depth). */
  ingestQueueDepth(): number;
  /** Bytes in the ingest log's segment files. */
  ingestLogBytes(): number;
  /** Seconds the oldest event not yet loaded has waited. */
  ingestLagSeconds(): number;
  /** Webhook deliveries that failed and wait for a retry. */
  webhookRetriesPending(): number;
  /** Request body bytes reserved by requests being read, parsed or handled. */
  bodyBytesInFlight(): number;
  /** Workspaces whose stored events are not all built into visits yet (their history, at first). */
  visitBuildsPending(): number;
  /** Stored batches whose rows the event catalog could not add, since the start. */
  catalogBatchesMissed(): number;
}

/** Upper bounds in seconds for requests, inserts and statements: from a millisecond to a minute. */
const DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
/** Rows per insert: from a lone event to well past the default INGEST_FLUSH_ROWS. */
const FLUSH_ROWS_BUCKETS = [1, 10, 50, 100, 500, 1000, 5000, 10_000, 50_000, 100_000];
/** The label of requests that matched no route: raw paths would make a series per typo. */
const UNMATCHED_ROUTE = 'unmatched';
/** Methods kept as labels; any other token (clients may send one) is `OTHER`, for the same reason. */
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);
/** The workspace label of events refused before their key was read (the ingest queue was full). */
const UNKNOWN_WORKSPACE = 'unknown';

/**
 * Every metric the service exposes, named and described in one place (docs/api/metrics.md
 * lists the same). Workspaces are labelled by their database name: unique, readable and
 * never renamed.
 */
export function createServiceMetrics(sources: MetricSources) {
  const registry = new MetricsRegistry();
  const requests = registry.counter('analytics_http_requests_total', 'HTTP requests answered, by method, route pattern and status.', ['method', 'route', 'status']);
  const requestSeconds = registry.histogram(
    'analytics_http_request_duration_seconds',
    'Time from the arrival of an HTTP request to its answer, by method, route pattern and status.',
    DURATION_BUCKETS,
    ['method', 'route', 'status'],
  );
  const accepted = registry.counter('analytics_events_accepted_total', 'Events committed and answered (201 from POST /events, 200 from the Segment routes), repeats of a messageId included, by workspace (database name).', ['workspace']);
  const rejected = registry.counter(
    'analytics_events_rejected_total',
    'Events of POST /events and Segment /v1/* requests answered with an error other than 401, by workspace (database name) and status; a body that is not a readable batch counts as one.',
    ['workspace', 'status'],
  );
  const suppressed = registry.counter(
    'analytics_events_suppressed_total',
    'Events of suppressed subjects (a SUPPRESS regulation) acknowledged and not stored, by workspace (database name).',
    ['workspace'],
  );
  const screened = registry.counter(
    'analytics_tracking_plan_events_total',
    "Events that broke their workspace's tracking plan, by workspace (database name) and what became of them: recorded (stored), dropped or quarantined.",
    ['workspace', 'outcome'],
  );
  const violations = registry.counter('analytics_tracking_plan_violations_total', 'Violations of tracking plans (an event breaking several rules counts each), by workspace (database name) and rule kind.', ['workspace', 'kind']);
  registry.sampledGauge('analytics_ingest_queue_events', 'Events acknowledged (in the ingest log) and not yet loaded into the engine.', sources.ingestQueueDepth);
  registry.sampledGauge('analytics_ingest_log_bytes', 'Bytes in the ingest log (collection answers 503 past INGEST_LOG_MAX_BYTES).', sources.ingestLogBytes);
  registry.sampledGauge('analytics_ingest_load_lag_seconds', 'Age of the oldest event not yet loaded into the engine (collection answers 503 past INGEST_LOAD_MAX_LAG_MS).', sources.ingestLagSeconds);
  const flushRows = registry.histogram('analytics_ingest_flush_rows', 'Rows per insert of the loader into a workspace events table.', FLUSH_ROWS_BUCKETS);
  const flushSeconds = registry.histogram('analytics_ingest_flush_duration_seconds', 'Time of each insert of the loader.', DURATION_BUCKETS);
  const statementSeconds = registry.histogram(
    'analytics_query_duration_seconds',
    'Time of each POST /queries statement (checking and running it, not waiting for a session), by outcome: ok or error.',
    DURATION_BUCKETS,
    ['outcome'],
  );
  const attempts = registry.counter(
    'analytics_webhook_attempts_total',
    'Webhook delivery attempts by outcome: delivered, retry (failed, will be retried) or failed (failed for good).',
    ['outcome'],
  );
  registry.sampledGauge('analytics_webhook_retries_pending', 'Webhook deliveries that failed and wait for a retry.', sources.webhookRetriesPending);
  const limited = registry.counter('analytics_rate_limited_total', 'Requests refused with 429 by a rate limit, by limit.', ['limit']);
  registry.sampledGauge(
    'analytics_visit_builds_pending',
    "Workspaces whose stored events are not all built into visits yet (a workspace's history is built in the background after an upgrade; its Stats API reads events meanwhile).",
    sources.visitBuildsPending,
  );
  registry.sampledGauge(
    'analytics_catalog_batches_missed',
    "Stored batches of events whose rows the event catalog could not add since the start (storage away): their counts are missing from the catalog.",
    sources.catalogBatchesMissed,
  );
  registry.sampledGauge('analytics_request_body_bytes_in_flight', 'Request body bytes being read, parsed or handled (at most MAX_BODY_BYTES_IN_FLIGHT).', sources.bodyBytesInFlight);
  const bodiesShed = registry.counter('analytics_request_bodies_shed_total', 'Requests refused with 503 after waiting for room under MAX_BODY_BYTES_IN_FLIGHT.');
  // Their series exist from the start (at 0): most processes never collect.
  const heapCollections = registry.counter('analytics_heap_collections_total', 'Collections of the JavaScript heap made because resident memory was past MEMORY_SOFT_LIMIT_MB.').series({});
  const heapCollectionSeconds = registry.counter('analytics_heap_collection_seconds_total', 'Time the main thread spent in those collections.').series({});
  const plausibleDropped = registry.counter(
    'analytics_plausible_events_dropped_total',
    "Plausible events (POST /api/event) answered 202 and not stored, by reason: unknown_domain (no workspace's siteDomains), bot (a robot's user agent) or origin_not_allowed.",
    ['reason'],
  );

  // The series counted per request, found once each: a request would otherwise spend a good part
  // of its metrics' cost building label keys. Routes are patterns and workspaces are few.
  const acceptedIn = new Map<string, (events?: number) => void>();
  const answeredAs = new Map<string, { count: () => void; observe: (seconds: number) => void }>();
  const ingest: IngestMetrics = {
    eventsAccepted(workspace, events) {
      let series = acceptedIn.get(workspace);
      if (!series) acceptedIn.set(workspace, (series = accepted.series({ workspace })));
      series(events);
    },
    eventsRejected: (workspace, status, events) => rejected.inc({ workspace: workspace ?? UNKNOWN_WORKSPACE, status: String(status) }, events),
  };
  return {
    ...ingest,
    requestAnswered({ method, route, status, seconds }: AnsweredRequest): void {
      const methodLabel = METHODS.has(method) ? method : 'OTHER';
      const key = `${methodLabel} ${status} ${route ?? ''}`;
      let series = answeredAs.get(key);
      if (!series) {
        const labels = { method: methodLabel, route: route ?? UNMATCHED_ROUTE, status: String(status) };
        answeredAs.set(key, (series = { count: requests.series(labels), observe: requestSeconds.series(labels) }));
      }
      series.count();
      series.observe(seconds);
    },
    eventsSuppressed: (workspace: string, events: number) => suppressed.inc({ workspace }, events),
    trackingPlanBroken: (workspace: string, outcome: 'recorded' | 'dropped' | 'quarantined', events: number) => screened.inc({ workspace, outcome }, events),
    trackingPlanViolated: (workspace: string, kind: string, violationCount: number) => violations.inc({ workspace, kind }, violationCount),
    ingestFlushed(rows: number, seconds: number): void {
      flushRows.observe({}, rows);
      flushSeconds.observe({}, seconds);
    },
    statementRan: (outcome: StatementOutcome, seconds: number) => statementSeconds.observe({ outcome }, seconds),
    webhookAttempted: (outcome: AttemptVerdict) => attempts.inc({ outcome }),
    rateLimited: (limit: LimitName) => limited.inc({ limit }),
    bodyShed: () => bodiesShed.inc({}),
    heapCollected(seconds: number): void {
      heapCollections();
      heapCollectionSeconds(seconds);
    },
    plausibleDropped: (reason: PlausibleDropReason) => plausibleDropped.inc({ reason }),
    /** Every metric as Prometheus exposition text. */
    render: () => registry.render(),
  };
}

export type ServiceMetrics = ReturnType<typeof createServiceMetrics>;
