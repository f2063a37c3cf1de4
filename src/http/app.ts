import { Elysia } from 'elysia';
import { ConsoleAssets } from '../console/assets';
import { consoleRoutes } from '../console/routes';
import { eventRoutes, type EventRoutesDeps } from '../events/routes';
import { eventStreamRoutes } from '../events/stream-routes';
import type { EventStreams } from '../events/stream';
import { queryRoutes, type QueryRoutesDeps } from '../queries/routes';
import type { Logger } from '../log';
import { segmentRoutes } from '../segment/routes';
import { metricsRoutes } from '../metrics/routes';
import type { ServiceMetrics } from '../metrics/service-metrics';
import { statusRoutes } from '../status/routes';
import { webhookRoutes } from '../webhooks/routes';
import type { WebhookSupervisor } from '../webhooks/supervisor';
import { workspaceRoutes } from '../workspaces/routes';
import { whoamiRoutes } from '../workspaces/whoami-routes';
import { errorMapper } from './error-mapper';
import { idleTimeoutOutsideRequests, idleTimeoutSeconds } from './idle-timeout';
import { jsonBody } from './json-body';
import { openApi } from './openapi';
import { requestLog } from './request-log';

export interface AppDeps extends EventRoutesDeps, QueryRoutesDeps {
  log: Logger;
  maxBodyBytes: number;
  requestBodyTimeoutMs: number;
  httpIdleTimeoutMs: number;
  webhooks: WebhookSupervisor;
  metrics: ServiceMetrics;
  metricsToken: string;
  streams: EventStreams;
}

/** The HTTP application: shared floors first (logging, errors, body reading), then features. */
export function createApp(deps: AppDeps) {
  const assets = new ConsoleAssets();
  // normalize: false: Elysia would otherwise coerce `[]` or `"x"` into objects instead of refusing them.
  return new Elysia({ normalize: false })
    .use(requestLog(deps.log, deps.metrics.requestAnswered))
    .use(idleTimeoutOutsideRequests(idleTimeoutSeconds(deps.httpIdleTimeoutMs)))
    .use(errorMapper(deps.log))
    .use(openApi(assets))
    .use(jsonBody({ maxBytes: deps.maxBodyBytes, timeoutMs: deps.requestBodyTimeoutMs }))
    .use(statusRoutes(deps.storage.mode))
    .use(consoleRoutes(assets))
    .use(eventStreamRoutes(deps.store, deps.streams))
    .use(eventRoutes(deps))
    .use(segmentRoutes(deps))
    .use(queryRoutes(deps))
    .use(workspaceRoutes(deps.store))
    .use(whoamiRoutes(deps.store))
    .use(webhookRoutes(deps.store, deps.webhooks))
    .use(metricsRoutes(deps));
}
