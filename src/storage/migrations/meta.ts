import type { Migration } from './runner';

/** The metadata database: workspaces, their keys and webhooks, shared by every API process. */
export const metaMigrations: Migration[] = [
  {
    version: 1,
    name: 'workspaces',
    // ReplacingMergeTree keeps the highest `version` of each workspace and drops rows whose
    // newest version has `isDeleted = 1` when read with FINAL: mutable rows, ClickHouse-style.
    statements: ({ db, onCluster }) => [
      `CREATE TABLE IF NOT EXISTS ${db}.workspaces ${onCluster} (
        workspaceId String,
        name String,
        databaseName String,
        isDefault Bool,
        properties String,
        createdAt DateTime64(6, 'UTC'),
        version UInt64,
        isDeleted UInt8
      ) ENGINE = ReplacingMergeTree(version, isDeleted) ORDER BY workspaceId`,
    ],
  },
  {
    version: 2,
    name: 'api_keys',
    // Only the SHA-256 of a key is stored; a key is looked up by its hash. Revoking a key is a
    // newer version of its row with isDeleted = 1, as for workspaces.
    statements: ({ db, onCluster }) => [
      `CREATE TABLE IF NOT EXISTS ${db}.api_keys ${onCluster} (
        keyHash String,
        workspaceId String,
        kind LowCardinality(String),
        createdAt DateTime64(6, 'UTC'),
        version UInt64,
        isDeleted UInt8
      ) ENGINE = ReplacingMergeTree(version, isDeleted) ORDER BY keyHash`,
    ],
  },
  {
    version: 3,
    name: 'webhooks',
    // The secret signs deliveries, so it is kept as is (it is no key to this service).
    statements: ({ db, onCluster }) => [
      `CREATE TABLE IF NOT EXISTS ${db}.webhooks ${onCluster} (
        uuid String,
        workspaceId String,
        url String,
        enableBatching Bool,
        eventTypes Array(String),
        eventNames Array(String),
        flatten Bool,
        secret String,
        createdAt DateTime64(6, 'UTC'),
        version UInt64,
        isDeleted UInt8
      ) ENGINE = ReplacingMergeTree(version, isDeleted) ORDER BY uuid`,
    ],
  },
  {
    version: 4,
    name: 'webhook_cursors',
    // How far each webhook has delivered, in acceptance order (parsedAt, then uuid).
    statements: ({ db, onCluster }) => [
      `CREATE TABLE IF NOT EXISTS ${db}.webhook_cursors ${onCluster} (
        webhookUuid String,
        parsedAt DateTime64(6, 'UTC'),
        uuid UUID,
        version UInt64
      ) ENGINE = ReplacingMergeTree(version) ORDER BY webhookUuid`,
    ],
  },
  {
    version: 5,
    name: 'webhook_deliveries',
    // Deliveries that failed or are retried beside the queue; each change is a newer version.
    statements: ({ db, onCluster }) => [
      `CREATE TABLE IF NOT EXISTS ${db}.webhook_deliveries ${onCluster} (
        webhookUuid String,
        deliveryId String,
        eventUuids Array(UUID),
        status LowCardinality(String),
        attempts UInt32,
        lastStatusCode UInt16,
        lastError String,
        firstAttemptAt DateTime64(3, 'UTC'),
        lastAttemptAt DateTime64(3, 'UTC'),
        nextAttemptAt DateTime64(3, 'UTC'),
        version UInt64
      ) ENGINE = ReplacingMergeTree(version) ORDER BY (webhookUuid, deliveryId)`,
    ],
  },
  {
    version: 6,
    name: 'workspaces_allowed_origins',
    // The origins whose pages may send with a workspace's public keys; rows written before this
    // migration read as any origin.
    statements: ({ db, onCluster }) => [
      `ALTER TABLE ${db}.workspaces ${onCluster} ADD COLUMN IF NOT EXISTS allowedOrigins Array(String) DEFAULT ['*'] AFTER properties`,
    ],
  },
];
