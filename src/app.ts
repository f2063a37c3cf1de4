import { Elysia } from 'elysia';
import type { BackupRunner } from './backups/backup-runner';
import { backupRoutes } from './backups/routes';
import { eventExportRoutes } from './events/export-routes';
import { eventImportRoutes, IMPORT_PATH } from './events/import-routes';
import { eventRoutes, type EventRoutesDeps } from './events/routes';
import { queryExportRoutes } from './queries/export-routes';
import { queryRoutes, type QueryRoutesDeps } from './queries/routes';
import type { RegulationRunner } from './regulations/regulation-runner';
import { regulationRoutes } from './regulations/routes';
import type { Logger } from './log';
import { segmentRoutes } from './segment/routes';
import { metricsRoutes } from './metrics/routes';
import type { ServiceMetrics } from './metrics/service-metrics';
import { statusRoutes } from './status/routes';
import { webhookRoutes } from './webhooks/routes';
import type { WebhookSupervisor } from './webhooks/supervisor';
import { workspaceRoutes } from './workspaces/routes';
import { errorMapper } from './http/error-mapper';
import { idleTimeoutOutsideRequests, idleTimeoutSeconds } from './http/idle-timeout';
import { jsonBody } from './http/json-body';
import { openApi } from './http/openapi';
import { requestLog } from './http/request-log';

export interface AppDeps extends EventRoutesDeps, QueryRoutesDeps {
  log: Logger;
  maxBodyBytes: number;
  requestBodyTimeoutMs: number;
  httpIdleTimeoutMs: number;
  webhooks: WebhookSupervisor;
  metrics: ServiceMetrics;
  metricsToken: string;
  regulations: RegulationRunner;
  backups: BackupRunner;
}

/**
 * The HTTP application, composed above the features it serves: shared floors first (logging,
 * errors, body reading), then each feature's routes.
 */
export function createApp(deps: AppDeps) {
  // normalize: false: Elysia would otherwise coerce `[]` or `"x"` into objects instead of refusing them.
  return new Elysia({ normalize: false })
    .use(requestLog(deps.log, deps.metrics.requestAnswered))
    .use(idleTimeoutOutsideRequests(idleTimeoutSeconds(deps.httpIdleTimeoutMs)))
    .use(errorMapper(deps.log))
    .use(openApi())
    // Before the JSON body reader: it streams its body itself.
    .use(eventImportRoutes(deps))
    .use(jsonBody({ maxBytes: deps.maxBodyBytes, timeoutMs: deps.requestBodyTimeoutMs, streamedPaths: new Set([IMPORT_PATH]) }))
    .use(statusRoutes(deps.storage.mode))
    .use(eventRoutes(deps))
    .use(eventExportRoutes(deps))
    .use(segmentRoutes(deps))
    .use(queryRoutes(deps))
    .use(queryExportRoutes(deps))
    .use(workspaceRoutes(deps.store))
    .use(webhookRoutes(deps.store, deps.webhooks))
    .use(regulationRoutes(deps.store, deps.regulations))
    .use(backupRoutes(deps.store, deps.backups))
    .use(metricsRoutes(deps));
}
