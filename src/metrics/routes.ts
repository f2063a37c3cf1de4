import { Elysia } from 'elysia';
import { adminOrToken } from '../http/auth';
import type { WorkspaceStore } from '../workspaces/workspace-store';
import { EXPOSITION_CONTENT_TYPE } from './exposition';

export interface MetricsRoutesDeps {
  store: WorkspaceStore;
  /** Admitted besides the admin keys; empty: admin keys only. */
  metricsToken: string;
  metrics: { render(): string };
}

/** `GET /metrics`: every metric in the Prometheus text format, for the admin key or the metrics token. */
export function metricsRoutes(deps: MetricsRoutesDeps) {
  const authorize = adminOrToken(deps.store, deps.metricsToken);
  return new Elysia({ name: 'metrics' }).get(
    '/metrics',
    ({ headers }) => {
      authorize(headers.authorization);
      return new Response(deps.metrics.render(), { headers: { 'content-type': EXPOSITION_CONTENT_TYPE } });
    },
    { detail: { summary: 'Metrics', description: 'Prometheus text format (0.0.4); the admin key or `METRICS_TOKEN`.' } },
  );
}
