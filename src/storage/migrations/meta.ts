import type { Migration } from './runner';

/** The metadata database: workspaces, their keys (and later webhooks), shared by every API process. */
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
];
