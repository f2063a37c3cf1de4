import { Elysia } from 'elysia';
import { eventRoutes, type EventRoutesDeps } from '../events/routes';
import { queryRoutes, type QueryRoutesDeps } from '../queries/routes';
import type { Logger } from '../log';
import { segmentRoutes } from '../segment/routes';
import { metricsRoutes } from '../metrics/routes';
import type { ServiceMetrics } from '../metrics/service-metrics';
import { statusRoutes } from '../status/routes';
import { webhookRoutes } from '../webhooks/routes';
import type { WebhookSupervisor } from '../webhooks/supervisor';
import { workspaceRoutes } from '../workspaces/routes';
import { bodyBudget, type ByteBudget } from './body-budget';
import { errorMapper } from './error-mapper';
import { idleTimeoutOutsideRequests, idleTimeoutSeconds } from './idle-timeout';
import { jsonBody } from './json-body';
import { openApi } from './openapi';
import { rateLimit } from './rate-limit';
import { requestLog } from './request-log';
import { securityHeaders } from './security-headers';
import type { Rate } from './token-buckets';
import type { CidrList } from '../net/address-ranges';

export interface AppDeps extends EventRoutesDeps, QueryRoutesDeps {
  log: Logger;
  maxBodyBytes: number;
  requestBodyTimeoutMs: number;
  httpIdleTimeoutMs: number;
  webhooks: WebhookSupervisor;
  metrics: ServiceMetrics;
  metricsToken: string;
  /** Request body bytes in memory at once (MAX_BODY_BYTES_IN_FLIGHT). */
  bodies: ByteBudget;
  trustedProxies: CidrList;
  rateLimitCollectPerKey?: Rate;
  rateLimitCollectPerAddress?: Rate;
  rateLimitReadPerKey?: Rate;
  rateLimitReadPerAddress?: Rate;
  rateLimitAuthFailuresPerAddress?: Rate;
}

/**
 * The HTTP application: shared floors first (logging, security headers, errors, rate limits,
 * the bound on bodies in memory, body reading), then features.
 */
export function createApp(deps: AppDeps) {
  // normalize: false: Elysia would otherwise coerce `[]` or `"x"` into objects instead of refusing them.
  return new Elysia({ normalize: false })
    .use(requestLog(deps.log, deps.metrics.requestAnswered))
    .use(idleTimeoutOutsideRequests(idleTimeoutSeconds(deps.httpIdleTimeoutMs)))
    .use(securityHeaders())
    .use(errorMapper(deps.log))
    .use(
      rateLimit({
        limits: {
          collectPerKey: deps.rateLimitCollectPerKey,
          collectPerAddress: deps.rateLimitCollectPerAddress,
          readPerKey: deps.rateLimitReadPerKey,
          readPerAddress: deps.rateLimitReadPerAddress,
          authFailuresPerAddress: deps.rateLimitAuthFailuresPerAddress,
        },
        trustedProxies: deps.trustedProxies,
        onLimited: deps.metrics.rateLimited,
      }),
    )
    .use(bodyBudget(deps.bodies, { maxBodyBytes: deps.maxBodyBytes, maxWaitMs: deps.requestBodyTimeoutMs, onShed: deps.metrics.bodyShed }))
    .use(openApi())
    .use(jsonBody({ maxBytes: deps.maxBodyBytes, timeoutMs: deps.requestBodyTimeoutMs }))
    .use(statusRoutes(deps.storage.mode))
    .use(eventRoutes(deps))
    .use(segmentRoutes(deps))
    .use(queryRoutes(deps))
    .use(workspaceRoutes(deps.store))
    .use(webhookRoutes(deps.store, deps.webhooks))
    .use(metricsRoutes(deps));
}
