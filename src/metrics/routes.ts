import { Elysia, t } from 'elysia';
import { adminOrToken } from '../http/auth';
import { problems } from '../http/problem';
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
    {
      response: { 200: t.String({ description: 'Prometheus text format 0.0.4', examples: ['# HELP analytics_events_accepted_total …\n# TYPE analytics_events_accepted_total counter\nanalytics_events_accepted_total{workspace="default"} 3\n'] }), ...problems(401, 403) },
      detail: { tags: ['Operations'], summary: 'Metrics', description: 'Prometheus text format (0.0.4); the admin key or `METRICS_TOKEN` as a Bearer key.' },
    },
  );
}
