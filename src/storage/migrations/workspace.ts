import { EVENTS_SHARDING_KEY, SHARD_EVENTS_ENGINE } from './engines';
import { catalogMigrations } from './catalog';
import { trackingPlanMigrations } from './tracking-plans';
import { personFirstLinksMigration, personMigrations } from './persons';
import { visitMigrations, webEventMigrations } from './visits';
import type { Migration, MigrationTarget } from './runner';

/**
 * The table ALTERs of the events go to: `events` itself, or on a cluster the shards' replicated
 * `events_local` (the Distributed `events` holds no data and takes no indexes or settings).
 */
const stored = ({ db, cluster }: MigrationTarget) => `${db}.${cluster ? 'events_local' : 'events'}`;

/** Each workspace database: the `events` table, columns named as in the API. */
export const workspaceMigrations: Migration[] = [
  {
    version: 1,
    name: 'events',
    // Sorted by time first: the default listing and most analytics scan recent time ranges.
    // No partition key, so one insert is one part and a batch is stored all or nothing.
    // Bloom filters let point filters on ids and names skip granules.
    // On a cluster: each shard's replicas hold `events_local`; `events`, which SQL users and the
    // service read and insert through, is a Distributed table over the shards, by person.
    statements: (target) => {
      const { db, dbName, onCluster, cluster } = target;
      const columns = `(
        uuid UUID,
        type LowCardinality(String),
        event String,
        userId String,
        anonymousId String,
        groupId String,
        instanceId String,
        properties String,
        traits String,
        context String,
        timestamp DateTime64(6, 'UTC'),
        parsedAt DateTime64(6, 'UTC'),
        INDEX idx_uuid uuid TYPE bloom_filter GRANULARITY 1,
        INDEX idx_user_id userId TYPE bloom_filter GRANULARITY 1,
        INDEX idx_anonymous_id anonymousId TYPE bloom_filter GRANULARITY 1,
        INDEX idx_event event TYPE bloom_filter GRANULARITY 1
      )`;
      if (!cluster) return [`CREATE TABLE IF NOT EXISTS ${db}.events ${onCluster} ${columns} ENGINE = MergeTree ORDER BY (timestamp, uuid)`];
      return [
        `CREATE TABLE IF NOT EXISTS ${db}.events_local ${onCluster} ${columns} ENGINE = ${SHARD_EVENTS_ENGINE} ORDER BY (timestamp, uuid)`,
        `CREATE TABLE IF NOT EXISTS ${db}.events ${onCluster} AS ${db}.events_local ENGINE = Distributed('${cluster}', '${dbName}', 'events_local', ${EVENTS_SHARDING_KEY})`,
      ];
    },
  },
  {
    version: 2,
    name: 'events_parsed_at_index',
    // Webhook delivery reads events after a point in acceptance order. parsedAt follows insert
    // order, so each part spans a narrow range and a minmax index skips all but the newest.
    statements: (target) => [`ALTER TABLE ${stored(target)} ${target.onCluster} ADD INDEX IF NOT EXISTS idx_parsed_at parsedAt TYPE minmax GRANULARITY 1`],
  },
  {
    version: 3,
    name: 'events_insert_deduplication',
    // An insert whose answer was lost (timeout, dropped connection) is repeated with the same
    // token until it is known to be stored; the table remembers the tokens of its last inserts.
    // Replicated tables keep such a window in Keeper (replicated_deduplication_window).
    statements: ({ db, onCluster, cluster }) =>
      cluster
        ? [`ALTER TABLE ${db}.events_local ${onCluster} MODIFY SETTING replicated_deduplication_window = 1000`]
        : [`ALTER TABLE ${db}.events ${onCluster} MODIFY SETTING non_replicated_deduplication_window = 1000`],
  },
  {
    version: 4,
    name: 'events_message_id',
    // The client's messageId, by which repeats are recognised; the bloom filter serves the
    // look-ups of de-duplication beyond what the service remembers, and filters by it.
    statements: (target) => [
      `ALTER TABLE ${stored(target)} ${target.onCluster} ADD COLUMN IF NOT EXISTS messageId String AFTER type`,
      // The Distributed table needs the column too, to read and insert it.
      ...(target.cluster ? [`ALTER TABLE ${target.db}.events ${target.onCluster} ADD COLUMN IF NOT EXISTS messageId String AFTER type`] : []),
      `ALTER TABLE ${stored(target)} ${target.onCluster} ADD INDEX IF NOT EXISTS idx_message_id messageId TYPE bloom_filter GRANULARITY 1`,
    ],
  },
  ...personMigrations,
  ...visitMigrations,
  personFirstLinksMigration,
  ...catalogMigrations,
  ...trackingPlanMigrations,
  ...webEventMigrations,
];
