import type { Migration } from './runner';

/** The metadata database: workspaces, their keys and webhooks, shared by every API process. */
export const metaMigrations: Migration[] = [
  {
    version: 1,
    name: 'workspaces',
    // ReplacingMergeTree keeps the highest `version` of each workspace and drops rows whose
    // newest version has `isDeleted = 1` when read with FINAL: mutable rows, ClickHouse-style.
    statements: ({ db, onCluster, engine }) => [
      `CREATE TABLE IF NOT EXISTS ${db}.workspaces ${onCluster} (
        workspaceId String,
        name String,
        databaseName String,
        isDefault Bool,
        properties String,
        createdAt DateTime64(6, 'UTC'),
        version UInt64,
        isDeleted UInt8
      ) ENGINE = ${engine('ReplacingMergeTree', 'version, isDeleted')} ORDER BY workspaceId`,
    ],
  },
  {
    version: 2,
    name: 'api_keys',
    // Only the SHA-256 of a key is stored; a key is looked up by its hash. Revoking a key is a
    // newer version of its row with isDeleted = 1, as for workspaces.
    statements: ({ db, onCluster, engine }) => [
      `CREATE TABLE IF NOT EXISTS ${db}.api_keys ${onCluster} (
        keyHash String,
        workspaceId String,
        kind LowCardinality(String),
        createdAt DateTime64(6, 'UTC'),
        version UInt64,
        isDeleted UInt8
      ) ENGINE = ${engine('ReplacingMergeTree', 'version, isDeleted')} ORDER BY keyHash`,
    ],
  },
  {
    version: 3,
    name: 'webhooks',
    // The secret signs deliveries, so it is kept as is (it is no key to this service).
    statements: ({ db, onCluster, engine }) => [
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
      ) ENGINE = ${engine('ReplacingMergeTree', 'version, isDeleted')} ORDER BY uuid`,
    ],
  },
  {
    version: 4,
    name: 'webhook_cursors',
    // How far each webhook has delivered, in acceptance order (parsedAt, then uuid).
    statements: ({ db, onCluster, engine }) => [
      `CREATE TABLE IF NOT EXISTS ${db}.webhook_cursors ${onCluster} (
        webhookUuid String,
        parsedAt DateTime64(6, 'UTC'),
        uuid UUID,
        version UInt64
      ) ENGINE = ${engine('ReplacingMergeTree', 'version')} ORDER BY webhookUuid`,
    ],
  },
  {
    version: 5,
    name: 'webhook_deliveries',
    // Deliveries that failed or are retried beside the queue; each change is a newer version.
    statements: ({ db, onCluster, engine }) => [
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
      ) ENGINE = ${engine('ReplacingMergeTree', 'version')} ORDER BY (webhookUuid, deliveryId)`,
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
  {
    version: 7,
    name: 'workspace_retention',
    // Days a workspace keeps its events (0: forever); the table's TTL is made from it.
    statements: ({ db, onCluster }) => [`ALTER TABLE ${db}.workspaces ${onCluster} ADD COLUMN IF NOT EXISTS retentionDays UInt32 DEFAULT 0`],
  },
  {
    version: 8,
    name: 'regulations',
    // Erasure and suppression requests, the audit list of who asked and when; each change of
    // status is a newer version. The subjects are kept so that an interrupted one can resume.
    statements: ({ db, onCluster, engine }) => [
      `CREATE TABLE IF NOT EXISTS ${db}.regulations ${onCluster} (
        id String,
        workspaceId String,
        regulationType LowCardinality(String),
        subjectType LowCardinality(String),
        subjectIds Array(String),
        status LowCardinality(String),
        eventsDeleted UInt64,
        error String,
        requestedByKind LowCardinality(String),
        requestedByKeyId String,
        createdAt DateTime64(6, 'UTC'),
        finishedAt Nullable(DateTime64(6, 'UTC')),
        version UInt64
      ) ENGINE = ${engine('ReplacingMergeTree', 'version')} ORDER BY (workspaceId, id)`,
    ],
  },
  {
    version: 9,
    name: 'suppressions',
    // Subjects whose new events are dropped at collection; un-suppressing writes isDeleted = 1.
    statements: ({ db, onCluster, engine }) => [
      `CREATE TABLE IF NOT EXISTS ${db}.suppressions ${onCluster} (
        workspaceId String,
        subjectType LowCardinality(String),
        subjectId String,
        regulationId String,
        version UInt64,
        isDeleted UInt8
      ) ENGINE = ${engine('ReplacingMergeTree', 'version, isDeleted')} ORDER BY (workspaceId, subjectType, subjectId)`,
    ],
  },
  {
    version: 10,
    name: 'leases',
    // Leases among the processes sharing this ClickHouse (the webhook delivery owner): a log of
    // claims and renewals, read the same way by every process (src/coordination/lease.ts). A
    // day's rows are kept; a holder renews every few seconds, so its latest rows always remain.
    statements: ({ db, onCluster, engine }) => [
      `CREATE TABLE IF NOT EXISTS ${db}.leases ${onCluster} (
        name LowCardinality(String),
        term UInt64,
        holder String,
        claimedAt DateTime64(6, 'UTC'),
        renewedAt DateTime64(6, 'UTC'),
        expiresAt DateTime64(6, 'UTC')
      ) ENGINE = ${engine('MergeTree')} ORDER BY (name, term, holder, renewedAt) TTL toDateTime(renewedAt) + INTERVAL 1 DAY`,
    ],
  },
  {
    version: 11,
    name: 'metadata_changes',
    // One row per change of workspaces and keys, or of webhooks (the scope); the other processes
    // poll a scope's count and re-read only when it moved (src/coordination/change-counter.ts).
    statements: ({ db, onCluster, engine }) => [
      `CREATE TABLE IF NOT EXISTS ${db}.metadata_changes ${onCluster} (
        scope LowCardinality(String),
        version UInt64,
        changedAt DateTime64(6, 'UTC') DEFAULT now64(6)
      ) ENGINE = ${engine('MergeTree')} ORDER BY (scope, version) TTL toDateTime(changedAt) + INTERVAL 1 DAY`,
    ],
  },
  {
    version: 12,
    name: 'cohorts',
    // Saved sets of persons, per workspace: the definition only (membership is computed when
    // used). Versioned as webhooks are; a deleted workspace's cohorts are marked deleted with it.
    statements: ({ db, onCluster, engine }) => [
      `CREATE TABLE IF NOT EXISTS ${db}.cohorts ${onCluster} (
        cohortId String,
        workspaceId String,
        name String,
        filters String,
        createdAt DateTime64(6, 'UTC'),
        updatedAt DateTime64(6, 'UTC'),
        version UInt64,
        isDeleted UInt8
      ) ENGINE = ${engine('ReplacingMergeTree', 'version, isDeleted')} ORDER BY (workspaceId, cohortId)`,
    ],
  },
  {
    version: 13,
    name: 'saved_insights',
    // Insights saved per workspace (a kind's request body, or SQL text, as JSON), versioned as
    // cohorts are; a deleted workspace's are marked deleted with it.
    statements: ({ db, onCluster, engine }) => [
      `CREATE TABLE IF NOT EXISTS ${db}.saved_insights ${onCluster} (
        insightId String,
        workspaceId String,
        name String,
        kind LowCardinality(String),
        query String,
        display Nullable(String),
        createdAt DateTime64(6, 'UTC'),
        updatedAt DateTime64(6, 'UTC'),
        version UInt64,
        isDeleted UInt8
      ) ENGINE = ${engine('ReplacingMergeTree', 'version, isDeleted')} ORDER BY (workspaceId, insightId)`,
    ],
  },
  {
    version: 14,
    name: 'dashboards',
    // Dashboards per workspace: their tiles (saved insights on a grid) as JSON, versioned as cohorts are.
    statements: ({ db, onCluster, engine }) => [
      `CREATE TABLE IF NOT EXISTS ${db}.dashboards ${onCluster} (
        dashboardId String,
        workspaceId String,
        name String,
        tiles String,
        refreshSeconds Nullable(UInt32),
        dateFrom Nullable(String),
        dateTo Nullable(String),
        createdAt DateTime64(6, 'UTC'),
        updatedAt DateTime64(6, 'UTC'),
        version UInt64,
        isDeleted UInt8
      ) ENGINE = ${engine('ReplacingMergeTree', 'version, isDeleted')} ORDER BY (workspaceId, dashboardId)`,
    ],
  },
  {
    version: 15,
    name: 'web_analytics',
    // The site domains whose Plausible events a workspace takes (rows written before read as
    // none), and the daily salts of cookieless visitor ids: one row a day, older ones deleted
    // (src/web-analytics/visitor-salts.ts).
    statements: ({ db, onCluster, engine }) => [
      `ALTER TABLE ${db}.workspaces ${onCluster} ADD COLUMN IF NOT EXISTS siteDomains Array(String) DEFAULT [] AFTER allowedOrigins`,
      `CREATE TABLE IF NOT EXISTS ${db}.visitor_salts ${onCluster} (
        day Date,
        salt String,
        createdAt DateTime64(6, 'UTC')
      ) ENGINE = ${engine('MergeTree')} ORDER BY day`,
    ],
  },
  {
    version: 16,
    name: 'workspace_timezone',
    // The IANA time zone a workspace's days, weeks and months are counted in (the Stats API, and
    // insights that name none); rows written before read as UTC, as every workspace counted then.
    statements: ({ db, onCluster }) => [`ALTER TABLE ${db}.workspaces ${onCluster} ADD COLUMN IF NOT EXISTS timezone String DEFAULT 'UTC' AFTER siteDomains`],
  },
  {
    version: 17,
    name: 'cohorts_include_bots',
    // Whether a cohort counts automated clients (src/events/bots.ts); cohorts saved before read as not.
    statements: ({ db, onCluster }) => [`ALTER TABLE ${db}.cohorts ${onCluster} ADD COLUMN IF NOT EXISTS includeBots Bool DEFAULT false AFTER filters`],
  },
  {
    version: 18,
    name: 'catalog_definitions',
    // The curated side of each workspace's event catalog (src/catalog/definitions.ts): an event's
    // or a property's description, tags, owner, flags and display name, versioned as cohorts are;
    // a deleted workspace's are marked deleted with it.
    statements: ({ db, onCluster, engine }) => [
      `CREATE TABLE IF NOT EXISTS ${db}.catalog_definitions ${onCluster} (
        definitionId String,
        workspaceId String,
        kind LowCardinality(String),
        name String,
        displayName Nullable(String),
        description String,
        tags Array(String),
        owner String,
        verified Bool,
        hidden Bool,
        createdAt DateTime64(6, 'UTC'),
        updatedAt DateTime64(6, 'UTC'),
        version UInt64,
        isDeleted UInt8
      ) ENGINE = ${engine('ReplacingMergeTree', 'version, isDeleted')} ORDER BY (workspaceId, definitionId)`,
    ],
  },
  {
    version: 19,
    name: 'tracking_plans',
    // Each workspace's tracking plans (src/tracking-plans/): every PUT a new row, its version one
    // past the workspace's last; the newest is enforced. A deleted workspace's go with it.
    statements: ({ db, onCluster, engine }) => [
      `CREATE TABLE IF NOT EXISTS ${db}.tracking_plans ${onCluster} (
        workspaceId String,
        version UInt64,
        plan String,
        mode LowCardinality(String),
        sources Map(String, String),
        importedFrom LowCardinality(String),
        announce Bool,
        createdAt DateTime64(6, 'UTC'),
        isDeleted UInt8
      ) ENGINE = ${engine('MergeTree')} ORDER BY (workspaceId, version)`,
    ],
  },
];
