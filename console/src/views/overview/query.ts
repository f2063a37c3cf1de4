import { ApiError, requestWith } from '../../api';
import { session } from '../../session';

/**
 * The overview asks one endpoint only: Plausible's Stats API v2, `POST /api/v2/query`
 * (https://plausible.io/docs/stats-api), with the session's key as its bearer token, so that the
 * screen and the API cannot disagree. These are the parts of its request and answer it uses.
 */
export const METRICS = ['visitors', 'visits', 'pageviews', 'views_per_visit', 'bounce_rate', 'visit_duration'] as const;
export type Metric = (typeof METRICS)[number];

/** A filter in the API's array form: `["is", "visit:country", ["DE"]]`; a search is `contains`, any case. */
export type StatsFilter = ['is', string, string[]] | ['contains', string, string[], { case_sensitive: boolean }];

export interface StatsRequest {
  site_id: string;
  metrics: readonly string[];
  /** A shortcut (`7d`) or a pair of ISO dates or date-times. */
  date_range: string | [string, string];
  dimensions?: string[];
  filters?: StatsFilter[];
  order_by?: Array<[string, 'asc' | 'desc']>;
  pagination?: { limit: number; offset?: number };
  include?: { time_labels?: boolean; partial_time_labels?: boolean; present_index?: boolean; total_rows?: boolean };
}

export interface StatsRow {
  metrics: Array<number | null>;
  dimensions: string[];
}

export interface StatsAnswer {
  results: StatsRow[];
  meta?: { time_labels?: string[]; partial_time_labels?: string[]; present_index?: number | null; total_rows?: number; [key: string]: unknown };
  query?: Record<string, unknown>;
}

export const STATS_PATH = '/api/v2/query';

/**
 * One query with the session's key. The API answers a refusal as Plausible does, `{ "error": "…" }`,
 * which becomes an ApiError carrying that sentence. A 401 (Plausible's answer to a site the key
 * does not hold, too) is shown, not taken for a revoked key: opening the screen checked the key.
 */
export async function stats(request: StatsRequest, signal?: AbortSignal): Promise<StatsAnswer> {
  const current = session();
  if (!current) throw new ApiError({ type: 'about:blank', title: 'Signed out', status: 401, detail: 'sign in first' }, undefined);
  const res = await requestWith(current, 'POST', STATS_PATH, { body: JSON.stringify(request), headers: { 'content-type': 'application/json' }, signal });
  if (res.ok) return (await res.json()) as StatsAnswer;
  let body: { error?: unknown; detail?: unknown; title?: unknown } = {};
  try {
    body = (await res.json()) as typeof body;
  } catch {}
  const detail = typeof body.error === 'string' ? body.error : typeof body.detail === 'string' ? body.detail : `the Stats API answered ${res.status}`;
  throw new ApiError({ type: 'about:blank', title: typeof body.title === 'string' ? body.title : 'Stats API', status: res.status, detail }, undefined);
}
