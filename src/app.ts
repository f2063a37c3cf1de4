import { Elysia, type AnyElysia, type ElysiaConfig } from 'elysia';
import type { Server } from 'elysia/universal';
import type { BackupRunner } from './backups/backup-runner';
import { backupRoutes } from './backups/routes';
import type { Cohorts } from './cohorts/cohorts';
import { cohortRoutes } from './cohorts/routes';
import { eventExportRoutes } from './events/export-routes';
import { eventImportRoutes, IMPORT_PATH } from './events/import-routes';
import { createEventsBody, type EventDTO } from './events/model';
import { EVENTS_PATH, eventRoutes, storeEvents, type EventRoutesDeps } from './events/routes';
import { queryExportRoutes } from './queries/export-routes';
import { clickhouseErrorAnswer } from './clickhouse-http/errors';
import { clickhouseRoutes } from './clickhouse-http/routes';
import { ConsoleAssets } from './console/assets';
import { consoleRoutes } from './console/routes';
import type { EventStreams } from './events/stream';
import { eventStreamRoutes } from './events/stream-routes';
import type { Persons } from './persons/persons';
import { personRoutes } from './persons/routes';
import type { Insights } from './insights/insights';
import { insightRoutes } from './insights/routes';
import type { Catalog } from './catalog/catalog';
import { catalogRoutes } from './catalog/routes';
import { trackingPlanRoutes, type TrackingPlanDeps } from './tracking-plans/routes';
import type { Dashboards } from './dashboards/dashboards';
import { dashboardRoutes } from './dashboards/routes';
import type { SavedInsights } from './dashboards/saved-insights';
import { queryRoutes, type QueryRoutesDeps } from './queries/routes';
import type { RegulationRunner } from './regulations/regulation-runner';
import { regulationRoutes } from './regulations/routes';
import type { Logger } from './log';
import { SEGMENT_MAX_CALL_BYTES, SegmentCall } from './segment/model';
import { SEGMENT_CALL_PATHS, SEGMENT_PATHS, segmentBatchRoute, segmentRoutes, storeCall } from './segment/routes';
import { metricsRoutes } from './metrics/routes';
import type { ServiceMetrics } from './metrics/service-metrics';
import { statusRoutes } from './status/routes';
import { trackerRoutes } from './tracker/routes';
import { loadTrackerScript } from './tracker/tracker-script';
import { PLAUSIBLE_EVENT_PATH, plausibleRoutes } from './web-analytics/routes';
import type { VisitorSalts } from './web-analytics/visitor-salts';
import { statsRoutes } from './web-analytics/stats/routes';
import { StatsApi } from './web-analytics/stats/stats-api';
import type { VisitBuilder } from './web-analytics/visits/visit-builder';
import { webhookRoutes } from './webhooks/routes';
import type { WebhookSupervisor } from './webhooks/supervisor';
import { workspaceRoutes } from './workspaces/routes';
import { whoamiRoutes } from './workspaces/whoami-routes';
import { authenticate, principalOf } from './http/auth';
import { headerPrincipal } from './http/collection-auth';
import { cors } from './http/cors';
import { errorMapper } from './http/error-mapper';
import { idleTimeoutOutsideRequests, idleTimeoutSeconds } from './http/idle-timeout';
import { jsonBody } from './http/json-body';
import { unroutedAnswers, type RouteLike } from './http/methods';
import { openApi } from './http/openapi';
import { bodyBudget, BodyReservations, type ByteBudget } from './http/body-budget';
import { bodyCaller } from './http/body-caller';
import { rateLimit, RateLimiter } from './http/rate-limit';
import { collectFastPath } from './collect-fast-path';
import { requestLog } from './http/request-log';
import { REQUEST_TARGET_CONFIG, requestTarget } from './http/request-target';
import { securityHeaders } from './http/security-headers';
import type { Rate } from './http/token-buckets';
import type { CidrList } from './net/address-ranges';

export interface AppDeps extends EventRoutesDeps, QueryRoutesDeps {
  log: Logger;
  maxBodyBytes: number;
  requestBodyTimeoutMs: number;
  /** The slowest a body may come, on average, after its first second (REQUEST_BODY_MIN_BYTES_PER_SECOND; 0: no minimum). */
  requestBodyMinBytesPerSecond: number;
  httpIdleTimeoutMs: number;
  webhooks: WebhookSupervisor;
  metrics: ServiceMetrics;
  metricsToken: string;
  /** Origins that may call the private routes from a browser (CORS_ORIGINS). */
  corsOrigins: string[];
  trackerScriptPath: string;
  trackerCollectPath: string;
  /** Request body bytes in memory at once (MAX_BODY_BYTES_IN_FLIGHT). */
  bodies: ByteBudget;
  trustedProxies: CidrList;
  /** Minutes without an event that end a visit (SESSION_TIMEOUT_MINUTES): the Stats API's sessions. */
  sessionTimeoutMinutes: number;
  /** The daily salts of Plausible's cookieless visitor ids. */
  visitorSalts: VisitorSalts;
  visits: VisitBuilder;
  rateLimitCollectPerKey?: Rate;
  rateLimitCollectPerAddress?: Rate;
  rateLimitReadPerKey?: Rate;
  rateLimitReadPerAddress?: Rate;
  rateLimitAuthFailuresPerAddress?: Rate;
  regulations: RegulationRunner;
  backups: BackupRunner;
  persons: Persons;
  cohorts: Cohorts;
  insights: Insights;
  savedInsights: SavedInsights;
  dashboards: Dashboards;
  catalog: Catalog;
  /** Tracking plans, their violations and quarantine. */
  governance: Omit<TrackingPlanDeps, 'store' | 'buffer' | 'clock'>;
  streams: EventStreams;
  /**
   * Whether a plain `POST /events` takes the fast path (src/collect-fast-path.ts): under Bun, when
   * requests are answered once their events are in the ingest log (they never wait long).
   */
  fastCollection: boolean;
}

/** Bodies up to this size take the collection fast path; larger batches gain little from it. */
const FAST_MAX_BODY_BYTES = 256 * 1024;

/** Stops the start when a renamed tracker path would take over one of the service's routes. */
function checkFree(app: AnyElysia, method: string, path: string, variable: string): void {
  if (app.routes.some((route) => route.method === method && route.path === path)) {
    throw new Error(`${variable}: ${method} ${path} is already a route of the service; choose another path`);
  }
}

/**
 * The HTTP application, composed above the features it serves: shared floors first (logging,
 * security headers, CORS, errors, rate limits, the bound on bodies in memory, body reading),
 * then each feature's routes.
 */
export function createApp(deps: AppDeps) {
  const collectionPaths = new Set([EVENTS_PATH, ...SEGMENT_PATHS, PLAUSIBLE_EVENT_PATH, deps.trackerCollectPath]);
  const assets = ConsoleAssets.load();
  const limiter = new RateLimiter({
    limits: {
      collectPerKey: deps.rateLimitCollectPerKey,
      collectPerAddress: deps.rateLimitCollectPerAddress,
      readPerKey: deps.rateLimitReadPerKey,
      readPerAddress: deps.rateLimitReadPerAddress,
      authFailuresPerAddress: deps.rateLimitAuthFailuresPerAddress,
    },
    collectionPaths,
    trustedProxies: deps.trustedProxies,
    onLimited: deps.metrics.rateLimited,
  });
  const pace = { timeoutMs: deps.requestBodyTimeoutMs, minBytesPerSecond: deps.requestBodyMinBytesPerSecond };
  const reservations = new BodyReservations(deps.bodies, {
    maxBodyBytes: deps.maxBodyBytes,
    maxWaitMs: deps.requestBodyTimeoutMs,
    trustedProxies: deps.trustedProxies,
    onShed: deps.metrics.bodyShed,
  });
  // Bun's own router takes these before Elysia sees them (filled in below, once the app exists).
  const fastRoutes: Record<string, Record<string, (request: Request, server: Server) => Promise<Response>>> = {};
  // normalize: false: Elysia would otherwise coerce `[]` or `"x"` into objects instead of refusing them.
  const app = new Elysia({ normalize: false, ...REQUEST_TARGET_CONFIG, serve: { routes: fastRoutes } as ElysiaConfig<''>['serve'] })
    .use(requestTarget((): { fetch(request: Request): Response | Promise<Response> } => app))
    .use(requestLog(deps.log, deps.metrics.requestAnswered, collectionPaths))
    .use(idleTimeoutOutsideRequests(idleTimeoutSeconds(deps.httpIdleTimeoutMs)))
    .use(securityHeaders())
    .use(cors({ collectionPaths, consoleOrigins: new Set(deps.corsOrigins) }))
    .use(errorMapper(deps.log, unroutedAnswers((): readonly RouteLike[] => app.routes), clickhouseErrorAnswer))
    .use(rateLimit(limiter))
    .use(openApi(assets))
    // Before the JSON body reader and the body budget's hooks: it streams its body itself, and
    // reserves it once its key is checked.
    .use(eventImportRoutes({ ...deps, reservations, loadedSince: (database, parsedAt) => deps.visits.loadedSince(database, parsedAt) }))
    .use(bodyBudget(reservations, bodyCaller(deps.store, { collectionPaths, keylessPaths: new Set([PLAUSIBLE_EVENT_PATH]) })))
    .use(jsonBody({ maxBytes: deps.maxBodyBytes, pace, streamedPaths: new Set([IMPORT_PATH]) }))
    .use(statusRoutes(deps.storage.mode))
    .use(consoleRoutes(assets))
    .use(eventStreamRoutes(deps.store, deps.streams))
    .use(eventRoutes(deps))
    .use(eventExportRoutes(deps))
    .use(segmentRoutes(deps))
    .use(plausibleRoutes({ ...deps, salts: deps.visitorSalts }))
    .use(queryRoutes(deps))
    .use(queryExportRoutes(deps))
    .use(personRoutes(deps.store, deps.persons))
    .use(cohortRoutes(deps.store, deps.cohorts))
    .use(insightRoutes(deps.store, deps.insights))
    .use(statsRoutes(deps.store, new StatsApi(deps.runner, deps.ingested, deps.visits, { sessionTimeoutMinutes: deps.sessionTimeoutMinutes })))
    .use(dashboardRoutes(deps.store, deps.savedInsights, deps.dashboards))
    .use(catalogRoutes(deps.store, deps.catalog))
    .use(trackingPlanRoutes({ ...deps.governance, store: deps.store, buffer: deps.buffer, clock: deps.clock }))
    .use(clickhouseRoutes(deps))
    .use(workspaceRoutes(deps.store))
    .use(whoamiRoutes(deps.store))
    .use(webhookRoutes(deps.store, deps.webhooks))
    .use(regulationRoutes(deps.store, deps.regulations))
    .use(backupRoutes(deps.store, deps.backups))
    .use(metricsRoutes(deps));
  // The tracker's paths last, once every other route is known: renamed, they must take none.
  checkFree(app, 'GET', deps.trackerScriptPath, 'TRACKER_SCRIPT_PATH');
  if (deps.trackerCollectPath !== '/v1/batch') {
    checkFree(app, 'POST', deps.trackerCollectPath, 'TRACKER_COLLECT_PATH');
    app.use(segmentBatchRoute(deps, deps.trackerCollectPath));
  }
  if (deps.fastCollection) {
    const fast = { ...deps, limiter, pace, onAnswered: deps.metrics.requestAnswered, onBodyRefused: (status: number) => deps.metrics.eventsRejected(undefined, status, 1) };
    fastRoutes[EVENTS_PATH] = {
      POST: collectFastPath(fast, app, {
        route: EVENTS_PATH,
        status: 201,
        maxBytes: Math.min(FAST_MAX_BODY_BYTES, deps.maxBodyBytes),
        schema: createEventsBody(deps.maxEventsPerRequest),
        principal: (authorization) => authenticate(deps.store, authorization, 'ingest'),
        store: (principal, bytes, body, request, server) => storeEvents(deps, principal, (body as { events: EventDTO[] }).events, bytes, deps.enrich?.(request, server)),
      }),
    };
    for (const [path, type] of SEGMENT_CALL_PATHS) {
      fastRoutes[path] = {
        POST: collectFastPath(fast, app, {
          route: path,
          status: 200,
          maxBytes: SEGMENT_MAX_CALL_BYTES,
          schema: SegmentCall,
          principal: (authorization) => headerPrincipal(deps.store, authorization),
          store: (principal, bytes, body, request, server) => storeCall(deps, principal, bytes, type, body as SegmentCall, deps.enrich?.(request, server)),
        }),
      };
    }
  }
  return app.use(trackerRoutes(loadTrackerScript(deps.trackerCollectPath), deps.trackerScriptPath));
}
