import type { Migration } from './runner';
import { MAX_EXAMPLES } from '../../catalog/observations';

/**
 * What a workspace's tracking plan found (docs/governance.md#tracking-plans): `violations` counts
 * violating events per day (of arrival, UTC) and (event, property path, rule kind, expected,
 * actual: a type), summed at merges (read it with GROUP BY), with a few example values (cleared by
 * an erasure, as the catalog's); `quarantine` holds the events a plan in quarantine mode kept
 * apart, as their rows, one per uuid (a repeated messageId is one event), until a replay stores
 * them. A quarantined event is flushed to disk by the engine before its request is answered
 * (`fsync_after_insert`): it is in no ingest log. Its ids are columns, so that an erasure deletes
 * a subject's as it does events. On a cluster both tables are whole on every node, as the catalog.
 */
export const trackingPlanMigrations: Migration[] = [
  {
    version: 10,
    name: 'tracking_plan_violations',
    statements: ({ db, onCluster, cluster, engine }) => [
      `CREATE TABLE IF NOT EXISTS ${db}.violations ${onCluster} (
        day Date,
        event String,
        path String,
        kind LowCardinality(String),
        expected String,
        actual String,
        count SimpleAggregateFunction(sum, UInt64),
        firstSeen SimpleAggregateFunction(min, DateTime64(6, 'UTC')),
        lastSeen SimpleAggregateFunction(max, DateTime64(6, 'UTC')),
        examples SimpleAggregateFunction(groupUniqArrayArray(${MAX_EXAMPLES}), Array(String))
      ) ENGINE = ${engine('AggregatingMergeTree')} ORDER BY (day, event, path, kind, expected, actual)`,
      `CREATE TABLE IF NOT EXISTS ${db}.quarantine ${onCluster} (
        uuid UUID,
        quarantinedAt DateTime64(6, 'UTC'),
        planVersion UInt64,
        event String,
        userId String,
        anonymousId String,
        row String,
        violations String
      ) ENGINE = ${engine('ReplacingMergeTree')} ORDER BY uuid
      SETTINGS fsync_after_insert = 1, ${cluster ? 'replicated_deduplication_window' : 'non_replicated_deduplication_window'} = 1000`,
    ],
  },
];
