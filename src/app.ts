import { Elysia, type AnyElysia } from 'elysia';
import type { BackupRunner } from './backups/backup-runner';
import { backupRoutes } from './backups/routes';
import { eventExportRoutes } from './events/export-routes';
import { eventImportRoutes, IMPORT_PATH } from './events/import-routes';
import { EVENTS_PATH, eventRoutes, type EventRoutesDeps } from './events/routes';
import { queryExportRoutes } from './queries/export-routes';
import { ConsoleAssets } from './console/assets';
import { consoleRoutes } from './console/routes';
import type { EventStreams } from './events/stream';
import { eventStreamRoutes } from './events/stream-routes';
import { queryRoutes, type QueryRoutesDeps } from './queries/routes';
import type { RegulationRunner } from './regulations/regulation-runner';
import { regulationRoutes } from './regulations/routes';
import type { Logger } from './log';
import { SEGMENT_PATHS, segmentBatchRoute, segmentRoutes } from './segment/routes';
import { metricsRoutes } from './metrics/routes';
import type { ServiceMetrics } from './metrics/service-metrics';
import { statusRoutes } from './status/routes';
import { trackerRoutes } from './tracker/routes';
import { loadTrackerScript } from './tracker/tracker-script';
import { webhookRoutes } from './webhooks/routes';
import type { WebhookSupervisor } from './webhooks/supervisor';
import { workspaceRoutes } from './workspaces/routes';
import { whoamiRoutes } from './workspaces/whoami-routes';
import { cors } from './http/cors';
import { errorMapper } from './http/error-mapper';
import { idleTimeoutOutsideRequests, idleTimeoutSeconds } from './http/idle-timeout';
import { jsonBody } from './http/json-body';
import { openApi } from './http/openapi';
import { bodyBudget, type ByteBudget } from './http/body-budget';
import { rateLimit, RateLimiter } from './http/rate-limit';
import { requestLog } from './http/request-log';
import { securityHeaders } from './http/security-headers';
import type { Rate } from './http/token-buckets';
import type { CidrList } from './net/address-ranges';

export interface AppDeps extends EventRoutesDeps, QueryRoutesDeps {
  log: Logger;
  maxBodyBytes: number;
  requestBodyTimeoutMs: number;
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
  rateLimitCollectPerKey?: Rate;
  rateLimitCollectPerAddress?: Rate;
  rateLimitReadPerKey?: Rate;
  rateLimitReadPerAddress?: Rate;
  rateLimitAuthFailuresPerAddress?: Rate;
  regulations: RegulationRunner;
  backups: BackupRunner;
  streams: EventStreams;
}

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
  const collectionPaths = new Set([EVENTS_PATH, ...SEGMENT_PATHS, deps.trackerCollectPath]);
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
  // normalize: false: Elysia would otherwise coerce `[]` or `"x"` into objects instead of refusing them.
  const app = new Elysia({ normalize: false })
    .use(requestLog(deps.log, deps.metrics.requestAnswered))
    .use(idleTimeoutOutsideRequests(idleTimeoutSeconds(deps.httpIdleTimeoutMs)))
    .use(securityHeaders())
    .use(cors({ collectionPaths, consoleOrigins: new Set(deps.corsOrigins) }))
    .use(errorMapper(deps.log))
    .use(rateLimit(limiter))
    .use(bodyBudget(deps.bodies, { maxBodyBytes: deps.maxBodyBytes, maxWaitMs: deps.requestBodyTimeoutMs, onShed: deps.metrics.bodyShed }))
    .use(openApi(assets))
    // Before the JSON body reader: it streams its body itself.
    .use(eventImportRoutes(deps))
    .use(jsonBody({ maxBytes: deps.maxBodyBytes, timeoutMs: deps.requestBodyTimeoutMs, streamedPaths: new Set([IMPORT_PATH]) }))
    .use(statusRoutes(deps.storage.mode))
    .use(consoleRoutes(assets))
    .use(eventStreamRoutes(deps.store, deps.streams))
    .use(eventRoutes(deps))
    .use(eventExportRoutes(deps))
    .use(segmentRoutes(deps))
    .use(queryRoutes(deps))
    .use(queryExportRoutes(deps))
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
  return app.use(trackerRoutes(loadTrackerScript(deps.trackerCollectPath), deps.trackerScriptPath));
}
