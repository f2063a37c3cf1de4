/**
 * The shapes the console reads from the public API (docs/api/*.md; the service's TypeBox
 * schemas are the source of truth, served at /docs/json).
 */

export type JsonObject = Record<string, unknown>;

export interface Event {
  uuid: string;
  type: string;
  messageId?: string;
  event?: string;
  userId?: string;
  anonymousId?: string;
  groupId?: string;
  instanceId?: string;
  properties?: JsonObject;
  traits?: JsonObject;
  context?: JsonObject;
  timestamp: string;
  parsedAt: string;
}

export interface Page<T> {
  results: T[];
  limit: number;
  offset: number;
  total: number;
}

export interface Workspace {
  workspaceId: string;
  name: string;
  isDefault: boolean;
  databaseName: string;
  createdAt: string;
  properties?: JsonObject;
  /** Days its events are kept, 0 for ever (docs/api/workspaces.md). */
  retentionDays?: number;
  /** The websites whose visits it holds (Plausible's `domain`, the Stats API's `site_id`). */
  siteDomains?: string[];
  /** The IANA time zone its days start in (docs/api/workspaces.md); UTC when absent. */
  timezone?: string;
}

export interface CreatedWorkspace extends Workspace {
  publicApiKey: string;
  privateApiKey: string;
}

/** `POST /workspaces/{id}/keys`: the new key, shown once, and how many old ones were revoked. */
export interface RotatedKey {
  workspaceId: string;
  kind: 'public' | 'private';
  apiKey: string;
  createdAt: string;
  revokedKeys: number;
}

export interface KeyIdentity {
  kind: 'private' | 'admin';
  workspace: Workspace;
}

export interface Webhook {
  uuid: string;
  url: string;
  enableBatching: boolean;
  createdAt: string;
  eventTypes: string[];
  eventNames: string[];
  flatten: boolean;
}

export interface CreatedWebhook extends Webhook {
  secret: string;
}

export interface Delivery {
  id: string;
  status: 'retrying' | 'failed' | 'succeeded';
  eventUuids: string[];
  attempts: number;
  lastStatusCode: number | null;
  lastError: string;
  firstAttemptAt: string;
  lastAttemptAt: string;
  nextAttemptAt: string | null;
  holdsQueue: boolean;
}

export interface TestDelivery {
  delivered: boolean;
  statusCode: number | null;
  error: string | null;
  ms: number;
  event: Event;
}

export type Row = Record<string, unknown>;

export interface QueriesResult {
  results: Array<{ results: Row[] }>;
}

export const EVENT_TYPES = ['page', 'track', 'identify', 'group', 'screen', 'alias'] as const;

/** Saved insights, dashboards, persons and cohorts (docs/api/dashboards.md, persons.md, cohorts.md). */
export type SavedKind = 'trends' | 'funnels' | 'retention' | 'paths' | 'stickiness' | 'lifecycle' | 'sql';

export interface SavedInsight {
  id: string;
  name: string;
  kind: SavedKind;
  query: unknown;
  display?: JsonObject;
  createdAt: string;
  updatedAt: string;
}

export interface Tile {
  insightId: string;
  x: number;
  y: number;
  w: number;
  h: number;
}

export interface Dashboard {
  id: string;
  name: string;
  tiles: Tile[];
  refreshSeconds?: number;
  dateFrom?: string;
  dateTo?: string;
  createdAt: string;
  updatedAt: string;
}

/** One tile's answer in `GET /dashboards/{id}/results`: its result, or the problem it got. */
export interface TileAnswer {
  insightId: string;
  kind?: SavedKind;
  result?: unknown;
  error?: { title: string; status: number; detail: string; errors?: Array<{ pointer?: string; detail: string }> };
  /** When the answer was asked. */
  computedAt?: string;
  /** Asked with `?stale=true`: a kept answer, and events arrived since. */
  stale?: boolean;
}

export interface Person {
  personId: string;
  userId?: string;
  userIds: string[];
  anonymousIds: string[];
  traits: JsonObject;
  firstSeen: string;
  lastSeen: string;
  eventCount: number;
  /** `$initial_referrer`, `$initial_source`, `$initial_country`, ... ('' where the first event had none). */
  firstTouch: Record<string, string>;
}

export type PropertyOperator = 'eq' | 'neq' | 'in' | 'not_in' | 'contains' | 'not_contains' | 'regex' | 'gt' | 'gte' | 'lt' | 'lte' | 'is_set' | 'is_not_set';

export type CohortFilter =
  | { property: string; source?: 'event' | 'person' | 'group'; operator: PropertyOperator; value?: string | number | boolean | Array<string | number | boolean> }
  | { performed: string; atLeast?: number; withinDays: number };

export interface Cohort {
  id: string;
  name: string;
  filters: CohortFilter[];
  createdAt: string;
  updatedAt: string;
  size: number;
}

/** A group (a company: the `groupId` of events), as GET /groups answers it. */
export interface Group {
  groupId: string;
  traits: JsonObject;
  firstSeen: string;
  lastSeen: string;
  eventCount: number;
  personCount: number;
}
