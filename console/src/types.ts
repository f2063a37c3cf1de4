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
}

export interface CreatedWorkspace extends Workspace {
  publicApiKey: string;
  privateApiKey: string;
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
